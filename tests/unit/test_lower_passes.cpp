// The lowering passes one at a time, on small IR: printed output against expected
// text, and the interpreter's results before and after.
#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/lower/compact_buffers.h"
#include "compiler/lower/flatten_buffers.h"
#include "compiler/lower/lower_blocks.h"
#include "compiler/lower/plan_allocations.h"
#include "compiler/lower/remove_no_op.h"
#include "compiler/lower/simplify.h"
#include "compiler/lower/storage_rewrite.h"
#include "compiler/te/te.h"
#include "unit/test_lower_builders.h"
#include "unit/test_schedule_workloads.h"

namespace temper {
namespace {

using test::block;
using test::expect_same_results;
using test::reduce;
using test::spatial;

TEST(LowerBlocks, ReductionInitRunsOnTheFirstReduceIteration) {
  PrimFunc f = testing::matmul(8, 8, 4);
  PrimFunc g = lower_blocks(f);
  EXPECT_EQ(to_string(g),
            "func matmul(A: float32[8, 4], B: float32[4, 8], C: float32[8, 8]) {\n"
            "  for (i, 0, 8) {\n"
            "    for (j, 0, 8) {\n"
            "      for (k, 0, 4) {\n"
            "        if (k == 0) {\n"
            "          C[i, j] = 0.0f\n"
            "        }\n"
            "        C[i, j] = C[i, j] + A[i, k] * B[k, j]\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "}\n");
  verify(g, "lower_blocks");
  expect_same_results(f, g);
}

TEST(LowerBlocks, PredicateBecomesIfAndAllocBuffersBecomeAllocates) {
  Buffer A("A", DataType::float32(), {10});
  Buffer S("S", DataType::float32(), {1});
  Buffer T("T", DataType::float32(), {1});
  Var io("io"), ii("ii"), r0("r0"), r1("r1"), vi("vi"), vr0("vr0"), vr1("vr1");
  // S[0] = sum over i < 10, j: A[i] * j, with the i loop split by 4 (a tail predicate)
  // and a scratch buffer T in the block.
  Stmt body =
      seq({store(T, load(A, {vi}) * cast(DataType::float32(), vr1), {0}), store(S, load(S, {0}) + load(T, {0}), {0})});
  Stmt s = block(
      {"S", {reduce(vi, 10), reduce(vr1, 3)}, {io * 4 + ii, r1}, body, store(S, 0.0f, {0}), io * 4 + ii < 10, {T}});
  PrimFunc f{
      "f",
      {A, S},
      make_for(io, 0, 3, ForKind::Serial, make_for(ii, 0, 4, ForKind::Serial, make_for(r1, 0, 3, ForKind::Serial, s)))};
  PrimFunc g = lower_blocks(f);
  EXPECT_EQ(to_string(g),
            "func f(A: float32[10], S: float32[1]) {\n"
            "  for (io, 0, 3) {\n"
            "    for (ii, 0, 4) {\n"
            "      for (r1, 0, 3) {\n"
            "        if (io * 4 + ii < 10) {\n"
            "          allocate T: float32[1]\n"
            "          if (io * 4 + ii == 0 && r1 == 0) {\n"
            "            S[0] = 0.0f\n"
            "          }\n"
            "          T[0] = A[io * 4 + ii] * float32(r1)\n"
            "          S[0] = S[0] + T[0]\n"
            "        }\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "}\n");
  verify(g, "lower_blocks");
  expect_same_results(f, g);
}

// An intermediate used only inside loop io moves into it; one used in two loop nests
// under jo goes to jo's body; a vectorized loop never holds an allocation; an unused
// one disappears.
TEST(PlanAllocations, MovesEachAllocationToTheLowestCommonLoop) {
  Buffer A("A", DataType::float32(), {4, 8});
  Buffer B("B", DataType::float32(), {4, 8});
  Buffer T("T", DataType::float32(), {4, 8});
  Buffer U("U", DataType::float32(), {8});
  Buffer unused("unused", DataType::float32(), {8});
  Var io("io"), jo("jo"), j1("j"), j2("j"), v("v");
  Stmt produce = make_for(j1, 0, 4, ForKind::Serial, store(T, load(A, {io, jo * 4 + j1}) * 2.0f, {io, jo * 4 + j1}));
  Stmt consume = make_for(j2, 0, 4, ForKind::Serial, store(B, load(T, {io, jo * 4 + j2}) + 1.0f, {io, jo * 4 + j2}));
  Stmt vec =
      make_for(v, 0, 8, ForKind::Vectorized, seq({store(U, load(A, {io, v}), {v}), store(B, load(U, {v}), {io, v})}));
  Stmt body =
      make_for(io, 0, 4, ForKind::Serial, seq({make_for(jo, 0, 2, ForKind::Serial, seq({produce, consume})), vec}));
  PrimFunc f{"f", {A, B}, allocate(T, allocate(U, allocate(unused, body)))};
  PrimFunc g = plan_allocations(f);
  EXPECT_EQ(to_string(g),
            "func f(A: float32[4, 8], B: float32[4, 8]) {\n"
            "  for (io, 0, 4) {\n"
            "    allocate U: float32[8]\n"
            "    for (jo, 0, 2) {\n"
            "      allocate T: float32[4, 8]\n"
            "      for (j, 0, 4) {\n"
            "        T[io, jo * 4 + j] = A[io, jo * 4 + j] * 2.0f\n"
            "      }\n"
            "      for (j_1, 0, 4) {\n"
            "        B[io, jo * 4 + j_1] = T[io, jo * 4 + j_1] + 1.0f\n"
            "      }\n"
            "    }\n"
            "    vectorized for (v, 0, 8) {\n"
            "      U[v] = A[io, v]\n"
            "      B[io, v] = U[v]\n"
            "    }\n"
            "  }\n"
            "}\n");
  verify(g, "plan_allocations");
  expect_same_results(f, g);
}

TEST(CompactBuffers, ShrinksToTheRegionAccessedUnderTheAllocation) {
  Buffer A("A", DataType::float32(), {16, 16});
  Buffer B("B", DataType::float32(), {16, 16});
  Buffer T("T", DataType::float32(), {16, 16});
  Var io("io"), jo("jo"), i("i"), j("j"), i2("i"), j2("j");
  // Per (io, jo) tile: T holds A's 4x4 tile plus one row of halo below.
  Stmt produce = make_for(i, 0, 5, ForKind::Serial,
                          make_for(j, 0, 4, ForKind::Serial,
                                   store(T, load(A, {min(io * 4 + i, 15), jo * 4 + j}), {io * 4 + i, jo * 4 + j})));
  Stmt consume =
      make_for(i2, 0, 4, ForKind::Serial,
               make_for(j2, 0, 4, ForKind::Serial,
                        store(B, load(T, {io * 4 + i2, jo * 4 + j2}) + load(T, {io * 4 + i2 + 1, jo * 4 + j2}),
                              {io * 4 + i2, jo * 4 + j2})));
  Stmt body =
      make_for(io, 0, 3, ForKind::Serial, make_for(jo, 0, 4, ForKind::Serial, allocate(T, seq({produce, consume}))));
  PrimFunc f{"f", {A, B}, body};
  PrimFunc g = compact_buffers(f);
  EXPECT_EQ(to_string(g),
            "func f(A: float32[16, 16], B: float32[16, 16]) {\n"
            "  for (io, 0, 3) {\n"
            "    for (jo, 0, 4) {\n"
            "      allocate T: float32[5, 4]\n"
            "      for (i, 0, 5) {\n"
            "        for (j, 0, 4) {\n"
            "          T[i, j] = A[min(io * 4 + i, 15), jo * 4 + j]\n"
            "        }\n"
            "      }\n"
            "      for (i_1, 0, 4) {\n"
            "        for (j_1, 0, 4) {\n"
            "          B[io * 4 + i_1, jo * 4 + j_1] = T[i_1, j_1] + T[i_1 + 1, j_1]\n"
            "        }\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "}\n");
  verify(g, "compact_buffers");
  expect_same_results(f, g);
}

TEST(CompactBuffers, KeepsDimensionsItCannotBound) {
  Buffer A("A", DataType::int32(), {8});
  Buffer B("B", DataType::float32(), {8, 8});
  Buffer T("T", DataType::float32(), {8, 8});
  Var io("io"), j("j");
  // Dimension 0 is indexed by data (unbounded): it keeps its extent. Dimension 1 has
  // offsets io and io*2 that differ: its region is the constant [0, 3] over all io.
  Stmt s = make_for(
      io, 0, 2, ForKind::Serial,
      allocate(T,
               make_for(j, 0, 2, ForKind::Serial,
                        seq({store(T, 1.0f, {load(A, {io}), io + j}), store(T, 2.0f, {load(A, {io}), io * 2 + j})}))));
  PrimFunc f{"f", {A, B}, s};
  PrimFunc g = compact_buffers(f);
  EXPECT_EQ(to_string(g),
            "func f(A: int32[8], B: float32[8, 8]) {\n"
            "  for (io, 0, 2) {\n"
            "    allocate T: float32[8, 4]\n"
            "    for (j, 0, 2) {\n"
            "      T[A[io], io + j] = 1.0f\n"
            "      T[A[io], io * 2 + j] = 2.0f\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(FlattenBuffers, RowMajorOffsetsAndFlatAllocations) {
  Buffer A("A", DataType::float32(), {2, 3, 4});
  Buffer S("S", DataType::float32(), {});
  Buffer T("T", DataType::float32(), {3, 4});
  Var i("i"), j("j"), k("k");
  Stmt body = allocate(T, make_for(i, 0, 2, ForKind::Serial,
                                   make_for(j, 0, 3, ForKind::Serial,
                                            make_for(k, 0, 4, ForKind::Serial,
                                                     seq({store(T, load(A, {i, j, k}), {j, k}),
                                                          store(S, load(S, {}) + load(T, {j, k}), {})})))));
  PrimFunc f{"f", {A, S}, body};
  PrimFunc g = flatten_buffers(f);
  EXPECT_EQ(to_string(g),
            "func f(A: float32[2, 3, 4], S: float32[]) {\n"
            "  allocate T: float32[12]\n"
            "  for (i, 0, 2) {\n"
            "    for (j, 0, 3) {\n"
            "      for (k, 0, 4) {\n"
            "        T[j * 4 + k] = A[i * 12 + j * 4 + k]\n"
            "        S[0] = S[0] + T[j * 4 + k]\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "}\n");
  EXPECT_TRUE(g.params[0].same_as(f.params[0]));
  verify_lowered(g, "flatten_buffers");
  expect_same_results(f, g);
}

TEST(SimplifyPass, UsesLoopRangesAndBranchConditions) {
  Buffer A("A", DataType::float32(), {64});
  Var i("i"), j("j"), u("u");
  Stmt inner = seq({if_then_else(i * 8 + j < 64, store(A, 1.0f, {floordiv(i * 8 + j, 8) * 8 + floormod(j, 8)})),
                    if_then_else(j < 4, if_then_else(j < 6, store(A, 2.0f, {i * 8 + j}), store(A, 3.0f, {0})))});
  Stmt body =
      make_for(i, 0, 8, ForKind::Serial, make_for(j, 0, 8, ForKind::Serial, make_for(u, 0, 1, ForKind::Serial, inner)));
  PrimFunc f{"f", {A}, body};
  PrimFunc g = simplify(f);
  EXPECT_EQ(to_string(g),
            "func f(A: float32[64]) {\n"
            "  for (i, 0, 8) {\n"
            "    for (j, 0, 8) {\n"
            "      A[i * 8 + j] = 1.0f\n"
            "      if (j < 4) {\n"
            "        A[i * 8 + j] = 2.0f\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "}\n");
  expect_same_results(f, g);
}

TEST(SimplifyPass, ElseBranchKnowsTheConditionIsFalse) {
  Buffer A("A", DataType::float32(), {8});
  Var i("i");
  Stmt s = make_for(
      i, 0, 8, ForKind::Serial,
      if_then_else(i == 0, store(A, 0.0f, {i}), if_then_else(i == 0, store(A, 1.0f, {i}), store(A, 2.0f, {i}))));
  PrimFunc g = simplify(PrimFunc{"f", {A}, s});
  EXPECT_EQ(to_string(g.body),
            "for (i, 0, 8) {\n"
            "  if (i == 0) {\n"
            "    A[i] = 0.0f\n"
            "  } else {\n"
            "    A[i] = 2.0f\n"
            "  }\n"
            "}\n");
}

TEST(RemoveNoOp, DropsStatementsWithoutEffect) {
  Buffer A("A", DataType::float32(), {8});
  Buffer T("T", DataType::float32(), {8});
  Var i("i"), j("j");
  Stmt body = seq({make_for(i, 0, 8, ForKind::Serial, store(A, load(A, {i}), {i})),
                   allocate(T, make_for(j, 0, 8, ForKind::Serial, evaluate(Expr(j) + 1))),
                   if_then_else(load(A, {0}) > 0.0f, evaluate(0), store(A, 1.0f, {1})),
                   evaluate(call_extern(DataType::int32(), "side_effect", {}))});
  PrimFunc g = remove_no_op(PrimFunc{"f", {A}, body});
  EXPECT_EQ(to_string(g.body),
            "if (!(A[0] > 0.0f)) {\n"
            "  A[1] = 1.0f\n"
            "}\n"
            "extern side_effect()\n");
}

// A chain of large intermediates: stage 3 reuses stage 1's buffer; a small one goes local.
TEST(StorageRewrite, SharesBuffersWhoseUsesDoNotOverlapAndPromotesSmallOnes) {
  te::Tensor A = te::placeholder({64, 128}, DataType::float32(), "A");
  te::Tensor B1 = te::compute(
      {64, 128}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B1");
  te::Tensor B2 = te::compute(
      {64, 128}, [&](Var i, Var j) { return B1(i, j) * 2.0f; }, "B2");
  te::Tensor B3 = te::compute(
      {64, 128}, [&](Var i, Var j) { return B2(i, j) - 1.0f; }, "B3");
  te::Tensor S = te::compute(
      {4}, [&](Var i) { return B3(i, 0) * 3.0f; }, "S");
  te::Tensor O = te::compute(
      {4}, [&](Var i) { return S(i) + B3(i, 1); }, "O");
  PrimFunc f = flatten_buffers(lower_blocks(te::create_prim_func({A, O}, "chain")));
  PrimFunc g = storage_rewrite(f);
  std::string text = to_string(g);
  EXPECT_NE(
      text.find("  allocate B1: float32[8192]\n  allocate B2: float32[8192]\n  allocate S: float32[4] in local\n"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("allocate B3"), std::string::npos) << text;
  EXPECT_NE(text.find("B1[i_2 * 128 + j_2] = B2[i_2 * 128 + j_2] - 1.0f"), std::string::npos) << text;
  verify_lowered(g, "storage_rewrite");
  expect_same_results(f, g);
}

}  // namespace
}  // namespace temper
