// Operator fusion as a partition of a graph's nodes into groups, each of which becomes one
// kernel (fused_kernel.h). The rules are TVM's, read from GraphOp::pattern (graph_ops.h):
//
//   - an OutFusable node (Conv, Gemm, MatMul) or a Reduction (Softmax, pooling, ...)
//     absorbs the chain of Elementwise and Broadcast nodes that follows it, its epilogue;
//   - chains of Elementwise, Broadcast and Injective nodes (Reshape, Transpose, Add, ...)
//     make one group;
//   - an Opaque node (Constant, Shape), an op the table lacks and a node with several
//     outputs stand alone.
//
// A node joins the group of the node producing one of its inputs only when that node is
// the group's last one, the value is its only output, the joining node is the value's
// only user (counting repeated reads) and the value is no graph output: every value
// inside a group but its last node's output is then read only inside the group, so a
// group never waits on a group that reads its intermediates, and running the groups in
// the order of their last nodes respects every dependency.
#pragma once

#include <vector>

#include "compiler/graph/graph.h"

namespace temper::graph {

struct FusedGroup {
  std::vector<int> nodes;  // ascending node indices: the group's topological order
  // The node whose pattern dominates (OutFusable or Reduction over Injective over
  // Broadcast over Elementwise); the first such node when several tie.
  int anchor = -1;
};

// Every node in exactly one group; the groups in the order of their last node.
std::vector<FusedGroup> partition_for_fusion(const Graph& graph);

}  // namespace temper::graph
