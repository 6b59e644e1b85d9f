// The C and LLVM backends compute the same results for the same lowered functions, on
// the same random inputs: bit for bit for integers and bools; for floating point to a few
// units in the last place (both contract multiply-adds into FMAs, not necessarily the
// same ones, which shows in long sums).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "compiler/codegen/c/build_c.h"
#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/runtime/ndarray.h"

namespace temper {
namespace {

const DataType f32 = DataType::float32();
const DataType f16 = DataType::float16();
const DataType f64 = DataType::float64();
const DataType i8 = DataType::int8();
const DataType i32 = DataType::int32();
const DataType u8 = DataType::uint8();

Stmt loop(const std::string& name, int extent, const std::function<Stmt(Var)>& body, ForKind kind = ForKind::Serial) {
  Var v(name);
  return make_for(v, 0, extent, kind, body(v));
}

// A function and the value range of its random inputs.
struct Case {
  PrimFunc func;
  double low = -4;
  double high = 4;
};

std::vector<Case> cases() {
  std::vector<Case> all;
  {  // float arithmetic over two dimensions
    Buffer a("A", f32, {16, 24}), b("B", f32, {16, 24}), c("C", f32, {16, 24});
    Stmt body = loop("i", 16, [&](Var i) {
      return loop("j", 24, [&](Var j) {
        Expr x = load(a, {i * 24 + j}), y = load(b, {i * 24 + j});
        return store(c, (x - y) / (y * y + make_const(f32, 1.0)) + x * make_const(f32, 0.25), {i * 24 + j});
      });
    });
    all.push_back({{"float_arith", {a, b, c}, body}});
  }
  {  // 16-lane vectors: multiply-add, min/max, select on a vector compare
    Buffer a("A", f32, {256}), b("B", f32, {256}), c("C", f32, {256});
    Stmt body = loop("i", 16, [&](Var i) {
      Expr lanes = ramp(i * 16, 1, 16);
      Expr x = load(a, {lanes}), y = load(b, {lanes});
      Expr zero = broadcast(make_const(f32, 0.0), 16);
      return store(c, select(x > zero, x * y + y, max(x, min(y, zero))), {lanes});
    });
    all.push_back({{"vector_ops", {a, b, c}, body}});
  }
  {  // matrix-vector product: parallel rows, a "local" accumulator, a heap temporary
    Buffer a("A", f32, {48, 96}), x("x", f32, {96}), y("y", f32, {48});
    Buffer acc("acc", f32, {1}, "local"), scaled("scaled", f32, {96});
    Stmt scale = loop("k", 96, [&](Var k) { return store(scaled, load(x, {k}) * make_const(f32, 0.5), {k}); });
    Stmt rows = loop(
        "i", 48,
        [&](Var i) {
          Stmt sum = loop("k", 96, [&](Var k) {
            return store(acc, load(acc, {0}) + load(a, {i * 96 + k}) * load(scaled, {k}), {0});
          });
          return allocate(acc, seq({store(acc, make_const(f32, 0.0), {0}), sum, store(y, load(acc, {0}), {i})}));
        },
        ForKind::Parallel);
    all.push_back({{"matvec", {a, x, y}, allocate(scaled, seq({scale, rows}))}});
  }
  {  // integer division of every kind, min/max, int8 arithmetic that wraps
    Buffer a("A", i32, {64}), b("B", i32, {64}), q("Q", i8, {64});
    Buffer out("Out", i32, {7, 64}), wrapped("Wrapped", i8, {64});
    Stmt body = loop("i", 64, [&](Var i) {
      Expr x = load(a, {i}), y = load(b, {i});
      Expr nonzero = select(y == 0, Expr(1), y);
      std::vector<Expr> values = {
          x / nonzero, x % nonzero,  floordiv(x, nonzero), floormod(x, nonzero), floordiv(x, 8) + floormod(x, 8),
          min(x, y),   max(x, y) * 3};
      std::vector<Stmt> stores;
      for (int k = 0; k < 7; ++k) stores.push_back(store(out, values[k], {k * 64 + i}));
      stores.push_back(store(wrapped, load(q, {i}) * make_const(i8, int64_t{3}) + make_const(i8, int64_t{100}), {i}));
      return seq(stores);
    });
    all.push_back({{"integers", {a, b, q, out, wrapped}, body}, -120, 120});
  }
  {  // casts among float16, float32, float64, int8, uint8, int32 and bool
    Buffer h("H", f16, {64}), x("X", f32, {64}), d("D", f64, {64});
    Buffer to_half("to_half", f16, {64}), to_int8("to_int8", i8, {64}), to_uint8("to_uint8", u8, {64});
    Buffer to_double("to_double", f64, {64}), flags("flags", DataType::boolean(), {64}), sum("sum", i32, {64});
    Stmt body = loop("i", 64, [&](Var i) {
      Expr xv = load(x, {i});
      return seq({store(to_half, cast(f16, xv * make_const(f32, 3.0)) + load(h, {i}), {i}),
                  store(to_int8, cast(i8, xv * make_const(f32, 10.0)), {i}),
                  store(to_uint8, cast(u8, cast(i32, xv * make_const(f32, 10.0)) + 128), {i}),
                  store(to_double, cast(f64, xv) * load(d, {i}) + cast(f64, load(h, {i})), {i}),
                  store(flags, xv > cast(f32, load(h, {i})) || load(d, {i}) < make_const(f64, -1.0), {i}),
                  store(sum, cast(i32, load(flags, {i})) + cast(i32, cast(u8, xv + make_const(f32, 5.0))), {i})});
    });
    all.push_back({{"casts", {h, x, d, to_half, to_int8, to_uint8, to_double, flags, sum}, body}});
  }
  {  // float16 vectors, rounded after every operation
    Buffer a("A", f16, {64}), b("B", f16, {64}), c("C", f16, {64});
    Stmt body = loop("i", 4, [&](Var i) {
      Expr lanes = ramp(i * 16, 1, 16);
      Expr x = load(a, {lanes}), y = load(b, {lanes});
      return store(c, (x + y) * (x - y) / (y * y + broadcast(make_const(f16, 1.0), 16)), {lanes});
    });
    all.push_back({{"half_vectors", {a, b, c}, body}});
  }
  {  // math functions, scalar and 8-lane vectors
    Buffer x("X", f32, {64}), out("Out", f32, {12, 64});
    std::vector<std::string> names = {"exp", "tanh", "erf", "sigmoid", "fabs", "floor", "ceil"};
    Stmt body = loop("i", 8, [&](Var i) {
      std::vector<Stmt> stores;
      Expr lanes = ramp(i * 8, 1, 8);
      DataType f32x8 = f32.with_lanes(8);
      Expr v = load(x, {lanes});
      for (size_t k = 0; k < names.size(); ++k) {
        stores.push_back(store(out, call_pure(f32x8, names[k], {v}), {ramp(int(k) * 64 + i * 8, 1, 8)}));
      }
      Expr positive = call_pure(f32x8, "fabs", {v}) + broadcast(make_const(f32, 0.01), 8);
      stores.push_back(store(out, call_pure(f32x8, "log", {positive}), {ramp(7 * 64 + i * 8, 1, 8)}));
      stores.push_back(store(out, call_pure(f32x8, "sqrt", {positive}), {ramp(8 * 64 + i * 8, 1, 8)}));
      stores.push_back(store(out, call_pure(f32x8, "rsqrt", {positive}), {ramp(9 * 64 + i * 8, 1, 8)}));
      Expr scalar = load(x, {i});
      stores.push_back(store(out, call_pure(f32, "pow", {call_pure(f32, "fabs", {scalar}), scalar}), {10 * 64 + i}));
      stores.push_back(store(out, call_pure(f32, "fma", {scalar, scalar, scalar}), {11 * 64 + i}));
      return seq(stores);
    });
    all.push_back({{"math", {x, out}, body}});
  }
  {  // strided gathers and scatters
    Buffer a("A", f32, {128}), c("C", f32, {128});
    Stmt body = loop("i", 8, [&](Var i) {
      return store(c, load(a, {ramp(i, 8, 16)}) * broadcast(cast(f32, i), 16), {ramp(127 - i, -8, 16)});
    });
    all.push_back({{"strided", {a, c}, body}});
  }
  return all;
}

// Random inputs for every parameter (outputs are overwritten or read after being written).
std::vector<NDArray> arguments(const Case& c, uint64_t seed) {
  std::vector<NDArray> args;
  for (const Buffer& b : c.func.params) {
    std::vector<int64_t> shape;
    for (const Expr& extent : b->shape) shape.push_back(*as_const_int(extent));
    args.push_back(NDArray::random(shape, b->dtype, seed++, c.low, c.high));
  }
  return args;
}

TEST(BackendsAgree, OnEveryFunction) {
  std::vector<Case> all = cases();
  std::vector<PrimFunc> funcs;
  for (const Case& c : all) funcs.push_back(c.func);
  std::unique_ptr<Module> llvm = build_llvm(funcs, Target::parse("llvm -mcpu=native"));
  std::unique_ptr<Module> c_module = build_c(funcs, Target::parse("c"));
  for (const Case& c : all) {
    std::vector<NDArray> llvm_args = arguments(c, 100);
    std::vector<NDArray> c_args = arguments(c, 100);
    std::vector<NDArray*> llvm_ptrs, c_ptrs;
    for (size_t k = 0; k < llvm_args.size(); ++k) {
      llvm_ptrs.push_back(&llvm_args[k]);
      c_ptrs.push_back(&c_args[k]);
    }
    llvm->get_function(c.func.name)(llvm_ptrs);
    c_module->get_function(c.func.name)(c_ptrs);
    for (size_t k = 0; k < llvm_args.size(); ++k) {
      const NDArray& from_llvm = llvm_args[k];
      const NDArray& from_c = c_args[k];
      std::string what = c.func.name + " " + c.func.params[k]->name;
      if (!from_llvm.dtype().is_float()) {
        EXPECT_EQ(std::memcmp(from_llvm.data(), from_c.data(), from_llvm.nbytes()), 0) << what;
        continue;
      }
      double rtol = from_llvm.dtype().bits() == 16 ? 1e-3 : 1e-5;
      Comparison agreement = compare(from_llvm, from_c, rtol, rtol);
      EXPECT_TRUE(agreement.ok()) << what << ": " << agreement.message;
    }
  }
}

}  // namespace
}  // namespace temper
