// The LLVM backend's float32 exp/log/tanh/erf/sigmoid (codegen/llvm/vector_math.cpp) against
// double-precision libm over the whole float range: every 257th bit pattern (normals,
// denormals, both signs), inf, nan, +-0, and every float near the points where the
// functions change branch; pow over a grid of bases (every 65537th bit pattern, and dense
// near 1) by exponents (integers, halves, fractions, large ones), and C's special cases.
// The ulp bounds are the ones vector_math.h states.
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

std::vector<PrimFunc> pow_kernels(int64_t n);

TEST(VectorMath, VectorizedLoopsCallNoLibmFunction) {
  for (const MathFunction& f : functions()) {
    std::string ir = emit_llvm_ir(kernels(f.name, 64), Target::parse("llvm -mcpu=native"));
    for (const char* libm : {"@expf", "@logf", "@tanhf", "@erff", "@llvm.exp.", "@llvm.log."}) {
      EXPECT_EQ(ir.find(libm), std::string::npos) << f.name << " calls " << libm;
    }
  }
  std::string ir = emit_llvm_ir(pow_kernels(64), Target::parse("llvm -mcpu=native"));
  for (const char* libm : {"@powf", "@pow(", "@llvm.pow."}) EXPECT_EQ(ir.find(libm), std::string::npos) << "pow calls " << libm;
}

// ---------------------------------------------------------------- pow

constexpr double kPowMaxUlp = 1.0;

// z = pow(x, y) over n pairs: a vectorized loop (16 lanes) and a scalar one.
std::vector<PrimFunc> pow_kernels(int64_t n) {
  Buffer x("X", f32, {n}), y("Y", f32, {n}), z("Z", f32, {n});
  Var i("i");
  Expr lanes = ramp(i * kLanes, 1, kLanes);
  Stmt vector = make_for(i, 0, static_cast<int>(n / kLanes), ForKind::Serial,
                         store(z, call_pure(f32.with_lanes(kLanes), "pow", {load(x, {lanes}), load(y, {lanes})}), {lanes}));
  Var j("j");
  Stmt scalar = make_for(j, 0, static_cast<int>(n), ForKind::Serial,
                         store(z, call_pure(f32, "pow", {load(x, {j}), load(y, {j})}), {j}));
  return {{"pow_vector", {x, y, z}, vector}, {"pow_scalar", {x, y, z}, scalar}};
}

// The vector and scalar results of pow over the pairs (xs[k], ys[k]).
std::pair<std::vector<float>, std::vector<float>> run_pow(std::vector<float> xs, std::vector<float> ys) {
  while (xs.size() % kLanes != 0) xs.push_back(1.5f), ys.push_back(2.0f);
  int64_t n = static_cast<int64_t>(xs.size());
  std::unique_ptr<Module> module = build_llvm(pow_kernels(n), Target::parse("llvm -mcpu=native"));
  NDArray x = NDArray::empty({n}, f32), y = NDArray::empty({n}, f32);
  NDArray vector = NDArray::empty({n}, f32), scalar = NDArray::empty({n}, f32);
  std::copy(xs.begin(), xs.end(), x.data_as<float>());
  std::copy(ys.begin(), ys.end(), y.data_as<float>());
  module->get_function("pow_vector")({&x, &y, &vector});
  module->get_function("pow_scalar")({&x, &y, &scalar});
  return {{vector.data_as<float>(), vector.data_as<float>() + n}, {scalar.data_as<float>(), scalar.data_as<float>() + n}};
}

TEST(VectorMath, PowWithinItsUlpBoundOverAGridOfBasesAndExponents) {
  std::vector<float> bases;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 65537) bases.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  for (float v = 0.5f; v < 2.0f; v = std::nextafter(v, INFINITY) + 3e-6f) bases.push_back(v);
  std::vector<float> exponents = {0.5f, -0.5f, 1.0f, -1.0f, 2.0f, -2.0f, 3.0f, -3.0f, 0.33333334f, 1.5f, 2.5f, -7.25f,
                                  10.0f, -20.0f, 37.5f, 100.0f, -100.0f, 1e-3f, -1e-3f, 0.1f, 1000.0f, -4096.5f};
  std::vector<float> xs, ys;
  for (float base : bases) {
    for (float e : exponents) {
      xs.push_back(base);
      ys.push_back(e);
    }
  }
  auto [vector, scalar] = run_pow(xs, ys);
  double worst = 0;
  float worst_x = 0, worst_y = 0;
  int64_t differ = 0;
  for (size_t k = 0; k < xs.size(); ++k) {
    double e = ulp_error(vector[k], std::pow(static_cast<double>(xs[k]), static_cast<double>(ys[k])));
    if (e > worst) worst = e, worst_x = xs[k], worst_y = ys[k];
    if (std::bit_cast<uint32_t>(vector[k]) != std::bit_cast<uint32_t>(scalar[k]) &&
        !(std::isnan(vector[k]) && std::isnan(scalar[k]))) {
      ++differ;
    }
  }
  EXPECT_LE(worst, kPowMaxUlp) << worst << " ulp at pow(" << worst_x << ", " << worst_y << ")";
  EXPECT_EQ(differ, 0) << "scalar and vector results differ";
  std::printf("pow      max error %.3f ulp over %zu pairs (bound %.1f), worst at pow(%.9g, %.9g)\n", worst, xs.size(),
              kPowMaxUlp, worst_x, worst_y);
}

TEST(VectorMath, PowSpecialCasesFollowC) {
  const float inf = INFINITY, nan = NAN;
  // (x, y, expected) from C's Annex F.
  struct Case {
    float x, y, want;
  };
  std::vector<Case> cases = {
      {nan, 0.0f, 1.0f},    {nan, -0.0f, 1.0f},   {1.0f, nan, 1.0f},    {1.0f, inf, 1.0f},     {-1.0f, inf, 1.0f},
      {-1.0f, -inf, 1.0f},  {0.5f, inf, 0.0f},    {2.0f, inf, inf},     {0.5f, -inf, inf},     {2.0f, -inf, 0.0f},
      {0.0f, 3.0f, 0.0f},   {-0.0f, 3.0f, -0.0f}, {-0.0f, 2.0f, 0.0f},  {-0.0f, -3.0f, -inf},  {-0.0f, -2.0f, inf},
      {0.0f, -1.5f, inf},   {-0.0f, 0.5f, 0.0f},  {inf, 2.0f, inf},     {inf, -2.0f, 0.0f},    {-inf, 3.0f, -inf},
      {-inf, 2.0f, inf},    {-inf, -3.0f, -0.0f}, {-2.0f, 3.0f, -8.0f}, {-2.0f, 2.0f, 4.0f},   {-2.0f, 0.5f, nan},
      {-8.0f, -1.0f, -0.125f}, {nan, 1.0f, nan},  {2.0f, nan, nan},     {2.0f, 128.0f, inf},   {2.0f, -151.0f, 0.0f},
      {2.0f, -149.0f, 1e-45f}, {-3.0f, 1e30f, inf},
  };
  std::vector<float> xs, ys;
  for (const Case& c : cases) xs.push_back(c.x), ys.push_back(c.y);
  std::vector<float> got = run_pow(xs, ys).first;
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    if (std::isnan(c.want)) {
      EXPECT_TRUE(std::isnan(got[k])) << "pow(" << c.x << ", " << c.y << ") = " << got[k];
    } else {
      EXPECT_EQ(got[k], c.want) << "pow(" << c.x << ", " << c.y << ")";
      EXPECT_EQ(std::signbit(got[k]), std::signbit(c.want)) << "pow(" << c.x << ", " << c.y << ") = " << got[k];
    }
  }
}

}  // namespace
}  // namespace temper
