#include "compiler/graph/pass_remove_identity.h"

#include <algorithm>

namespace temper::graph {
namespace {

void replace_uses(Graph& graph, ValueId from, ValueId to) {
  for (Node& node : graph.nodes()) std::replace(node.inputs.begin(), node.inputs.end(), from, to);
}

bool is_output(const Graph& graph, ValueId v) {
  return std::find(graph.outputs().begin(), graph.outputs().end(), v) != graph.outputs().end();
}

}  // namespace

int remove_identity(Graph& graph) {
  int removed = 0;
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    Node& identity = graph.nodes()[n];
    if (identity.op != "Identity" || identity.inputs.size() != 1 || identity.outputs.size() != 1) continue;
    ValueId source = identity.inputs[0];
    ValueId result = identity.outputs[0];
    if (!is_output(graph, result)) {
      // Nothing reads the Identity any more: remove_dead drops it.
      replace_uses(graph, result, source);
      ++removed;
      continue;
    }
    int producer = graph.value(source).producer;
    if (producer < 0 || is_output(graph, source)) continue;
    // The producer writes the graph output under its name; the Identity is left copying
    // it back into `source`, which nothing reads, so remove_dead drops it. Consumers of
    // `source` sit after the producer, where `result` is now written.
    replace_uses(graph, source, result);
    Node& writer = graph.nodes()[producer];
    std::replace(writer.outputs.begin(), writer.outputs.end(), source, result);
    graph.value(result).producer = producer;
    identity.outputs[0] = source;
    graph.value(source).producer = n;
    ++removed;
  }
  graph.remove_dead();
  return removed;
}

}  // namespace temper::graph
