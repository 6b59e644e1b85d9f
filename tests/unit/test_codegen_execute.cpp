// Lowered IR built by hand, compiled by each backend (LLVM JIT and C), run on NDArrays and
// checked against references computed here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <span>

#include <sys/mman.h>
#include <unistd.h>

#include "compiler/codegen/c/build_c.h"
#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/ir/ir.h"
#include "compiler/runtime/float16.h"
#include "compiler/runtime/ndarray.h"

// An extern function the tests' IR calls: y[i] += a * x[i].
extern "C" int32_t temper_test_saxpy(float* y, const float* x, float a, int32_t n) {
  for (int32_t i = 0; i < n; ++i) y[i] += a * x[i];
  return 0;
}

namespace temper {
namespace {

const DataType f32 = DataType::float32();
const DataType f16 = DataType::float16();
const DataType i32 = DataType::int32();

enum class Backend { LLVM, C };

class Execute : public ::testing::TestWithParam<Backend> {
 protected:
  std::unique_ptr<Module> build(const std::vector<PrimFunc>& funcs) {
    if (GetParam() == Backend::LLVM) return build_llvm(funcs, Target::parse("llvm -mcpu=native"));
    return build_c(funcs, Target::parse("c"));
  }
  PackedFunc build_one(const PrimFunc& f) { return build({f})->get_function(f.name); }
};

Expr f32_const(double v) {
  return make_const(f32, v);
}

// for v in [0, extent): body(v)
Stmt loop(const std::string& name, int64_t extent, const std::function<Stmt(Var)>& body,
          ForKind kind = ForKind::Serial) {
  Var v(name);
  return make_for(v, 0, static_cast<int>(extent), kind, body(v));
}

TEST_P(Execute, ScalarElementwiseAddOverTwoDimensions) {
  Buffer a("A", f32, {8, 16}), b("B", f32, {8, 16}), c("C", f32, {8, 16});
  Stmt body = loop("i", 8, [&](Var i) {
    return loop("j", 16, [&](Var j) {
      Expr index = i * 16 + j;
      return store(c, load(a, {index}) + load(b, {index}), {index});
    });
  });
  PackedFunc add = build_one({"add", {a, b, c}, body});
  NDArray x = NDArray::random({8, 16}, f32, 1), y = NDArray::random({8, 16}, f32, 2), z = NDArray::zeros({8, 16}, f32);
  add({&x, &y, &z});
  for (int64_t k = 0; k < z.size(); ++k) EXPECT_EQ(z.get(k), static_cast<float>(x.get(k) + y.get(k))) << k;
}

TEST_P(Execute, VectorizedLoopWithRampIndexOf16Lanes) {
  Buffer a("A", f32, {128}), b("B", f32, {128}), c("C", f32, {128});
  Stmt body = loop("i", 8, [&](Var i) {
    Expr lanes = ramp(i * 16, 1, 16);
    return store(c, load(a, {lanes}) * load(b, {lanes}) + broadcast(f32_const(0.5), 16), {lanes});
  });
  PackedFunc fma = build_one({"muladd", {a, b, c}, body});
  NDArray x = NDArray::random({128}, f32, 3), y = NDArray::random({128}, f32, 4), z = NDArray::zeros({128}, f32);
  fma({&x, &y, &z});
  NDArray expected = NDArray::empty({128}, f32);
  for (int64_t k = 0; k < 128; ++k) expected.set(k, x.get(k) * y.get(k) + 0.5);
  Comparison result = compare(z, expected, 1e-6, 1e-6);
  EXPECT_TRUE(result.ok()) << result.message;
}

TEST_P(Execute, ParallelLoopWritesEveryIteration) {
  // scale = 3; for i in parallel [5, 1005): C[i - 5] = A[i - 5] * scale + float(i)
  Buffer a("A", f32, {1000}), c("C", f32, {1000});
  Var scale("scale", f32);
  Var i("i");
  Stmt store_row = store(c, load(a, {i - 5}) * scale + cast(f32, i), {i - 5});
  Stmt body = let_stmt(scale, f32_const(3.0), make_for(i, 5, 1000, ForKind::Parallel, store_row));
  PackedFunc f = build_one({"parallel_rows", {a, c}, body});
  NDArray x = NDArray::random({1000}, f32, 5), z = NDArray::zeros({1000}, f32);
  f({&x, &z});
  for (int64_t k = 0; k < 1000; ++k) {
    ASSERT_NEAR(z.get(k), x.get(k) * 3.0 + static_cast<double>(k + 5), 1e-4) << k;
  }
}

TEST_P(Execute, ReductionWithLocalAccumulator) {
  // y[i] = sum_k A[i, k] * x[k], rows in parallel, the sum in a "local" accumulator.
  constexpr int M = 64, K = 100;
  Buffer a("A", f32, {M, K}), x("x", f32, {K}), y("y", f32, {M});
  Buffer acc("acc", f32, {1}, "local");
  Stmt body = loop(
      "i", M,
      [&](Var i) {
        Stmt accumulate =
            loop("k", K, [&](Var k) { return store(acc, load(acc, {0}) + load(a, {i * K + k}) * load(x, {k}), {0}); });
        return allocate(acc, seq({store(acc, f32_const(0.0), {0}), accumulate, store(y, load(acc, {0}), {i})}));
      },
      ForKind::Parallel);
  PackedFunc matvec = build_one({"matvec", {a, x, y}, body});
  NDArray av = NDArray::random({M, K}, f32, 6), xv = NDArray::random({K}, f32, 7), yv = NDArray::zeros({M}, f32);
  matvec({&av, &xv, &yv});
  NDArray expected = NDArray::empty({M}, f32);
  for (int i = 0; i < M; ++i) {
    double sum = 0;
    for (int k = 0; k < K; ++k) sum += av.get(i * K + k) * xv.get(k);
    expected.set(i, sum);
  }
  Comparison result = compare(yv, expected, 1e-4, 1e-5);
  EXPECT_TRUE(result.ok()) << result.message;
}

TEST_P(Execute, CastsBetweenFloat16Int8Uint8AndBool) {
  constexpr int N = 64;
  Buffer h("H", f16, {N}), q("Q", DataType::int8(), {N}), x("X", f32, {N});
  Buffer widened("widened", f32, {N}), halved("halved", f16, {N}), truncated("truncated", DataType::int8(), {N});
  Buffer shifted("shifted", DataType::uint8(), {N}), positive("positive", DataType::boolean(), {N});
  Buffer positive_as_int("positive_as_int", i32, {N});
  Stmt body = loop("i", N, [&](Var i) {
    return seq({
        store(widened, cast(f32, load(h, {i})) + cast(f32, load(q, {i})), {i}),
        store(halved, cast(f16, load(x, {i}) * f32_const(0.5)), {i}),
        store(truncated, cast(DataType::int8(), load(x, {i})), {i}),
        store(shifted, cast(DataType::uint8(), cast(i32, load(q, {i})) + 128), {i}),
        store(positive, load(x, {i}) > f32_const(0.0), {i}),
        store(positive_as_int, cast(i32, load(positive, {i})) * 7, {i}),
    });
  });
  PackedFunc f = build_one({"casts", {h, q, x, widened, halved, truncated, shifted, positive, positive_as_int}, body});
  NDArray hv = NDArray::random({N}, f16, 8, -4, 4), qv = NDArray::random({N}, DataType::int8(), 9, -128, 127);
  NDArray xv = NDArray::random({N}, f32, 10, -100, 100);
  NDArray wv = NDArray::empty({N}, f32), halfv = NDArray::empty({N}, f16), tv = NDArray::empty({N}, DataType::int8());
  NDArray sv = NDArray::empty({N}, DataType::uint8()), pv = NDArray::empty({N}, DataType::boolean());
  NDArray piv = NDArray::empty({N}, i32);
  f({&hv, &qv, &xv, &wv, &halfv, &tv, &sv, &pv, &piv});
  for (int k = 0; k < N; ++k) {
    float xk = static_cast<float>(xv.get(k));
    EXPECT_EQ(wv.get(k), static_cast<float>(hv.get(k)) + static_cast<float>(qv.get(k))) << k;
    EXPECT_EQ(halfv.data_as<uint16_t>()[k], float_to_half(xk * 0.5f)) << k;
    EXPECT_EQ(tv.get(k), static_cast<double>(static_cast<int8_t>(xk))) << k;
    EXPECT_EQ(sv.get(k), qv.get(k) + 128) << k;
    EXPECT_EQ(pv.get(k), xk > 0 ? 1 : 0) << k;
    EXPECT_EQ(piv.get(k), xk > 0 ? 7 : 0) << k;
  }
}

TEST_P(Execute, Float16VectorArithmeticRoundsEveryOperation) {
  Buffer a("A", f16, {32}), b("B", f16, {32}), c("C", f16, {32});
  Stmt body = loop("i", 2, [&](Var i) {
    Expr lanes = ramp(i * 16, 1, 16);
    return store(c, load(a, {lanes}) * load(b, {lanes}) - load(a, {lanes}), {lanes});
  });
  PackedFunc f = build_one({"half_math", {a, b, c}, body});
  NDArray x = NDArray::random({32}, f16, 11, -8, 8), y = NDArray::random({32}, f16, 12, -8, 8);
  NDArray z = NDArray::empty({32}, f16);
  f({&x, &y, &z});
  auto round_half = [](float v) { return half_to_float(float_to_half(v)); };
  for (int k = 0; k < 32; ++k) {
    float product = round_half(static_cast<float>(x.get(k)) * static_cast<float>(y.get(k)));
    // One rounding per operation, or the fused product-difference: both are correct float16.
    float unfused = round_half(product - static_cast<float>(x.get(k)));
    float fused =
        round_half(std::fma(static_cast<float>(x.get(k)), static_cast<float>(y.get(k)), -static_cast<float>(x.get(k))));
    float got = static_cast<float>(z.get(k));
    EXPECT_TRUE(got == unfused || got == fused) << k << ": " << got << " vs " << unfused;
  }
}

struct MathCase {
  const char* name;
  std::function<double(double)> reference;
  double low, high;
};

TEST_P(Execute, MathCallsMatchLibmForScalarsAndVectors) {
  std::vector<MathCase> cases = {
      {"exp", [](double v) { return std::exp(v); }, -5, 5},
      {"log", [](double v) { return std::log(v); }, 0.01, 10},
      {"sqrt", [](double v) { return std::sqrt(v); }, 0, 10},
      {"rsqrt", [](double v) { return 1 / std::sqrt(v); }, 0.01, 10},
      {"tanh", [](double v) { return std::tanh(v); }, -4, 4},
      {"erf", [](double v) { return std::erf(v); }, -3, 3},
      {"sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }, -8, 8},
      {"fabs", [](double v) { return std::fabs(v); }, -5, 5},
      {"floor", [](double v) { return std::floor(v); }, -5, 5},
      {"ceil", [](double v) { return std::ceil(v); }, -5, 5},
  };
  constexpr int N = 32;
  std::vector<PrimFunc> funcs;
  for (const MathCase& m : cases) {
    Buffer x("X", f32, {N}), y("Y", f32, {N}), yv("Yv", f32, {N});
    Stmt scalar = loop("i", N, [&](Var i) { return store(y, call_pure(f32, m.name, {load(x, {i})}), {i}); });
    Stmt vector = loop("i", N / 8, [&](Var i) {
      Expr lanes = ramp(i * 8, 1, 8);
      return store(yv, call_pure(f32.with_lanes(8), m.name, {load(x, {lanes})}), {lanes});
    });
    funcs.push_back({std::string("math_") + m.name, {x, y, yv}, seq({scalar, vector})});
  }
  Buffer x("X", f32, {N}), e("E", f32, {N}), y("Y", f32, {N});
  funcs.push_back({"math_pow", {x, e, y}, loop("i", N, [&](Var i) {
                     return store(y, call_pure(f32, "pow", {load(x, {i}), load(e, {i})}), {i});
                   })});
  std::unique_ptr<Module> module = build(funcs);
  for (const MathCase& m : cases) {
    NDArray xv = NDArray::random({N}, f32, 13, m.low, m.high);
    NDArray scalar = NDArray::empty({N}, f32), vector = NDArray::empty({N}, f32), expected = NDArray::empty({N}, f32);
    module->get_function(std::string("math_") + m.name)({&xv, &scalar, &vector});
    for (int k = 0; k < N; ++k) expected.set(k, m.reference(static_cast<float>(xv.get(k))));
    Comparison s = compare(scalar, expected, 2e-6, 1e-7);
    Comparison v = compare(vector, expected, 2e-6, 1e-7);
    EXPECT_TRUE(s.ok()) << m.name << " (scalar): " << s.message;
    EXPECT_TRUE(v.ok()) << m.name << " (vector): " << v.message;
  }
  NDArray xv = NDArray::random({N}, f32, 14, 0.1, 3), ev = NDArray::random({N}, f32, 15, -2, 2);
  NDArray yv = NDArray::empty({N}, f32), expected = NDArray::empty({N}, f32);
  module->get_function("math_pow")({&xv, &ev, &yv});
  for (int k = 0; k < N; ++k) expected.set(k, std::pow(static_cast<float>(xv.get(k)), static_cast<float>(ev.get(k))));
  Comparison p = compare(yv, expected, 2e-6, 1e-7);
  EXPECT_TRUE(p.ok()) << p.message;
}

TEST_P(Execute, ExternCallReceivesElementPointers) {
  // temper_test_saxpy(&Y[16], &X[0], 2, 32): Y[16 + k] += 2 * X[k]
  Buffer x("X", f32, {64}), y("Y", f32, {64});
  Expr call = call_extern(i32, "temper_test_saxpy",
                          {call_intrinsic(DataType::handle(), "address_of", {load(y, {16})}),
                           call_intrinsic(DataType::handle(), "address_of", {load(x, {0})}), f32_const(2.0), Expr(32)});
  PackedFunc f = build_one({"call_saxpy", {x, y}, evaluate(call)});
  NDArray xv = NDArray::random({64}, f32, 16), yv = NDArray::random({64}, f32, 17);
  NDArray before = yv.copy();
  f({&xv, &yv});
  for (int k = 0; k < 64; ++k) {
    double expected = k >= 16 && k < 48 ? before.get(k) + 2.0 * xv.get(k - 16) : before.get(k);
    EXPECT_FLOAT_EQ(yv.get(k), expected) << k;
  }
}

TEST_P(Execute, MicroKernelCallAccumulatesATile) {
  // temper_ukernel_sgemm_6x16(&C[0], &A[0], &B[0], k = 4, lda = 4, ldb = 16, ldc = 16): C += A B.
  Buffer a("A", f32, {6, 4}), b("B", f32, {4, 16}), c("C", f32, {6, 16});
  auto address = [](const Buffer& buffer) {
    return call_intrinsic(DataType::handle(), "address_of", {load(buffer, {0})});
  };
  Expr call = call_extern(i32, "temper_ukernel_sgemm_6x16",
                          {address(c), address(a), address(b), Expr(4), Expr(4), Expr(16), Expr(16)});
  PackedFunc f = build_one({"tile", {a, b, c}, evaluate(call)});
  NDArray av = NDArray::random({6, 4}, f32, 27), bv = NDArray::random({4, 16}, f32, 28);
  NDArray cv = NDArray::random({6, 16}, f32, 29);
  NDArray expected = cv.copy();
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 16; ++j) {
      double sum = expected.get(i * 16 + j);
      for (int p = 0; p < 4; ++p) sum += av.get(i * 4 + p) * bv.get(p * 16 + j);
      expected.set(i * 16 + j, sum);
    }
  }
  f({&av, &bv, &cv});
  Comparison result = compare(cv, expected, 1e-5, 1e-6);
  EXPECT_TRUE(result.ok()) << result.message;
}

TEST_P(Execute, IntegerDivisionTruncatesAndFloorDivisionFloors) {
  constexpr int N = 64;
  Buffer x("X", i32, {N});
  std::vector<Buffer> outs;
  for (const char* name : {"div3", "mod3", "floordiv3", "floormod3", "floordiv4", "floormod4", "floordivneg3"}) {
    outs.emplace_back(name, i32, std::vector<Expr>{N});
  }
  Stmt body = loop("i", N, [&](Var i) {
    Expr v = load(x, {i});
    return seq({store(outs[0], v / 3, {i}), store(outs[1], v % 3, {i}), store(outs[2], floordiv(v, 3), {i}),
                store(outs[3], floormod(v, 3), {i}), store(outs[4], floordiv(v, 4), {i}),
                store(outs[5], floormod(v, 4), {i}), store(outs[6], floordiv(v, -3), {i})});
  });
  std::vector<Buffer> params = {x};
  params.insert(params.end(), outs.begin(), outs.end());
  PackedFunc f = build_one({"division", params, body});
  NDArray xv = NDArray::random({N}, i32, 18, -50, 50);
  std::vector<NDArray> results;
  std::vector<NDArray*> args = {&xv};
  for (int k = 0; k < 7; ++k) results.push_back(NDArray::empty({N}, i32));
  for (NDArray& r : results) args.push_back(&r);
  f(args);
  auto floor_div = [](int64_t a, int64_t b) { return static_cast<int64_t>(std::floor(static_cast<double>(a) / b)); };
  for (int k = 0; k < N; ++k) {
    int64_t v = static_cast<int64_t>(xv.get(k));
    EXPECT_EQ(results[0].get(k), v / 3) << v;
    EXPECT_EQ(results[1].get(k), v % 3) << v;
    EXPECT_EQ(results[2].get(k), floor_div(v, 3)) << v;
    EXPECT_EQ(results[3].get(k), v - 3 * floor_div(v, 3)) << v;
    EXPECT_EQ(results[4].get(k), floor_div(v, 4)) << v;
    EXPECT_EQ(results[5].get(k), v - 4 * floor_div(v, 4)) << v;
    EXPECT_EQ(results[6].get(k), floor_div(v, -3)) << v;
  }
}

TEST_P(Execute, IfThenElseTakesOneBranch) {
  // C[i] = A[i] for even i, -A[i] for odd i; C[0] = 100 when A[0] > 0.
  Buffer a("A", f32, {16}), c("C", f32, {16});
  Stmt body = loop("i", 16, [&](Var i) {
    return if_then_else(floormod(i, 2) == 0, store(c, load(a, {i}), {i}), store(c, -load(a, {i}), {i}));
  });
  Stmt flag = if_then_else(load(a, {0}) > f32_const(0.0), store(c, f32_const(100.0), {0}));
  PackedFunc f = build_one({"branches", {a, c}, seq({body, flag})});
  NDArray av = NDArray::random({16}, f32, 26), cv = NDArray::zeros({16}, f32);
  av.set(0, 0.25);
  f({&av, &cv});
  EXPECT_EQ(cv.get(0), 100.0);
  for (int k = 1; k < 16; ++k) EXPECT_EQ(cv.get(k), k % 2 == 0 ? av.get(k) : -av.get(k)) << k;
}

TEST_P(Execute, OneVarOrBufferBoundTwiceIsTwoBindings) {
  // Copies of a statement (as unrolling makes) bind the same Var and allocate the same buffer again.
  Var t("t");
  Buffer out("Out", i32, {4}), tmp("tmp", i32, {1}, "local");
  auto copy = [&](int value, int slot) {
    return let_stmt(t, Expr(value), allocate(tmp, seq({store(tmp, t * 10, {0}), store(out, load(tmp, {0}), {slot})})));
  };
  // let t = 1 in { let t = t + 5 in Out[2] = t; Out[3] = t }: the inner binding hides the outer one.
  Stmt nested = let_stmt(t, Expr(1), seq({let_stmt(t, t + 5, store(out, t, {2})), store(out, t, {3})}));
  PackedFunc f = build_one({"twice", {out}, seq({copy(1, 0), copy(2, 1), nested})});
  NDArray outv = NDArray::zeros({4}, i32);
  f({&outv});
  EXPECT_EQ(outv.get(0), 10);
  EXPECT_EQ(outv.get(1), 20);
  EXPECT_EQ(outv.get(2), 6);
  EXPECT_EQ(outv.get(3), 1);
}

TEST_P(Execute, GatherScatterSelectMinMaxAndLet) {
  // Y[ramp(16 i, 2, 8)] = max(min(X[ramp(i, 4, 8)], 0.5), -0.5), and
  // R[8 i .. 8 i + 8] = let v = X[...] in select(v > 0, v, 0.1 * v)  (a leaky ReLU)
  Buffer x("X", f32, {64}), y("Y", f32, {64}), r("R", f32, {64});
  Var v("v", f32.with_lanes(8));
  Stmt body = loop("i", 4, [&](Var i) {
    Expr gathered = load(x, {ramp(i, 4, 8)});
    Expr clamped = max(min(gathered, broadcast(f32_const(0.5), 8)), broadcast(f32_const(-0.5), 8));
    Expr contiguous = ramp(i * 8, 1, 8);
    Expr relu =
        let(v, load(x, {contiguous}), select(v > broadcast(f32_const(0.0), 8), v, broadcast(f32_const(0.1), 8) * v));
    return seq({store(y, clamped, {ramp(i * 16, 2, 8)}), store(r, relu, {contiguous})});
  });
  PackedFunc f = build_one({"gather_scatter", {x, y, r}, body});
  NDArray xv = NDArray::random({64}, f32, 19), yv = NDArray::zeros({64}, f32), rv = NDArray::zeros({64}, f32);
  f({&xv, &yv, &rv});
  for (int i = 0; i < 4; ++i) {
    for (int lane = 0; lane < 8; ++lane) {
      float g = static_cast<float>(xv.get(i + 4 * lane));
      EXPECT_EQ(yv.get(16 * i + 2 * lane), std::max(std::min(g, 0.5f), -0.5f));
      float c = static_cast<float>(xv.get(8 * i + lane));
      EXPECT_FLOAT_EQ(rv.get(8 * i + lane), c > 0 ? c : 0.1f * c);
    }
  }
  for (int k = 1; k < 64; k += 2) EXPECT_EQ(yv.get(k), 0.0) << "odd elements are not written";
}

// Y[16 i + lane] = X[off + s (16 i + lane)] for s = 2 and 3: a load by a small constant
// stride, which the LLVM backend makes one masked contiguous load and a shuffle. The last
// element read is X's last, and X ends exactly at a page that may not be read, so a load
// past the last element it needs would crash.
TEST_P(Execute, StridedLoadsReadNothingPastTheirLastElement) {
  const int64_t page = sysconf(_SC_PAGESIZE);
  for (int64_t stride : {2, 3}) {
    const int64_t span = 31 * stride + 1;         // from the first element read to the last
    const int64_t n = (span + 15) / 16 * 16;      // whole 64-byte lines: X starts aligned
    const int64_t off = n - span;
    Buffer x("X", f32, {n}), y("Y", f32, {32});
    Stmt body = loop("i", 2, [&](Var i) {
      return store(y, load(x, {ramp(i * (16 * stride) + off, stride, 16)}), {ramp(i * 16, 1, 16)});
    });
    PackedFunc f = build_one({"strided" + std::to_string(stride), {x, y}, body});
    char* region = static_cast<char*>(
        mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(region, MAP_FAILED);
    ASSERT_EQ(mprotect(region + page, page, PROT_NONE), 0);
    float* xs = reinterpret_cast<float*>(region + page) - n;
    for (int64_t k = 0; k < n; ++k) xs[k] = static_cast<float>(k);
    NDArray out = NDArray::zeros({32}, f32);
    int64_t x_shape[] = {n};
    TemperTensor args[2] = {out.tensor(), out.tensor()};
    args[0].data = xs;
    args[0].shape = x_shape;
    f(std::span<const TemperTensor>(args, 2));
    for (int64_t k = 0; k < 32; ++k) {
      EXPECT_EQ(out.get(k), static_cast<double>(off + k * stride)) << "stride " << stride << ", element " << k;
    }
    munmap(region, 2 * page);
  }
}

TEST_P(Execute, VectorStoreReadingItsOwnBufferReadsAllLanesFirst) {
  // A[ramp(1, 1, 8)] = A[ramp(0, 1, 8)]: a shift by one, as one vector operation.
  Buffer a("A", f32, {9});
  PackedFunc f = build_one({"shift", {a}, store(a, load(a, {ramp(0, 1, 8)}), {ramp(1, 1, 8)})});
  NDArray av = NDArray::random({9}, f32, 20);
  NDArray before = av.copy();
  f({&av});
  for (int k = 1; k < 9; ++k) EXPECT_EQ(av.get(k), before.get(k - 1)) << k;
}

TEST_P(Execute, HeapAllocatedTemporary) {
  // 4096 floats (16 KiB) is beyond the stack limit of a "global" buffer: temper_alloc.
  constexpr int N = 4096;
  Buffer a("A", f32, {N}), c("C", f32, {N}), tmp("tmp", f32, {N});
  Stmt fill = loop("i", N, [&](Var i) { return store(tmp, load(a, {i}) * f32_const(2.0), {i}); });
  Stmt reverse = loop("i", N, [&](Var i) { return store(c, load(tmp, {N - 1 - i}), {i}); });
  PackedFunc f = build_one({"reverse_double", {a, c}, allocate(tmp, seq({fill, reverse}))});
  NDArray av = NDArray::random({N}, f32, 21), cv = NDArray::zeros({N}, f32);
  f({&av, &cv});
  for (int k = 0; k < N; ++k) ASSERT_EQ(cv.get(k), static_cast<float>(av.get(N - 1 - k) * 2)) << k;
}

TEST_P(Execute, SymbolicShapesBindFromArguments) {
  // A: [n, 4], B: [n * 4]; B[k] = A[k] + 1 for k < 4 n.
  Var n("n");
  Buffer a("A", f32, {n, 4}), b("B", f32, {n * 4});
  Var k("k");
  Stmt body = make_for(k, 0, n * 4, ForKind::Parallel, store(b, load(a, {k}) + f32_const(1.0), {k}));
  PackedFunc f = build_one({"dynamic", {a, b}, body});
  for (int64_t rows : {1, 3, 10}) {
    NDArray av = NDArray::random({rows, 4}, f32, 22), bv = NDArray::zeros({rows * 4}, f32);
    f({&av, &bv});
    for (int64_t e = 0; e < rows * 4; ++e) ASSERT_EQ(bv.get(e), static_cast<float>(av.get(e) + 1)) << rows;
  }
  NDArray av = NDArray::random({3, 4}, f32, 23), wrong = NDArray::zeros({13}, f32);
  try {
    f({&av, &wrong});
    FAIL() << "a B of 13 elements for an A of 3 rows was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("dynamic: argument 1 (B): expected shape [12], got [13]"), std::string::npos)
        << e.what();
  }
}

TEST_P(Execute, AllocationFailureInParallelBodyReportsOutOfMemory) {
  // X: [n, 0] takes no memory however large n is; each iteration allocates n Mi floats.
  Var n("n", DataType::int64());
  Buffer x("X", f32, {n, 0}), out("Out", f32, {4});
  Buffer huge("huge", f32, {n * int64_t{1 << 20}});
  Var i("i");
  Stmt body = make_for(i, 0, 4, ForKind::Parallel,
                       allocate(huge, seq({store(huge, f32_const(1.0), {cast(DataType::int64(), i)}),
                                           store(out, load(huge, {cast(DataType::int64(), i)}), {i})})));
  PackedFunc f = build_one({"too_big", {x, out}, body});
  NDArray small_x = NDArray::empty({2, 0}, f32), outv = NDArray::zeros({4}, f32);
  f({&small_x, &outv});
  for (int k = 0; k < 4; ++k) EXPECT_EQ(outv.get(k), 1.0);
  NDArray huge_x = NDArray::empty({int64_t{1} << 40, 0}, f32);
  try {
    f({&huge_x, &outv});
    FAIL() << "a 4 PiB allocation succeeded";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
}

TEST_P(Execute, ArgumentChecksNameTheArgument) {
  Buffer a("A", f32, {64, 16}), b("B", f32, {16}), c("C", f32, {64, 16});
  Stmt body = loop("i", 64, [&](Var i) {
    return loop("j", 16, [&](Var j) { return store(c, load(a, {i * 16 + j}) * load(b, {j}), {i * 16 + j}); });
  });
  PackedFunc f = build_one({"scale_rows", {a, b, c}, body});
  NDArray av = NDArray::random({64, 16}, f32, 24), bv = NDArray::random({16}, f32, 25);
  NDArray cv = NDArray::zeros({64, 16}, f32);
  f({&av, &bv, &cv});  // the right arguments pass

  auto error_of = [&](const std::vector<NDArray*>& args) -> std::string {
    try {
      f(args);
    } catch (const UserError& e) {
      return e.what();
    }
    return "no error";
  };
  NDArray narrow = NDArray::zeros({64, 15}, f32);
  EXPECT_EQ(error_of({&av, &bv, &narrow}), "scale_rows: argument 2 (C): expected shape [64, 16], got [64, 15]");
  NDArray ints = NDArray::zeros({16}, i32);
  EXPECT_EQ(error_of({&av, &ints, &cv}), "scale_rows: argument 1 (B): expected dtype float32, got int32");
  NDArray flat = NDArray::zeros({1024}, f32);
  EXPECT_EQ(error_of({&flat, &bv, &cv}), "scale_rows: argument 0 (A): expected 2 dimensions, got 1");
  EXPECT_EQ(error_of({&av, &bv}), "scale_rows: expected 3 arguments, got 2");

  std::vector<TemperTensor> tensors = {av.tensor(), bv.tensor(), cv.tensor()};
  const int64_t transposed_strides[] = {1, 64};
  tensors[0].strides = transposed_strides;
  try {
    f(std::span<const TemperTensor>(tensors));
    FAIL() << "a transposed view was accepted";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "scale_rows: argument 0 (A): expected a compact row-major tensor, got strides [1, 64] for shape "
                 "[64, 16]");
  }
  tensors[0].strides = nullptr;
  tensors[2].data = static_cast<char*>(tensors[2].data) + 4;
  try {
    f(std::span<const TemperTensor>(tensors));
    FAIL() << "a misaligned pointer was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("argument 2 (C): the data pointer"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("is not 64-byte aligned"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Execute, ::testing::Values(Backend::LLVM, Backend::C),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return info.param == Backend::LLVM ? "LLVM" : "C";
                         });

}  // namespace
}  // namespace temper
