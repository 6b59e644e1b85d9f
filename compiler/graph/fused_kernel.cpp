#include "compiler/graph/fused_kernel.h"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/codegen/build.h"
#include "compiler/graph/graph_ops.h"
#include "compiler/te/te.h"

namespace temper::graph {
namespace {

// The te operations reachable from outputs.
std::set<const te::OperationNode*> reachable(const std::vector<te::Tensor>& outputs) {
  std::set<const te::OperationNode*> seen;
  std::vector<te::Tensor> work = outputs;
  while (!work.empty()) {
    te::Tensor t = work.back();
    work.pop_back();
    if (!seen.insert(t.op()).second) continue;
    for (const te::Tensor& in : t.op()->inputs) work.push_back(in);
  }
  return seen;
}

}  // namespace

ScheduledKernel schedule_group(const Graph& graph, const FusedGroup& group, const Target& target,
                               const std::string& name, const AnchorProduct* product) {
  TEMPER_CHECK(!group.nodes.empty(), "schedule_group: an empty group");
  auto in_group = [&](int n) { return std::find(group.nodes.begin(), group.nodes.end(), n) != group.nodes.end(); };

  std::vector<te::Tensor> inputs;           // external inputs, in order of first use
  std::vector<int> input_ids;               // their arrays
  std::map<ValueId, te::Tensor> tensor_of;  // every value the kernel has a tensor for
  auto external = [&](int id, const TensorType& type, const std::string& value_name) {
    std::vector<Expr> shape;
    for (int64_t d : type.shape) shape.push_back(Expr(d));
    te::Tensor t = te::placeholder(shape, type.dtype, str("in", inputs.size(), "_", detail::sanitize(value_name)));
    inputs.push_back(t);
    input_ids.push_back(id);
    return t;
  };
  for (int n : group.nodes) {
    const Node& node = graph.nodes()[n];
    if (product && product->is_output && n == group.anchor) {
      ValueId out = node.outputs[0];
      tensor_of[out] = external(out, graph.value(out).type, graph.value(out).name);
      continue;
    }
    const GraphOp* op = find_graph_op(node.op);
    if (!op) throw UserError(str(node.op, " node '", node.name, "': op ", node.op, " is not supported"));
    std::vector<te::Tensor> node_inputs;
    for (ValueId v : node.inputs) {
      if (v == kNoValue) {
        node_inputs.emplace_back();
        continue;
      }
      auto known = tensor_of.find(v);
      if (known != tensor_of.end()) {
        node_inputs.push_back(known->second);
        continue;
      }
      const Value& value = graph.value(v);
      if (!value.type.known()) {
        throw UserError(str(node.op, " node '", node.name, "' reads '", value.name,
                            "', whose type is not known: run infer_types before compiling"));
      }
      tensor_of[v] = external(v, value.type, value.name);
      node_inputs.push_back(tensor_of[v]);
    }
    std::vector<te::Tensor> outputs;
    if (product && n == group.anchor) {
      const TensorType& type = graph.value(node.outputs[0]).type;
      te::Tensor p = external(product->id, type, node.name + "_product");
      outputs = {op->epilogue ? op->epilogue(graph, node, node_inputs, p) : p};
    } else {
      outputs = op->compute(graph, node, node_inputs);
    }
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
  std::vector<te::Tensor> outputs;
  std::vector<int> output_ids;
  for (int n : group.nodes) {
    if (product && product->is_output && n == group.anchor) continue;
    for (ValueId v : graph.nodes()[n].outputs) {
      if (!is_graph_output[v] && !read_outside[v] && read_inside[v]) continue;
      outputs.push_back(tensor_of.at(v));
      output_ids.push_back(v);
    }
  }

  // Inputs only the replaced anchor read (its data and weights) are no parameters.
  ScheduledKernel kernel;
  std::vector<te::Tensor> params;
  std::set<const te::OperationNode*> used = reachable(outputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!used.count(inputs[i].op())) continue;
    params.push_back(inputs[i]);
    kernel.args.push_back(input_ids[i]);
  }
  size_t num_inputs = params.size();
  kernel.num_inputs = static_cast<int>(num_inputs);
  for (size_t o = 0; o < outputs.size(); ++o) {
    te::Tensor t = outputs[o];
    bool taken = std::any_of(params.begin(), params.end(), [&](const te::Tensor& p) { return p.op() == t.op(); });
    if (taken) {
      t = detail::copy_of(t, str("out", params.size() - num_inputs, "_", detail::sanitize(graph.value(output_ids[o]).name)));
    }
    params.push_back(t);
    kernel.args.push_back(output_ids[o]);
  }
  kernel.func = detail::schedule_function(params, num_inputs, name, target);
  return kernel;
}

NodeKernel compile_group(const Graph& graph, const FusedGroup& group, const Target& target) {
  const Node& anchor = graph.nodes().at(group.anchor);
  // The anchor's index keeps names unique where sanitising made two node names alike.
  std::string name = str(group.nodes.size() == 1 ? "n" : "f", group.anchor, "_", detail::sanitize(anchor.name));
  ScheduledKernel scheduled = schedule_group(graph, group, target, name);
  NodeKernel kernel;
  kernel.args.assign(scheduled.args.begin(), scheduled.args.end());
  BuildResult built = build({scheduled.func}, target);
  kernel.function = built.module->get_function(name);
  return kernel;
}

}  // namespace temper::graph
