// Host n-dimensional arrays: the data compiled functions run on in tests, the measurer
// and the graph executor. An NDArray is a shared handle: copies share the data (copy()
// makes a deep copy). The data is 64-byte aligned (what generated code assumes of its
// parameters), compact and row-major; bool elements take one byte.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/type.h"
#include "compiler/runtime/c_runtime_api.h"

namespace temper {

class NDArray {
 public:
  NDArray() = default;

  // Uninitialised elements.
  static NDArray empty(std::vector<int64_t> shape, DataType dtype);
  static NDArray zeros(std::vector<int64_t> shape, DataType dtype);
  // Uniform in [low, high) for floats, integers in [low, high] (clamped to the type);
  // the same seed gives the same array.
  static NDArray random(std::vector<int64_t> shape, DataType dtype, uint64_t seed = 0, double low = -1.0,
                        double high = 1.0);

  NDArray copy() const;
  // Copies other's elements into this array; shapes and dtypes must agree.
  void copy_from(const NDArray& other);

  bool defined() const { return data_ != nullptr; }
  const std::vector<int64_t>& shape() const { return shape_; }
  DataType dtype() const { return dtype_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t size() const;
  int64_t nbytes() const { return size() * dtype_.bytes(); }
  void* data() const { return data_.get(); }
  // The data as T*; T must have the element's size (uint16_t for float16, bool for bool).
  template <typename T>
  T* data_as() const {
    check_element_size(sizeof(T));
    return static_cast<T*>(data());
  }

  // Element access by flat (row-major) index, converting through double.
  double get(int64_t flat_index) const;
  void set(int64_t flat_index, double value);
  void fill(double value);

  // A view for the calling convention, valid while this array (or a copy of the handle) lives.
  TemperTensor tensor() const;

 private:
  void check_element_size(size_t bytes) const;

  std::vector<int64_t> shape_;
  DataType dtype_;
  std::shared_ptr<void> data_;
};

// How actual differs from expected, elementwise: |a - e| <= atol + rtol * |e| passes,
// NaN matches only NaN. Throws UserError when shapes or dtypes differ.
struct Comparison {
  int64_t mismatches = 0;
  int64_t first_mismatch = -1;  // flat index
  double max_abs_error = 0;
  // "3 of 1024 elements differ; first at [2, 5]: got 1.5, expected 1.25; max abs error 0.25"
  std::string message;
  bool ok() const { return mismatches == 0; }
};

Comparison compare(const NDArray& actual, const NDArray& expected, double rtol = 1e-5, double atol = 1e-6);

std::string shape_to_string(const std::vector<int64_t>& shape);

}  // namespace temper
