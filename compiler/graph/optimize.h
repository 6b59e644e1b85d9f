// The graph passes a build runs before fusion, in order: what the fused executor and task
// extraction both see, so that a tuning job's tasks are the kernels a build compiles.
#pragma once

#include "compiler/graph/graph.h"

namespace temper::graph {

// Rewrites graph in place (each pass is its own file: pass_*.h).
void optimize_graph(Graph& graph);

}  // namespace temper::graph
