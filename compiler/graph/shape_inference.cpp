// Shape and dtype inference (see shape_inference.h): one pass over the nodes in their
// topological order, each output typed by its op's GraphOp::infer.
#include "compiler/graph/shape_inference.h"

#include "compiler/graph/graph_ops.h"
#include "compiler/ir/text.h"

namespace temper::graph {

void infer_node_types(Graph& graph, const Node& node) {
  const GraphOp* op = find_graph_op(node.op);
  if (!op) {
    throw UnsupportedError(str(node.op, " node '", node.name, "': op ", node.op, " is not supported; Temper supports ",
                               join(supported_graph_ops(), ", ")));
  }
  std::vector<TensorType> types = op->infer(graph, node);
  TEMPER_CHECK(types.size() == node.outputs.size(), node.op, " node '", node.name, "': infer gave ", types.size(),
               " types for ", node.outputs.size(), " outputs");
  for (size_t o = 0; o < types.size(); ++o) {
    Value& value = graph.value(node.outputs[o]);
    for (int64_t extent : types[o].shape) {
      if (extent <= 0) {
        throw UnsupportedError(str(node.op, " node '", node.name, "': output '", value.name, "' would be ",
                                   types[o].to_string(), "; Temper has no empty tensors"));
      }
    }
    if (value.type.known() && value.type != types[o]) {
      throw UserError(str(node.op, " node '", node.name, "': output '", value.name, "' is declared ",
                          value.type.to_string(), " but the node computes ", types[o].to_string()));
    }
    value.type = types[o];
  }
}

void infer_types(Graph& graph) {
  for (Value& value : graph.values()) {
    if (value.constant) value.type = {value.constant->shape(), value.constant->dtype()};
  }
  for (const Node& node : graph.nodes()) infer_node_types(graph, node);
}

}  // namespace temper::graph
