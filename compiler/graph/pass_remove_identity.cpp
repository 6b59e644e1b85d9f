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

bool all_zero(const std::vector<int64_t>& values) {
  return std::all_of(values.begin(), values.end(), [](int64_t v) { return v == 0; });
}

// A Pad whose pads are all zero, as exporters write before a pool without padding.
bool pads_nothing(const Graph& graph, const Node& pad) {
  if (pad.attrs.has("pads")) return all_zero(pad.attrs.get_ints_or("pads", {}));
  if (pad.inputs.size() < 2 || pad.inputs[1] == kNoValue) return false;
  const Value& pads = graph.value(pad.inputs[1]);
  if (!pads.constant || !pads.type.dtype.is_integer()) return false;
  for (int64_t i = 0; i < pads.constant->size(); ++i) {
    if (pads.constant->get(i) != 0) return false;
  }
  return true;
}

// The input a node passes through unchanged, or kNoValue where it computes something.
ValueId passed_through(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || node.inputs[0] == kNoValue || node.outputs.size() != 1) return kNoValue;
  bool no_op = (node.op == "Identity" && node.inputs.size() == 1) || node.op == "Dropout" ||
               (node.op == "Pad" && pads_nothing(graph, node));
  return no_op ? node.inputs[0] : kNoValue;
}

}  // namespace

int remove_identity(Graph& graph) {
  int removed = 0;
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    Node& identity = graph.nodes()[n];
    ValueId source = passed_through(graph, identity);
    if (source == kNoValue) continue;
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
