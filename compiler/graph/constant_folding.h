// Constant folding: a node whose inputs are all constants is computed at compile time
// (its te compute, built and run through the LLVM backend like any kernel) and its
// outputs become constants; nodes left without users go. Folds the shape subgraphs ONNX
// exporters write, and weight preprocessing. Shape and Size fold whatever their input
// is: they read only its type.
//
// Types are inferred node by node as the sweep reaches them (GraphOp::infer), so folding
// may run before the graph is fully typed: a Reshape whose target shape a Shape chain
// computes gets its type once that chain has folded. Inputs and constants must be typed.
#pragma once

#include "compiler/graph/graph.h"

namespace temper::graph {

// The number of nodes folded.
int fold_constants(Graph& graph);

}  // namespace temper::graph
