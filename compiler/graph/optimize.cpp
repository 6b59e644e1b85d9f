#include "compiler/graph/optimize.h"

#include "compiler/graph/pass_fold_batch_norm.h"
#include "compiler/graph/pass_remove_identity.h"

namespace temper::graph {

void optimize_graph(Graph& graph) {
  remove_identity(graph);
  fold_batch_norm(graph);
}

}  // namespace temper::graph
