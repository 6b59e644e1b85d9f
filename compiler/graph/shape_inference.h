// Shape and dtype inference over a graph: each node's output types from its inputs', in
// topological order, by its GraphOp::infer. A value whose type was already known (a
// graph output the model declared) must agree, or it is a UserError naming the value and
// both types.
#pragma once

#include "compiler/graph/graph.h"

namespace temper::graph {

void infer_types(Graph& graph);

// One node's outputs typed by its GraphOp::infer, as infer_types types each node (constant
// folding types nodes one by one as it folds). UnsupportedError for an output with an
// extent 0: Temper has no empty tensors.
void infer_node_types(Graph& graph, const Node& node);

}  // namespace temper::graph
