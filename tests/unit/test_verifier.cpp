// The IR verifier accepts well-formed IR and names each planted error.
#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/lower/lower_blocks.h"
#include "compiler/te/te.h"

namespace temper {
namespace {

PrimFunc te_matmul() {
  te::Tensor A = te::placeholder({8, 4}, DataType::float32(), "A");
  te::Tensor B = te::placeholder({4, 8}, DataType::float32(), "B");
  IterVar k = te::reduce_axis({0, 4}, "k");
  te::Tensor C = te::compute(
      {8, 8}, [&](Var i, Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");
  te::Tensor D = te::compute(
      {8, 8}, [&](Var i, Var j) { return C(i, j) + 1.0f; }, "D");
  return te::create_prim_func({A, B, D}, "mm");
}

// The message of the InternalError verify() throws, or "" when it passes.
std::string verify_error(const PrimFunc& f, bool lowered = false) {
  try {
    if (lowered) {
      verify_lowered(f, "test_pass");
    } else {
      verify(f, "test_pass");
    }
  } catch (const InternalError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_VERIFY_ERROR(f, lowered, words)                               \
  do {                                                                       \
    std::string msg = verify_error(f, lowered);                              \
    EXPECT_NE(msg.find("after pass 'test_pass'"), std::string::npos) << msg; \
    EXPECT_NE(msg.find(words), std::string::npos) << msg;                    \
  } while (0)

TEST(Verifier, AcceptsWellFormedIr) {
  PrimFunc f = te_matmul();
  EXPECT_EQ(verify_error(f), "");
  // Symbolic dimensions of parameters are free variables the body may use.
  Var n("n");
  Buffer A("A", DataType::float32(), {n});
  Var i("i");
  EXPECT_EQ(verify_error(PrimFunc{"f", {A}, make_for(i, 0, n, ForKind::Serial, store(A, 0.0f, {i}))}), "");
}

TEST(Verifier, UnboundVariable) {
  Buffer A("A", DataType::float32(), {4});
  Var i("i"), j("j");
  PrimFunc f{"f", {A}, make_for(i, 0, 4, ForKind::Serial, store(A, 0.0f, {j}))};
  EXPECT_VERIFY_ERROR(f, false, "variable j is used where no loop, let or block binds it");
  // A loop variable is not bound in its own bounds.
  PrimFunc g{"g", {A}, make_for(i, 0, Expr(i) + 1, ForKind::Serial, store(A, 0.0f, {i}))};
  EXPECT_VERIFY_ERROR(g, false, "variable i is used where no loop");
}

TEST(Verifier, VariableBoundTwiceInItsOwnScope) {
  Buffer A("A", DataType::float32(), {4});
  Var i("i");
  PrimFunc f{"f", {A}, make_for(i, 0, 2, ForKind::Serial, make_for(i, 0, 2, ForKind::Serial, store(A, 0.0f, {i})))};
  EXPECT_VERIFY_ERROR(f, false, "variable i is bound again inside its own scope");
}

TEST(Verifier, UndeclaredBuffer) {
  Buffer A("A", DataType::float32(), {4});
  Buffer T("T", DataType::float32(), {4});
  Var i("i");
  PrimFunc f{"f", {A}, make_for(i, 0, 4, ForKind::Serial, store(A, load(T, {i}), {i}))};
  EXPECT_VERIFY_ERROR(f, false, "load of buffer T, which is neither a parameter nor allocated in scope");
  // Used after its allocation ended.
  PrimFunc g{"g", {A}, seq({allocate(T, store(T, 1.0f, {0})), store(A, load(T, {0}), {0})})};
  EXPECT_VERIFY_ERROR(g, false, "load of buffer T");
}

TEST(Verifier, WrongIndexCount) {
  Buffer A("A", DataType::float32(), {4, 4, 4});
  Var i("i");
  // load() refuses this, so the node is built directly, as a buggy pass might.
  Expr bad = Expr(std::make_shared<const BufferLoadNode>(DataType::float32(), A, std::vector<Expr>{i, i}));
  PrimFunc f{"f", {A}, make_for(i, 0, 4, ForKind::Serial, store(A, bad, {i, i, i}))};
  EXPECT_VERIFY_ERROR(f, false, "load of A has 2 indices but the buffer has 3 dimensions");
  // One flat index is allowed, but not in lowered form with three.
  PrimFunc g{"g", {A}, make_for(i, 0, 4, ForKind::Serial, store(A, load(A, {i}), {i, i, i}))};
  EXPECT_EQ(verify_error(g), "");
  EXPECT_VERIFY_ERROR(g, true, "store of A has 3 indices; lowered IR uses one flat index");
}

TEST(Verifier, OperandTypesMustAgree) {
  Buffer A("A", DataType::int64(), {4});
  Var i("i");
  Expr sum = Expr(std::make_shared<const AddNode>(DataType::int64(), load(A, {i}), i));
  PrimFunc f{"f", {A}, make_for(i, 0, 4, ForKind::Serial, store(A, sum, {i}))};
  EXPECT_VERIFY_ERROR(f, false, "operands of Add differ in type (int64 vs int32)");
  Expr cmp = Expr(std::make_shared<const LTNode>(DataType::int32(), Expr(i), Expr(1)));
  PrimFunc g{"g", {A}, make_for(i, 0, 4, ForKind::Serial, store(A, cast(DataType::int64(), cmp), {i}))};
  EXPECT_VERIFY_ERROR(g, false, "LT has type int32, expected bool");
}

TEST(Verifier, LoopBoundsMustBeIntegersOfTheLoopVariablesType) {
  Buffer A("A", DataType::float32(), {4});
  Var i("i");
  // A float expression (make_for would convert a plain literal).
  PrimFunc f{"f", {A}, make_for(i, 0, Expr(4.0f) + Expr(0.0f), ForKind::Serial, store(A, 0.0f, {i}))};
  EXPECT_VERIFY_ERROR(f, false, "loop i has bounds of type int32/float32");
}

TEST(Verifier, BlockBindingCountMustMatch) {
  PrimFunc f = te_matmul();
  // Find the first BlockRealize and drop one binding.
  auto* alloc = f.body.as<AllocateNode>();
  const Stmt& stage = alloc->body.as<SeqStmtNode>()->seq[0];
  const Stmt& realize = stage.as<ForNode>()->body.as<ForNode>()->body.as<ForNode>()->body;
  auto* r = realize.as<BlockRealizeNode>();
  std::vector<Expr> two(r->iter_values.begin(), r->iter_values.begin() + 2);
  Stmt bad(std::make_shared<const BlockRealizeNode>(two, r->predicate, r->block));
  Var i("i"), j("j"), k("k");
  PrimFunc g{
      "g", f.params,
      allocate(alloc->buffer, make_for(i, 0, 8, ForKind::Serial,
                                       make_for(j, 0, 8, ForKind::Serial, make_for(k, 0, 4, ForKind::Serial, bad))))};
  EXPECT_VERIFY_ERROR(g, false, "block C has 3 iteration variables but 2 bindings");
}

TEST(Verifier, VectorLanesMustAgree) {
  Buffer A("A", DataType::float32(), {16});
  Expr value = broadcast(Expr(1.0f), 4);
  Stmt bad(std::make_shared<const BufferStoreNode>(A, value, std::vector<Expr>{ramp(Expr(0), Expr(1), 8)}));
  EXPECT_VERIFY_ERROR((PrimFunc{"f", {A}, bad}), false, "store into A of a float32x4 value; expected float32x8");
  Expr cond = broadcast(make_bool(true), 2);
  Expr sel = Expr(std::make_shared<const SelectNode>(DataType::float32().with_lanes(4), cond, value, value));
  EXPECT_VERIFY_ERROR((PrimFunc{"g", {A}, store(A, sel, {ramp(Expr(0), Expr(1), 4)})}), false,
                      "select condition broadcast(True, 2) must be bool with 4 lanes");
}

TEST(Verifier, LoweredFormHasNoBlocksVectorizedLoopsOrMultiDimensionalAllocations) {
  te::Tensor A = te::placeholder({8}, DataType::float32(), "A");
  te::Tensor B = te::compute(
      {8}, [&](Var i) { return A(i) * 2.0f; }, "B");
  PrimFunc blocks = te::create_prim_func({A, B}, "scale");
  EXPECT_EQ(verify_error(blocks), "");
  EXPECT_VERIFY_ERROR(blocks, true, "a block is left in lowered IR");
  PrimFunc g = lower_blocks(te_matmul());
  EXPECT_EQ(verify_error(g), "");
  EXPECT_VERIFY_ERROR(g, true, "allocation of C has 2 dimensions; lowered IR allocates flat");
  Buffer X("X", DataType::float32(), {8});
  Var v("v");
  PrimFunc h{"h", {X}, make_for(v, 0, 8, ForKind::Vectorized, store(X, 0.0f, {v}))};
  EXPECT_VERIFY_ERROR(h, true, "loop v is still vectorized");
}

}  // namespace
}  // namespace temper
