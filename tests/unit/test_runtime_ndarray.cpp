// NDArrays, float16 conversion, comparison, PackedFunc and loading libraries.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compiler/ir/error.h"
#include "compiler/runtime/float16.h"
#include "compiler/runtime/module.h"
#include "compiler/runtime/ndarray.h"
#include "compiler/runtime/shared_library_module.h"

namespace temper {
namespace {

TEST(Float16, ConvertsExactlyRepresentableValues) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);               // the largest half
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // the smallest subnormal
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  for (uint32_t bits = 0; bits < 0x7c00; ++bits) {
    ASSERT_EQ(float_to_half(half_to_float(static_cast<uint16_t>(bits))), bits) << bits;
  }
}

TEST(Float16, RoundsToNearestEvenAndOverflowsToInfinity) {
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // halfway, to even
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // halfway, to even (up)
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -26)), 0x0000);  // below half the smallest subnormal
}

TEST(NDArray, RandomIsDeterministicAndInRange) {
  NDArray a = NDArray::random({4, 5}, DataType::float32(), 7, -2, 3);
  NDArray b = NDArray::random({4, 5}, DataType::float32(), 7, -2, 3);
  EXPECT_TRUE(compare(a, b, 0, 0).ok());
  for (int64_t i = 0; i < a.size(); ++i) {
    EXPECT_GE(a.get(i), -2);
    EXPECT_LT(a.get(i), 3);
  }
  NDArray q = NDArray::random({1000}, DataType::int8(), 1, -1000, 1000);
  double lowest = 0, highest = 0;
  for (int64_t i = 0; i < q.size(); ++i) {
    lowest = std::min(lowest, q.get(i));
    highest = std::max(highest, q.get(i));
  }
  EXPECT_GE(lowest, -128);
  EXPECT_LE(highest, 127);
  EXPECT_THROW(NDArray::random({1}, DataType::uint8(), 1, -5, -1), UserError);
}

TEST(NDArray, HoldsEveryScalarTypeAlignedAndCopiesDeeply) {
  for (DataType t : {DataType::float16(), DataType::float32(), DataType::float64(), DataType::int8(), DataType::int16(),
                     DataType::int32(), DataType::int64(), DataType::uint8(), DataType::boolean()}) {
    NDArray a = NDArray::zeros({3, 7}, t);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
    EXPECT_EQ(a.nbytes(), 21 * t.bytes());
    double value = t.is_bool() ? 1 : (t.is_uint() ? 5 : -4);
    a.set(20, value);
    NDArray b = a.copy();
    a.set(20, 0);
    EXPECT_EQ(b.get(20), value) << t;
    EXPECT_NE(a.data(), b.data());
  }
  NDArray shared = NDArray::zeros({2}, DataType::int32());
  NDArray alias = shared;
  alias.set(1, 9);
  EXPECT_EQ(shared.get(1), 9);  // copies of the handle share the data
  EXPECT_EQ(shared.data_as<int32_t>()[1], 9);
  EXPECT_THROW(shared.data_as<double>(), UserError);
}

TEST(NDArray, TensorViewDescribesTheArray) {
  NDArray a = NDArray::zeros({2, 3}, DataType::uint8());
  TemperTensor t = a.tensor();
  EXPECT_EQ(t.data, a.data());
  EXPECT_EQ(t.ndim, 2);
  EXPECT_EQ(t.shape[0], 2);
  EXPECT_EQ(t.shape[1], 3);
  EXPECT_EQ(t.strides, nullptr);
  EXPECT_EQ(t.code, TEMPER_DTYPE_UINT);
  EXPECT_EQ(t.bits, 8);
  EXPECT_EQ(t.lanes, 1);
  EXPECT_EQ(t.device_type, TEMPER_DEVICE_CPU);
}

TEST(NDArray, CompareReportsTheFirstMismatch) {
  NDArray expected = NDArray::zeros({2, 3}, DataType::float32());
  NDArray actual = expected.copy();
  actual.set(4, 0.5);
  actual.set(5, 1e-7);
  Comparison c = compare(actual, expected, 1e-5, 1e-6);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.first_mismatch, 4);
  EXPECT_EQ(c.message, "1 of 6 elements differ; first at [1, 1]: got 0.5, expected 0; max abs error 0.5");
  expected.set(0, std::nan(""));
  EXPECT_FALSE(compare(actual, expected).ok());
  actual.set(0, std::nan(""));
  EXPECT_EQ(compare(actual, expected).mismatches, 1);
  EXPECT_THROW(compare(actual, NDArray::zeros({6}, DataType::float32())), UserError);
}

int32_t double_first(const TemperTensor* args, int32_t num_args) {
  if (num_args != 1) {
    temper_set_last_error("double_first: expected 1 argument");
    return -1;
  }
  static_cast<float*>(args[0].data)[0] *= 2;
  return 0;
}

TEST(PackedFunc, CallsAndTurnsFailuresIntoUserErrors) {
  PackedFunc f("double_first", double_first, nullptr);
  NDArray a = NDArray::zeros({1}, DataType::float32());
  a.set(0, 1.5);
  f({&a});
  EXPECT_EQ(a.get(0), 3.0);
  try {
    f({&a, &a});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "double_first: expected 1 argument");
  }
  NDArray undefined;
  EXPECT_THROW(f({&undefined}), UserError);
}

TEST(SharedLibraryModule, MissingLibraryIsAUserErrorNamingIt) {
  try {
    load_shared_library("/nonexistent/module.so");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot load the compiled library /nonexistent/module.so"), std::string::npos);
  }
}

}  // namespace
}  // namespace temper
