#include "compiler/graph/graph_match.h"

#include <algorithm>

#include "compiler/ir/error.h"

namespace temper::graph {

bool is_output(const Graph& graph, ValueId v) {
  return std::find(graph.outputs().begin(), graph.outputs().end(), v) != graph.outputs().end();
}

std::vector<int> readers(const Graph& graph, ValueId v) {
  std::vector<int> found;
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    for (ValueId input : graph.nodes()[n].inputs) {
      if (input == v) found.push_back(n);
    }
  }
  return found;
}

int only_reader(const Graph& graph, ValueId v) {
  if (is_output(graph, v)) return -1;
  std::vector<int> found = readers(graph, v);
  return found.size() == 1 ? found[0] : -1;
}

const Node* node_as(const Graph& graph, int n, const std::string& op, size_t arity, const TensorType& type) {
  if (n < 0) return nullptr;
  const Node& node = graph.nodes()[n];
  if (node.op != op || node.inputs.size() != arity || node.outputs.size() != 1) return nullptr;
  return graph.value(node.outputs[0]).type == type ? &node : nullptr;
}

std::optional<double> scalar_constant(const Graph& graph, ValueId v) {
  if (v == kNoValue) return std::nullopt;
  const std::optional<NDArray>& data = graph.value(v).constant;
  if (!data || data->size() != 1) return std::nullopt;
  return data->get(0);
}

ValueId other_input(const Node& node, ValueId known) {
  if (node.inputs[0] == known) return node.inputs[1];
  if (node.inputs[1] == known) return node.inputs[0];
  return kNoValue;
}

std::string unused_name(const Graph& graph, const std::string& base) {
  std::string name = base;
  for (int k = 1; graph.find(name) != kNoValue; ++k) name = str(base, "_", k);
  return name;
}

}  // namespace temper::graph
