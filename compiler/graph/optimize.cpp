#include "compiler/graph/optimize.h"

#include "compiler/graph/pass_fold_batch_norm.h"
#include "compiler/graph/pass_recognize_gelu.h"
#include "compiler/graph/pass_recognize_layer_norm.h"
#include "compiler/graph/pass_remove_identity.h"

namespace temper::graph {

void optimize_graph(Graph& graph) {
  remove_identity(graph);
  fold_batch_norm(graph);
  recognize_layer_norm(graph);
  recognize_gelu(graph);
}

}  // namespace temper::graph
