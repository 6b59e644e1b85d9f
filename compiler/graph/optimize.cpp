#include "compiler/graph/optimize.h"

#include "compiler/graph/pass_fold_batch_norm.h"
#include "compiler/graph/pass_fuse_attention.h"
#include "compiler/graph/pass_fuse_depthwise_pointwise.h"
#include "compiler/graph/pass_recognize_gelu.h"
#include "compiler/graph/pass_recognize_layer_norm.h"
#include "compiler/graph/pass_remove_identity.h"

namespace temper::graph {

GraphPasses graph_passes_for(const Target& target, LayoutChoice layout) {
  GraphPasses passes;
  passes.nchwc_block = nchwc_block_for(target, layout);
  passes.winograd = layout.kind != LayoutChoice::BlockedDirect;
  passes.attention = !target.is_gpu();
  return passes;
}

LayoutReport optimize_graph(Graph& graph, const GraphPasses& passes) {
  remove_identity(graph);
  fold_batch_norm(graph);
  recognize_layer_norm(graph);
  recognize_gelu(graph);
  if (passes.attention) fuse_attention(graph);
  if (passes.nchwc_block <= 1) return LayoutReport{};
  LayoutReport report = convert_to_nchwc(graph, passes.nchwc_block, passes.winograd);
  if (passes.depthwise_pointwise) fuse_depthwise_pointwise(graph);
  return report;
}

}  // namespace temper::graph
