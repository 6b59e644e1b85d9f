#include "compiler/runtime/ndarray.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "compiler/ir/error.h"
#include "compiler/runtime/device_api.h"
#include "compiler/runtime/float16.h"

namespace temper {
namespace {

void check_storable(DataType dtype) {
  if (dtype.is_vector() || dtype.is_handle()) {
    throw UserError(str("an NDArray holds scalar elements; ", dtype, " is not one"));
  }
}

// The representable integer range of an integer or bool dtype.
std::pair<int64_t, int64_t> integer_range(DataType t) {
  if (t.is_bool()) return {0, 1};
  if (t.is_uint()) return {0, t.bits() >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << t.bits()) - 1};
  if (t.bits() >= 64) return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  return {-(int64_t{1} << (t.bits() - 1)), (int64_t{1} << (t.bits() - 1)) - 1};
}

std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

}  // namespace

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

NDArray NDArray::empty(std::vector<int64_t> shape, DataType dtype) {
  check_storable(dtype);
  for (int64_t extent : shape) {
    if (extent < 0) throw UserError(str("NDArray shape ", shape_to_string(shape), " has a negative extent"));
  }
  NDArray a;
  a.shape_ = std::move(shape);
  a.dtype_ = dtype;
  DeviceAPI& cpu = cpu_device_api();
  a.data_ = std::shared_ptr<void>(cpu.alloc(a.nbytes()), [&cpu](void* p) { cpu.free(p); });
  return a;
}

NDArray NDArray::zeros(std::vector<int64_t> shape, DataType dtype) {
  NDArray a = empty(std::move(shape), dtype);
  std::memset(a.data(), 0, static_cast<size_t>(a.nbytes()));
  return a;
}

NDArray NDArray::random(std::vector<int64_t> shape, DataType dtype, uint64_t seed, double low, double high) {
  NDArray a = empty(std::move(shape), dtype);
  std::mt19937_64 rng(seed);
  if (dtype.is_float()) {
    std::uniform_real_distribution<double> dist(low, high);
    for (int64_t i = 0; i < a.size(); ++i) a.set(i, dist(rng));
  } else {
    auto [type_min, type_max] = integer_range(dtype);
    int64_t lo = std::max(type_min, static_cast<int64_t>(std::ceil(low)));
    int64_t hi = std::min(type_max, static_cast<int64_t>(std::floor(high)));
    if (lo > hi) throw UserError(str("NDArray::random: no ", dtype, " value lies in [", low, ", ", high, "]"));
    std::uniform_int_distribution<int64_t> dist(lo, hi);
    for (int64_t i = 0; i < a.size(); ++i) a.set(i, static_cast<double>(dist(rng)));
  }
  return a;
}

NDArray NDArray::copy() const {
  NDArray a = empty(shape_, dtype_);
  a.copy_from(*this);
  return a;
}

void NDArray::copy_from(const NDArray& other) {
  if (other.shape_ != shape_ || other.dtype_ != dtype_) {
    throw UserError(str("cannot copy a ", other.dtype_, shape_to_string(other.shape_), " array into a ", dtype_,
                        shape_to_string(shape_), " array"));
  }
  std::memcpy(data(), other.data(), static_cast<size_t>(nbytes()));
}

int64_t NDArray::size() const {
  int64_t n = 1;
  for (int64_t extent : shape_) n *= extent;
  return n;
}

void NDArray::check_element_size(size_t bytes) const {
  if (bytes != static_cast<size_t>(dtype_.bytes())) {
    throw UserError(str("cannot view ", dtype_, " elements as a ", bytes, "-byte type"));
  }
}

double NDArray::get(int64_t i) const {
  const void* p = static_cast<const char*>(data()) + i * dtype_.bytes();
  auto read = [p](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  };
  if (dtype_.is_float()) {
    if (dtype_.bits() == 16) return half_to_float(static_cast<uint16_t>(read(uint16_t{})));
    return dtype_.bits() == 32 ? read(float{}) : read(double{});
  }
  if (dtype_.is_bool()) return read(uint8_t{}) != 0 ? 1.0 : 0.0;
  if (dtype_.is_uint()) {
    switch (dtype_.bits()) {
      case 8:
        return read(uint8_t{});
      case 16:
        return read(uint16_t{});
      case 32:
        return read(uint32_t{});
      default:
        return read(uint64_t{});
    }
  }
  switch (dtype_.bits()) {
    case 8:
      return read(int8_t{});
    case 16:
      return read(int16_t{});
    case 32:
      return read(int32_t{});
    default:
      return read(int64_t{});
  }
}

void NDArray::set(int64_t i, double value) {
  void* p = static_cast<char*>(data()) + i * dtype_.bytes();
  auto write = [p](auto v) { std::memcpy(p, &v, sizeof v); };
  if (dtype_.is_float()) {
    if (dtype_.bits() == 16) return write(float_to_half(static_cast<float>(value)));
    return dtype_.bits() == 32 ? write(static_cast<float>(value)) : write(value);
  }
  if (dtype_.is_bool()) return write(static_cast<uint8_t>(value != 0));
  if (dtype_.is_uint()) {
    switch (dtype_.bits()) {
      case 8:
        return write(static_cast<uint8_t>(value));
      case 16:
        return write(static_cast<uint16_t>(value));
      case 32:
        return write(static_cast<uint32_t>(value));
      default:
        return write(static_cast<uint64_t>(value));
    }
  }
  switch (dtype_.bits()) {
    case 8:
      return write(static_cast<int8_t>(value));
    case 16:
      return write(static_cast<int16_t>(value));
    case 32:
      return write(static_cast<int32_t>(value));
    default:
      return write(static_cast<int64_t>(value));
  }
}

void NDArray::fill(double value) {
  for (int64_t i = 0; i < size(); ++i) set(i, value);
}

TemperTensor NDArray::tensor() const {
  TemperTensor t{};
  t.data = data();
  t.ndim = ndim();
  t.shape = shape_.data();
  t.strides = nullptr;
  t.code = static_cast<uint8_t>(dtype_.code());
  t.bits = static_cast<uint8_t>(dtype_.bits());
  t.lanes = 1;
  t.device_type = TEMPER_DEVICE_CPU;
  t.device_id = 0;
  return t;
}

Comparison compare(const NDArray& actual, const NDArray& expected, double rtol, double atol) {
  if (actual.shape() != expected.shape() || actual.dtype() != expected.dtype()) {
    throw UserError(str("cannot compare a ", actual.dtype(), shape_to_string(actual.shape()), " array with a ",
                        expected.dtype(), shape_to_string(expected.shape()), " array"));
  }
  Comparison c;
  for (int64_t i = 0; i < actual.size(); ++i) {
    double a = actual.get(i);
    double e = expected.get(i);
    bool match = std::isnan(e) ? std::isnan(a) : std::abs(a - e) <= atol + rtol * std::abs(e);
    if (std::isfinite(a) && std::isfinite(e)) c.max_abs_error = std::max(c.max_abs_error, std::abs(a - e));
    if (match) continue;
    if (c.mismatches++ == 0) c.first_mismatch = i;
  }
  if (c.mismatches > 0) {
    c.message =
        str(c.mismatches, " of ", actual.size(), " elements differ; first at ",
            shape_to_string(unflatten(c.first_mismatch, actual.shape())), ": got ", actual.get(c.first_mismatch),
            ", expected ", expected.get(c.first_mismatch), "; max abs error ", c.max_abs_error);
  }
  return c;
}

}  // namespace temper
