#include "compiler/graph/optimize.h"

#include "compiler/graph/pass_fold_batch_norm.h"
#include "compiler/graph/pass_recognize_gelu.h"
#include "compiler/graph/pass_recognize_layer_norm.h"
#include "compiler/graph/pass_remove_identity.h"

namespace temper::graph {

LayoutReport optimize_graph(Graph& graph, int64_t nchwc_block, bool winograd) {
  remove_identity(graph);
  fold_batch_norm(graph);
  recognize_layer_norm(graph);
  recognize_gelu(graph);
  if (nchwc_block > 1) return convert_to_nchwc(graph, nchwc_block, winograd);
  return LayoutReport{};
}

}  // namespace temper::graph
