// The LLVM backend's float32 exp/log/tanh/erf/sigmoid (codegen/llvm/vector_math.cpp) against
// double-precision libm over the whole float range: every 257th bit pattern (normals,
// denormals, both signs), inf, nan, +-0, and every float near the points where the
// functions change branch. The ulp bounds are the ones vector_math.h states.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/ir/ir.h"
#include "compiler/runtime/ndarray.h"

namespace temper {
namespace {

const DataType f32 = DataType::float32();
constexpr int kLanes = 16;

struct MathFunction {
  const char* name;
  std::function<double(double)> reference;
  double max_ulp;
  std::vector<float> branch_points;  // dense sampling around these
};

std::vector<MathFunction> functions() {
  return {
      {"exp", [](double v) { return std::exp(v); }, 1.5, {88.72f, -87.33f, -103.97f, 0.0f, 0.3466f}},
      {"log", [](double v) { return std::log(v); }, 1.0, {1.0f, 1.41421356f, 0.70710678f, 1.17549435e-38f}},
      {"tanh", [](double v) { return std::tanh(v); }, 1.5, {0.625f, -0.625f, 9.0f}},
      {"erf", [](double v) { return std::erf(v); }, 1.5, {0.921875f, -0.921875f, 3.925f, 0.0f}},
      {"sigmoid", [](double v) { return 1.0 / (1.0 + std::exp(-v)); }, 2.5, {-87.33f, 16.6f, 0.0f}},
  };
}

// A vectorized loop (16 lanes) and a scalar one computing y = name(x) over n floats.
std::vector<PrimFunc> kernels(const std::string& name, int64_t n) {
  Buffer x("X", f32, {n}), y("Y", f32, {n});
  Var i("i");
  Expr lanes = ramp(i * kLanes, 1, kLanes);
  Stmt vector = make_for(i, 0, static_cast<int>(n / kLanes), ForKind::Serial,
                         store(y, call_pure(f32.with_lanes(kLanes), name, {load(x, {lanes})}), {lanes}));
  Var j("j");
  Stmt scalar = make_for(j, 0, static_cast<int>(n), ForKind::Serial, store(y, call_pure(f32, name, {load(x, {j})}), {j}));
  return {{name + "_vector", {x, y}, vector}, {name + "_scalar", {x, y}, scalar}};
}

// |got - want| in units of the float spacing at want (denormal spacing below the normals).
double ulp_error(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  float rounded = static_cast<float>(want);
  if (std::isinf(rounded)) return got == rounded ? 0 : INFINITY;
  if (std::isnan(got) || std::isinf(got)) return INFINITY;
  int exponent = std::ilogb(rounded == 0 ? std::numeric_limits<float>::min() : rounded);
  double spacing = std::ldexp(1.0, std::max(exponent, -126) - 23);
  return std::fabs(static_cast<double>(got) - want) / spacing;
}

std::vector<float> sample(const MathFunction& f) {
  std::vector<float> xs;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 257) xs.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()}) {
    xs.push_back(v);
  }
  for (float point : f.branch_points) {
    float v = point, w = point;
    for (int k = 0; k < 20000; ++k) {
      v = std::nextafter(v, INFINITY);
      w = std::nextafter(w, -INFINITY);
      xs.push_back(v);
      xs.push_back(w);
    }
  }
  while (xs.size() % kLanes != 0) xs.push_back(1.0f);
  return xs;
}

TEST(VectorMath, WithinItsUlpBoundOverTheFloatRange) {
  for (const MathFunction& f : functions()) {
    std::vector<float> xs = sample(f);
    int64_t n = static_cast<int64_t>(xs.size());
    std::unique_ptr<Module> module = build_llvm(kernels(f.name, n), Target::parse("llvm -mcpu=native"));
    NDArray x = NDArray::empty({n}, f32), vector = NDArray::empty({n}, f32), scalar = NDArray::empty({n}, f32);
    std::copy(xs.begin(), xs.end(), x.data_as<float>());
    module->get_function(f.name + std::string("_vector"))({&x, &vector});
    module->get_function(f.name + std::string("_scalar"))({&x, &scalar});
    const float* v = vector.data_as<float>();
    const float* s = scalar.data_as<float>();
    double worst = 0;
    float worst_x = 0;
    int64_t differ = 0;
    for (int64_t k = 0; k < n; ++k) {
      double e = ulp_error(v[k], f.reference(static_cast<double>(xs[k])));
      if (e > worst) worst = e, worst_x = xs[k];
      // The vector and scalar forms are the same code: a loop's remainder agrees with its body.
      if (std::bit_cast<uint32_t>(v[k]) != std::bit_cast<uint32_t>(s[k]) && !(std::isnan(v[k]) && std::isnan(s[k]))) {
        ++differ;
      }
    }
    EXPECT_LE(worst, f.max_ulp) << f.name << ": " << worst << " ulp at x = " << worst_x << " (" << n << " inputs)";
    EXPECT_EQ(differ, 0) << f.name << ": scalar and vector results differ";
    std::printf("%-8s max error %.3f ulp over %lld inputs (bound %.1f), worst at x = %.9g\n", f.name, worst,
                static_cast<long long>(n), f.max_ulp, worst_x);
  }
}

TEST(VectorMath, SignsZerosAndNonFiniteInputsFollowLibm) {
  std::vector<float> xs = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -1.0f, 1e-45f, -1e-45f, 200.0f, -200.0f};
  while (xs.size() % kLanes != 0) xs.push_back(0.5f);
  int64_t n = static_cast<int64_t>(xs.size());
  for (const MathFunction& f : functions()) {
    std::unique_ptr<Module> module = build_llvm(kernels(f.name, n), Target::parse("llvm -mcpu=native"));
    NDArray x = NDArray::empty({n}, f32), y = NDArray::empty({n}, f32);
    std::copy(xs.begin(), xs.end(), x.data_as<float>());
    module->get_function(f.name + std::string("_vector"))({&x, &y});
    for (int64_t k = 0; k < 10; ++k) {
      float got = y.data_as<float>()[k];
      double want = f.reference(static_cast<double>(xs[k]));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << f.name << "(" << xs[k] << ") = " << got;
      } else {
        EXPECT_EQ(std::signbit(got), std::signbit(want)) << f.name << "(" << xs[k] << ") = " << got;
        EXPECT_LE(ulp_error(got, want), f.max_ulp) << f.name << "(" << xs[k] << ") = " << got << ", want " << want;
      }
    }
  }
}

TEST(VectorMath, VectorizedLoopsCallNoLibmFunction) {
  for (const MathFunction& f : functions()) {
    std::string ir = emit_llvm_ir(kernels(f.name, 64), Target::parse("llvm -mcpu=native"));
    for (const char* libm : {"@expf", "@logf", "@tanhf", "@erff", "@llvm.exp.", "@llvm.log."}) {
      EXPECT_EQ(ir.find(libm), std::string::npos) << f.name << " calls " << libm;
    }
  }
}

}  // namespace
}  // namespace temper
