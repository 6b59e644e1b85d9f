// Shape and dtype inference over a graph: each node's output types from its inputs', in
// topological order, by its GraphOp::infer. A value whose type was already known (a
// graph output the model declared) must agree, or it is a UserError naming the value and
// both types.
#pragma once

#include "compiler/graph/graph.h"

namespace temper::graph {

void infer_types(Graph& graph);

}  // namespace temper::graph
