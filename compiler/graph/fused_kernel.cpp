#include "compiler/graph/fused_kernel.h"

#include <algorithm>
#include <map>

#include "compiler/graph/graph_ops.h"
#include "compiler/te/te.h"

namespace temper::graph {

NodeKernel compile_group(const Graph& graph, const FusedGroup& group, const Target& target) {
  TEMPER_CHECK(!group.nodes.empty(), "compile_group: an empty group");
  auto in_group = [&](int n) { return std::find(group.nodes.begin(), group.nodes.end(), n) != group.nodes.end(); };

  NodeKernel kernel;
  std::vector<te::Tensor> params;           // external inputs, then outputs
  std::map<ValueId, te::Tensor> tensor_of;  // every value the kernel has a tensor for
  for (int n : group.nodes) {
    const Node& node = graph.nodes()[n];
    const GraphOp* op = find_graph_op(node.op);
    if (!op) throw UserError(str(node.op, " node '", node.name, "': op ", node.op, " is not supported"));
    std::vector<te::Tensor> inputs;
    for (ValueId v : node.inputs) {
      if (v == kNoValue) {
        inputs.emplace_back();
        continue;
      }
      auto known = tensor_of.find(v);
      if (known != tensor_of.end()) {
        inputs.push_back(known->second);
        continue;
      }
      const Value& value = graph.value(v);
      if (!value.type.known()) {
        throw UserError(str(node.op, " node '", node.name, "' reads '", value.name,
                            "', whose type is not known: run infer_types before compiling"));
      }
      std::vector<Expr> shape;
      for (int64_t d : value.type.shape) shape.push_back(Expr(d));
      te::Tensor t =
          te::placeholder(shape, value.type.dtype, str("in", params.size(), "_", detail::sanitize(value.name)));
      tensor_of[v] = t;
      inputs.push_back(t);
      params.push_back(t);
      kernel.args.push_back(v);
    }
    std::vector<te::Tensor> outputs = op->compute(graph, node, inputs);
    TEMPER_CHECK(outputs.size() == node.outputs.size(), "node ", node.name, " (", node.op, ") computes ",
                 outputs.size(), " outputs for ", node.outputs.size(), " output values");
    for (size_t o = 0; o < outputs.size(); ++o) {
      detail::check_output_type(node, static_cast<int>(o), outputs[o], graph.value(node.outputs[o]).type);
      tensor_of[node.outputs[o]] = outputs[o];
    }
  }

  std::vector<bool> is_graph_output(graph.values().size(), false);
  for (ValueId v : graph.outputs()) is_graph_output[v] = true;
  std::vector<bool> read_inside(graph.values().size(), false);
  std::vector<bool> read_outside(graph.values().size(), false);
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    for (ValueId v : graph.nodes()[n].inputs) {
      if (v != kNoValue) (in_group(n) ? read_inside : read_outside)[v] = true;
    }
  }
  size_t num_inputs = params.size();
  for (int n : group.nodes) {
    for (ValueId v : graph.nodes()[n].outputs) {
      if (!is_graph_output[v] && !read_outside[v] && read_inside[v]) continue;
      te::Tensor t = tensor_of.at(v);
      bool taken = std::any_of(params.begin(), params.end(), [&](const te::Tensor& p) { return p.op() == t.op(); });
      if (taken)
        t = detail::copy_of(t, str("out", params.size() - num_inputs, "_", detail::sanitize(graph.value(v).name)));
      params.push_back(t);
      kernel.args.push_back(v);
    }
  }

  const Node& anchor = graph.nodes().at(group.anchor);
  std::string name = group.nodes.size() == 1 ? str("n", group.anchor, "_", detail::sanitize(anchor.name))
                                             : str("f", group.anchor, "_", detail::sanitize(anchor.name));
  kernel.function = detail::compile_function(params, num_inputs, name, target);
  return kernel;
}

}  // namespace temper::graph
