#include "compiler/graph/node_kernel.h"

#include <algorithm>
#include <cctype>

#include "compiler/codegen/build.h"
#include "compiler/graph/graph_ops.h"
#include "compiler/ir/functor.h"
#include "compiler/ops/cpu_schedules.h"
#include "compiler/schedule/schedule.h"
#include "compiler/te/te.h"

namespace temper::graph {
namespace {

std::vector<Expr> shape_exprs(const std::vector<int64_t>& shape) {
  std::vector<Expr> exprs;
  for (int64_t d : shape) exprs.push_back(Expr(d));
  return exprs;
}

}  // namespace

namespace detail {

std::string sanitize(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  constexpr size_t kMaxLength = 48;
  if (out.size() > kMaxLength) out.resize(kMaxLength);
  return out;
}

te::Tensor copy_of(const te::Tensor& t, const std::string& name) {
  return te::compute(
      t.shape(), [&](const std::vector<Var>& i) { return t(std::vector<Expr>(i.begin(), i.end())); }, name,
      "injective");
}

void check_output_type(const Node& node, int index, const te::Tensor& t, const TensorType& expected) {
  std::vector<int64_t> shape;
  for (const Expr& e : t.shape()) {
    const int64_t* c = as_const_int(e);
    TEMPER_CHECK(c, "node ", node.name, " (", node.op, "): output ", index, " has a non-constant extent");
    shape.push_back(*c);
  }
  TensorType got{shape, t.dtype()};
  TEMPER_CHECK(got == expected, "node ", node.name, " (", node.op, "): output ", index, " computes ", got.to_string(),
               " but its inferred type is ", expected.to_string());
}

void inline_elementwise_intermediates(Schedule& s) {
  struct BlockUse {
    std::string name;
    Buffer output;
    bool is_reduction = false;
  };
  std::vector<BlockUse> blocks;
  post_order_visit(s.func().body, [&](const temper::Node* n) {
    if (n->kind != NodeKind::Block) return;
    auto* b = static_cast<const BlockNode*>(n);
    blocks.push_back({b->name, b->writes.empty() ? Buffer() : b->writes[0].buffer, b->init.defined()});
  });
  auto is_param = [&](const Buffer& b) {
    const std::vector<Buffer>& params = s.func().params;
    return std::any_of(params.begin(), params.end(), [&](const Buffer& p) { return p.same_as(b); });
  };
  // Consumers come after producers in program order: visiting in reverse inlines a chain
  // from its end, each step seeing the consumers the previous one left.
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (it->is_reduction || !it->output.defined() || is_param(it->output)) continue;
    bool read_by_reduction = false;
    post_order_visit(s.func().body, [&](const temper::Node* n) {
      if (n->kind != NodeKind::Block) return;
      auto* b = static_cast<const BlockNode*>(n);
      if (!b->init.defined()) return;
      for (const BufferRegion& r : b->reads) read_by_reduction |= r.buffer.same_as(it->output);
    });
    if (read_by_reduction) continue;
    try {
      s.compute_inline(s.get_block(it->name));
    } catch (const ScheduleError&) {
      // Not inlinable (an index the consumer cannot substitute): it keeps its own loops.
    }
  }
}

PackedFunc compile_function(const std::vector<te::Tensor>& params, size_t num_inputs, const std::string& name,
                            const Target& target) {
  ops::OpInstance instance;
  instance.name = name;
  instance.inputs.assign(params.begin(), params.begin() + static_cast<std::ptrdiff_t>(num_inputs));
  instance.outputs.assign(params.begin() + static_cast<std::ptrdiff_t>(num_inputs), params.end());
  Schedule inlined(te::create_prim_func(params, name));
  inline_elementwise_intermediates(inlined);
  instance.func = inlined.func();
  Schedule scheduled = ops::schedule_cpu_default(instance, target);
  BuildResult built = build({scheduled.func()}, target);
  return built.module->get_function(name);
}

}  // namespace detail

NodeKernel compile_node(const Graph& graph, int node_index, const Target& target) {
  const Node& node = graph.nodes().at(node_index);
  const GraphOp* op = find_graph_op(node.op);
  if (!op) throw UserError(str(node.op, " node '", node.name, "': op ", node.op, " is not supported"));

  NodeKernel kernel;
  std::vector<te::Tensor> inputs;  // one per node input, undefined for omitted ones
  std::vector<te::Tensor> params;  // the present inputs, then the outputs
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    ValueId v = node.inputs[i];
    if (v == kNoValue) {
      inputs.emplace_back();
      continue;
    }
    const Value& value = graph.value(v);
    if (!value.type.known()) {
      throw UserError(str(node.op, " node '", node.name, "' reads '", value.name,
                          "', whose type is not known: run infer_types before compiling"));
    }
    te::Tensor t = te::placeholder(shape_exprs(value.type.shape), value.type.dtype,
                                   str("in", i, "_", detail::sanitize(value.name)));
    inputs.push_back(t);
    params.push_back(t);
    kernel.args.push_back(v);
  }
  std::vector<te::Tensor> outputs = op->compute(graph, node, inputs);
  TEMPER_CHECK(outputs.size() == node.outputs.size(), "node ", node.name, " (", node.op, ") computes ", outputs.size(),
               " outputs for ", node.outputs.size(), " output values");
  for (size_t o = 0; o < outputs.size(); ++o) {
    te::Tensor t = outputs[o];
    detail::check_output_type(node, static_cast<int>(o), t, graph.value(node.outputs[o]).type);
    bool taken = std::any_of(params.begin(), params.end(), [&](const te::Tensor& p) { return p.op() == t.op(); });
    if (taken) t = detail::copy_of(t, str("out", o, "_", detail::sanitize(graph.value(node.outputs[o]).name)));
    params.push_back(t);
    kernel.args.push_back(node.outputs[o]);
  }

  // The node index keeps names unique where sanitising made two node names alike.
  std::string name = str("n", node_index, "_", detail::sanitize(node.name));
  kernel.function = detail::compile_function(params, params.size() - outputs.size(), name, target);
  return kernel;
}

void run_node(const NodeKernel& kernel, const std::vector<NDArray*>& args) {
  TEMPER_CHECK(args.size() == kernel.args.size(), "kernel ", kernel.function.name(), " takes ", kernel.args.size(),
               " arrays, given ", args.size());
  kernel.function(args);
}

}  // namespace temper::graph
