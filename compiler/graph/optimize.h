// The graph passes a build runs before fusion, in order: what the fused executor and task
// extraction both see, so that a tuning job's tasks are the kernels a build compiles.
#pragma once

#include <cstdint>

#include "compiler/graph/graph.h"
#include "compiler/graph/pass_nchwc_layout.h"

namespace temper::graph {

// Rewrites graph in place (each pass is its own file: pass_*.h): identities removed, batch
// norms folded, layer norms and GELUs recognised, then, with nchwc_block > 1, the blocked
// layout chosen for the graph (pass_nchwc_layout.h; nchwc_block_for(target) is a build's).
LayoutReport optimize_graph(Graph& graph, int64_t nchwc_block = 0, bool winograd = true);

}  // namespace temper::graph
