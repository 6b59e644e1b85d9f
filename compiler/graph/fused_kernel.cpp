#include "compiler/graph/fused_kernel.h"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/codegen/build.h"
#include "compiler/graph/graph_ops.h"
#include "compiler/graph/graph_ops_common.h"
#include "compiler/ops/transform.h"
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

// t (of shape `from`) seen in shape `to`, the same elements in the same order. Where the
// two differ only by extents of 1 ([128, 768] as [1, 128, 768]) each index is read
// directly, so that the view inlines into plain per-dimension reads a schedule can follow
// (epilogue fusion); otherwise a reshape's flattened index.
te::Tensor view_as(const te::Tensor& t, const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  if (from == to) return t;
  auto without_ones = [](const std::vector<int64_t>& shape) {
    std::vector<int64_t> dims;
    for (int64_t d : shape) {
      if (d != 1) dims.push_back(d);
    }
    return dims;
  };
  if (without_ones(from) != without_ones(to)) return ops::reshape(t, to, t.name() + "_view");
  return te::compute(
      detail::shape_exprs(to),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> index;
        size_t next = 0;  // the next dimension of `to` that is not 1
        for (int64_t extent : from) {
          if (extent == 1) {
            index.push_back(make_const(DataType::int32(), int64_t{0}));
            continue;
          }
          while (to[next] == 1) ++next;
          index.push_back(i[next++]);
        }
        return t(index);
      },
      t.name() + "_view", "injective");
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
    // int32 extents, as the ops library's: a template's loops and these index alike.
    te::Tensor t = te::placeholder(detail::shape_exprs(type.shape), type.dtype,
                                   str("in", inputs.size(), "_", detail::sanitize(value_name)));
    inputs.push_back(t);
    input_ids.push_back(id);
    return t;
  };
  for (int n : group.nodes) {
    const Node& node = graph.nodes()[n];
    // The anchor's result as the tuned kernel wrote it, viewed in the output's shape.
    auto anchor_result = [&](const std::string& value_name) {
      const TensorType& type = graph.value(node.outputs[0]).type;
      te::Tensor t = external(product->id, TensorType{product->shape, type.dtype}, value_name);
      return view_as(t, product->shape, type.shape);
    };
    if (product && product->is_output && n == group.anchor) {
      tensor_of[node.outputs[0]] = anchor_result(graph.value(node.outputs[0]).name);
      continue;
    }
    const GraphOp* op = find_graph_op(node.op);
    if (!op) throw UnsupportedError(str(node.op, " node '", node.name, "': op ", node.op, " is not supported"));
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
      te::Tensor p = anchor_result(node.name + "_product");
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
      t = detail::copy_of(
          t, str("out", params.size() - num_inputs, "_", detail::sanitize(graph.value(output_ids[o]).name)));
    }
    params.push_back(t);
    kernel.args.push_back(output_ids[o]);
  }
  kernel.func = detail::schedule_function(params, num_inputs, name, target, &kernel.inlined);
  return kernel;
}

std::string kernel_name(const Graph& graph, const FusedGroup& group, const char* prefix) {
  if (!prefix) prefix = group.nodes.size() == 1 ? "n" : "f";
  return str(prefix, group.anchor, "_", detail::sanitize(graph.nodes().at(group.anchor).name));
}

NodeKernel compile_group(const Graph& graph, const FusedGroup& group, const Target& target) {
  std::string name = kernel_name(graph, group);
  ScheduledKernel scheduled = schedule_group(graph, group, target, name);
  NodeKernel kernel;
  kernel.args.assign(scheduled.args.begin(), scheduled.args.end());
  BuildResult built = build({scheduled.func}, target);
  kernel.function = built.module->get_function(name);
  return kernel;
}

}  // namespace temper::graph
