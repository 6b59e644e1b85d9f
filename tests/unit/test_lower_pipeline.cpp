// The whole lowering pipeline: te workloads with hand-built schedules, lowered to the
// code-ready form, checked as text and by the interpreter against the unscheduled
// definition.
#include <gtest/gtest.h>

#include <sstream>

#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/unroll_loops.h"
#include "compiler/te/te.h"
#include "unit/test_lower_builders.h"

namespace temper {
namespace {

using test::block;
using test::expect_same_results;
using test::reduce;
using test::spatial;

LowerOptions verified() {
  LowerOptions o;
  o.verify = true;
  return o;
}

TEST(LowerPipeline, UnscheduledMatmulWithRelu) {
  te::Tensor A = te::placeholder({64, 32}, DataType::float32(), "A");
  te::Tensor B = te::placeholder({32, 16}, DataType::float32(), "B");
  IterVar k = te::reduce_axis({0, 32}, "k");
  te::Tensor C = te::compute(
      {64, 16}, [&](Var i, Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");
  te::Tensor D = te::compute(
      {64, 16}, [&](Var i, Var j) { return max(C(i, j), 0.0f); }, "D");
  PrimFunc f = te::create_prim_func({A, B, D}, "mm_relu");
  PrimFunc g = lower(f, verified());
  EXPECT_EQ(to_string(g),
            "func mm_relu(A: float32[64, 32], B: float32[32, 16], D: float32[64, 16]) {\n"
            "  allocate C: float32[1024] in local\n"
            "  for (i, 0, 64) {\n"
            "    for (j, 0, 16) {\n"
            "      for (k, 0, 32) {\n"
            "        if (k == 0) {\n"
            "          C[i * 16 + j] = 0.0f\n"
            "        }\n"
            "        C[i * 16 + j] = C[i * 16 + j] + A[i * 32 + k] * B[k * 16 + j]\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "  for (i_1, 0, 64) {\n"
            "    for (j_1, 0, 16) {\n"
            "      D[i_1 * 16 + j_1] = max(C[i_1 * 16 + j_1], 0.0f)\n"
            "    }\n"
            "  }\n"
            "}\n");
  for (size_t p = 0; p < f.params.size(); ++p) EXPECT_TRUE(g.params[p].same_as(f.params[p]));
  expect_same_results(f, g);
}

// C = A x B with i split by 4 (outer parallel), j split by 8 (inner vectorized), the
// reduction into a C_local tile written back after it, as cache_write would leave it.
PrimFunc scheduled_matmul(const te::Tensor& A, const te::Tensor& B, const te::Tensor& C) {
  Buffer local("C_local", DataType::float32(), {64, 32});
  Var io("io"), jo("jo"), k("k"), ii("ii"), ji("ji"), ii2("ii"), ji2("ji");
  Var vi("vi"), vj("vj"), vk("vk"), wi("vi"), wj("vj");
  Stmt update = block({"C_local",
                       {spatial(vi, 64), spatial(vj, 32), reduce(vk, 16)},
                       {io * 4 + ii, jo * 8 + ji, k},
                       store(local, load(local, {vi, vj}) + A(vi, vk) * B(vk, vj), {vi, vj}),
                       store(local, 0.0f, {vi, vj})});
  Stmt write_back = block({"C",
                           {spatial(wi, 64), spatial(wj, 32)},
                           {io * 4 + ii2, jo * 8 + ji2},
                           store(C.buffer(), load(local, {wi, wj}), {wi, wj})});
  Stmt reduction = make_for(k, 0, 16, ForKind::Serial,
                            make_for(ii, 0, 4, ForKind::Serial, make_for(ji, 0, 8, ForKind::Vectorized, update)));
  Stmt copy = make_for(ii2, 0, 4, ForKind::Serial, make_for(ji2, 0, 8, ForKind::Vectorized, write_back));
  Stmt body = allocate(
      local, make_for(io, 0, 16, ForKind::Parallel, make_for(jo, 0, 4, ForKind::Serial, seq({reduction, copy}))));
  return PrimFunc{"matmul", {A.buffer(), B.buffer(), C.buffer()}, body};
}

TEST(LowerPipeline, SplitVectorizedParallelMatmulWithLocalAccumulator) {
  te::Tensor A = te::placeholder({64, 16}, DataType::float32(), "A");
  te::Tensor B = te::placeholder({16, 32}, DataType::float32(), "B");
  IterVar k = te::reduce_axis({0, 16}, "k");
  te::Tensor C = te::compute(
      {64, 32}, [&](Var i, Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");
  PrimFunc f = scheduled_matmul(A, B, C);
  PrimFunc g = lower(f, verified());
  EXPECT_EQ(
      to_string(g),
      "func matmul(A: float32[64, 16], B: float32[16, 32], C: float32[64, 32]) {\n"
      "  parallel for (io, 0, 16) {\n"
      "    for (jo, 0, 4) {\n"
      "      allocate C_local: float32[32] in local\n"
      "      for (k, 0, 16) {\n"
      "        for (ii, 0, 4) {\n"
      "          if (k == 0) {\n"
      "            C_local[ramp(ii * 8, 1, 8)] = broadcast(0.0f, 8)\n"
      "          }\n"
      "          C_local[ramp(ii * 8, 1, 8)] = C_local[ramp(ii * 8, 1, 8)] + broadcast(A[io * 64 + ii * 16 + k], 8)"
      " * B[ramp(k * 32 + jo * 8, 1, 8)]\n"
      "        }\n"
      "      }\n"
      "      for (ii_1, 0, 4) {\n"
      "        C[ramp(io * 128 + ii_1 * 32 + jo * 8, 1, 8)] = C_local[ramp(ii_1 * 8, 1, 8)]\n"
      "      }\n"
      "    }\n"
      "  }\n"
      "}\n");
  // The same numbers as the unscheduled definition.
  expect_same_results(te::create_prim_func({A, B, C}, "matmul"), g);
}

TEST(LowerPipeline, ImperfectSplitGetsAGuardFreeMainLoopAndAVectorTail) {
  te::Tensor A = te::placeholder({100}, DataType::float32(), "A");
  te::Tensor B = te::compute(
      {100}, [&](Var i) { return A(i) * 2.0f; }, "B");
  Var io("io"), ii("ii"), vi("vi");
  Stmt s =
      block({"B", {spatial(vi, 100)}, {io * 8 + ii}, store(B.buffer(), A(vi) * 2.0f, {vi}), Stmt(), io * 8 + ii < 100});
  PrimFunc f{"scale",
             {A.buffer(), B.buffer()},
             make_for(io, 0, 13, ForKind::Parallel, make_for(ii, 0, 8, ForKind::Vectorized, s))};
  PrimFunc g = lower(f, verified());
  EXPECT_EQ(to_string(g),
            "func scale(A: float32[100], B: float32[100]) {\n"
            "  parallel for (io, 0, 12) {\n"
            "    B[ramp(io * 8, 1, 8)] = A[ramp(io * 8, 1, 8)] * broadcast(2.0f, 8)\n"
            "  }\n"
            "  B[ramp(96, 1, 4)] = A[ramp(96, 1, 4)] * broadcast(2.0f, 4)\n"
            "}\n");
  expect_same_results(te::create_prim_func({A, B}, "scale"), g);
}

TEST(LowerPipeline, TwoDimensionalTailsWithAutoUnroll) {
  te::Tensor X = te::placeholder({10, 10}, DataType::float32(), "X");
  te::Tensor Y = te::compute(
      {10, 10}, [&](Var i, Var j) { return X(i, j) + 1.0f; }, "Y");
  Var io("io"), jo("jo"), ii("ii"), ji("ji"), vi("vi"), vj("vj");
  Stmt s = block({"Y",
                  {spatial(vi, 10), spatial(vj, 10)},
                  {io * 4 + ii, jo * 4 + ji},
                  store(Y.buffer(), X(vi, vj) + 1.0f, {vi, vj}),
                  Stmt(),
                  io * 4 + ii < 10 && jo * 4 + ji < 10});
  Stmt nest = make_for(
      io, 0, 3, ForKind::Serial,
      make_for(jo, 0, 3, ForKind::Serial, make_for(ii, 0, 4, ForKind::Serial, make_for(ji, 0, 4, ForKind::Serial, s))),
      "", {{kAutoUnrollMaxStep, int64_t{16}}});
  PrimFunc f{"tile", {X.buffer(), Y.buffer()}, nest};
  PrimFunc g = lower(f, verified());
  std::string text = to_string(g);
  EXPECT_EQ(text.find("if ("), std::string::npos) << text;
  EXPECT_EQ(text.find(kAutoUnrollMaxStep), std::string::npos) << text;
  EXPECT_NE(
      text.find("  for (io, 0, 2) {\n    for (jo, 0, 2) {\n      Y[io * 40 + jo * 4] = X[io * 40 + jo * 4] + 1.0f\n"),
      std::string::npos)
      << text;
  expect_same_results(te::create_prim_func({X, Y}, "tile"), g);
}

TEST(LowerPipeline, LogsTheIrAfterEachPassInOrder) {
  te::Tensor A = te::placeholder({4}, DataType::float32(), "A");
  te::Tensor B = te::compute(
      {4}, [&](Var i) { return A(i) + 1.0f; }, "B");
  std::ostringstream log;
  LowerOptions o = verified();
  o.log_passes = true;
  o.log = &log;
  lower(te::create_prim_func({A, B}, "inc"), o);
  std::vector<std::string> passes = {"input",           "lower_blocks",    "plan_allocations", "compact_buffers",
                                     "flatten_buffers", "simplify",        "partition_loops",  "simplify",
                                     "remove_no_op",    "vectorize_loops", "unroll_loops",     "simplify",
                                     "storage_rewrite", "remove_no_op"};
  size_t at = 0;
  for (const std::string& p : passes) {
    at = log.str().find("// after " + p + "\nfunc inc(", at);
    ASSERT_NE(at, std::string::npos) << "no log after " << p << " in\n" << log.str();
    ++at;
  }
}

TEST(LowerPipeline, VerifierRejectsAnInvalidInputByName) {
  Buffer A("A", DataType::float32(), {4});
  Var stray("stray");
  PrimFunc f{"bad", {A}, store(A, 1.0f, {stray})};
  try {
    lower(f, verified());
    FAIL() << "lowering an unbound variable did not fail";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("after pass 'input' in function bad: variable stray is used where no loop"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace temper
