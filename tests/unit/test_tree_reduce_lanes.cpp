// tree_reduce_lanes: the serial loop over a vectorized reduction's lanes becomes a tree
// of vector operations that computes the same value, and any other loop is left alone.
#include <gtest/gtest.h>

#include <limits>

#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/lower/simplify.h"
#include "compiler/lower/tree_reduce_lanes.h"
#include "unit/test_lower_builders.h"

namespace temper {
namespace {

using test::expect_same_results;

// for (v, 0, lanes) { [if (v == 0) out[1] = init]  out[1] = op(out[1], part[8 + v]) }
PrimFunc lane_loop(NodeKind op, int64_t lanes, bool with_init, bool acc_first = true) {
  Buffer part("part", DataType::float32(), {80});
  Buffer out("out", DataType::float32(), {2});
  Var v("v");
  Expr acc = load(out, {1});
  Expr element = load(part, {Expr(8) + v});
  Stmt update = store(out, acc_first ? make_binary(op, acc, element) : make_binary(op, element, acc), {1});
  Stmt body = update;
  if (with_init) {
    Expr init = reduce_identity(op == NodeKind::Add   ? ReduceOp::Sum
                                : op == NodeKind::Max ? ReduceOp::Max
                                                      : ReduceOp::Min,
                                DataType::float32());
    body = seq({if_then_else(Expr(v) == 0, store(out, init, {1})), update});
  }
  return PrimFunc{"lanes", {part, out}, make_for(v, 0, lanes, ForKind::Serial, body)};
}

TEST(TreeReduceLanes, MaxOverSixteenLanesBecomesFourVectorSteps) {
  PrimFunc f = lane_loop(NodeKind::Max, 16, /*with_init=*/true);
  PrimFunc g = simplify(tree_reduce_lanes(f));
  std::string text = to_string(g.body);
  EXPECT_EQ(text.find("for ("), std::string::npos) << text;
  EXPECT_NE(text.find("out[1] = float32(-inf)"), std::string::npos) << text;
  EXPECT_NE(text.find("part_tree[ramp(0, 1, 8)] = max(part[ramp(8, 1, 8)], part[ramp(16, 1, 8)])"), std::string::npos)
      << text;
  EXPECT_NE(text.find("part_tree[ramp(0, 1, 4)]"), std::string::npos) << text;
  EXPECT_NE(text.find("part_tree[ramp(0, 1, 2)]"), std::string::npos) << text;
  EXPECT_NE(text.find("out[1] = max(out[1], part_tree[0])"), std::string::npos) << text;
  verify(g, "tree_reduce_lanes");
  expect_same_results(f, g);  // max is exact in any order
}

TEST(TreeReduceLanes, SumMinAndOperandOrderComputeTheSameValues) {
  for (NodeKind op : {NodeKind::Add, NodeKind::Min}) {
    for (int64_t lanes : {4, 8, 32, 64}) {
      for (bool with_init : {true, false}) {
        for (bool acc_first : {true, false}) {
          PrimFunc f = lane_loop(op, lanes, with_init, acc_first);
          PrimFunc g = tree_reduce_lanes(f);
          SCOPED_TRACE(to_string(f.body));
          EXPECT_EQ(to_string(g.body).find("for ("), std::string::npos) << g.body;
          verify(g, "tree_reduce_lanes");
          expect_same_results(f, g, /*relative_tolerance=*/1e-6);  // a float sum reassociated
        }
      }
    }
  }
}

TEST(TreeReduceLanes, LeavesOtherLoopsAlone) {
  // Not a power of two, too short, a product, a parallel loop.
  for (PrimFunc f :
       {lane_loop(NodeKind::Add, 12, true), lane_loop(NodeKind::Add, 2, true), lane_loop(NodeKind::Mul, 16, false)}) {
    EXPECT_TRUE(tree_reduce_lanes(f).body.same_as(f.body)) << f.body;
  }
  Buffer part("part", DataType::float32(), {16});
  Buffer out("out", DataType::float32(), {16});
  Var v("v");
  // The accumulator's element moves with v: a scan, not a reduction.
  Stmt scan = store(out, load(out, {v}) + load(part, {v}), {v});
  // The lanes are read with a stride: not one vector.
  Stmt strided = store(out, load(out, {0}) + load(part, {Expr(v) * 2}), {0});
  for (const Stmt& body : {scan, strided}) {
    PrimFunc f{"f", {part, out}, make_for(v, 0, 8, ForKind::Serial, body)};
    EXPECT_TRUE(tree_reduce_lanes(f).body.same_as(f.body)) << f.body;
  }
  PrimFunc parallel{"f", {part, out}, make_for(v, 0, 8, ForKind::Parallel, strided)};
  EXPECT_TRUE(tree_reduce_lanes(parallel).body.same_as(parallel.body));
}

}  // namespace
}  // namespace temper
