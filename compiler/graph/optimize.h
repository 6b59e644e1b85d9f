// The graph passes a build runs before fusion, in order: what the fused executor and task
// extraction both see, so that a tuning job's tasks are the kernels a build compiles.
#pragma once

#include <cstdint>

#include "compiler/graph/graph.h"
#include "compiler/graph/pass_nchwc_layout.h"
#include "compiler/target/target.h"

namespace temper::graph {

// The passes that depend on the target and the user's layout choice.
struct GraphPasses {
  int64_t nchwc_block = 0;  // > 1: the blocked layout with this many lanes (pass_nchwc_layout.h)
  bool winograd = true;     // with the blocked layout: 3x3 stride-1 convs may take Winograd's kernel
  // with the blocked layout: a depthwise conv and the 1x1 conv after it run as one kernel
  // (pass_fuse_depthwise_pointwise.h)
  bool depthwise_pointwise = true;
  bool attention = false;   // attention chains become one Attention node (pass_fuse_attention.h)
};

// What a build for target runs: the blocked layout and Winograd as the layout choice says
// (nchwc_block_for), attention fused on CPUs (its template is a CPU one).
GraphPasses graph_passes_for(const Target& target, LayoutChoice layout);

// Rewrites graph in place (each pass is its own file: pass_*.h): identities removed, batch
// norms folded, layer norms and GELUs recognised, attention fused, then the blocked layout
// chosen for the graph, and in it depthwise and pointwise pairs fused.
LayoutReport optimize_graph(Graph& graph, const GraphPasses& passes = {});

}  // namespace temper::graph
