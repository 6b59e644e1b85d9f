#include "compiler/graph/node_kernel.h"

#include <algorithm>
#include <cctype>

#include "compiler/graph/fused_kernel.h"
#include "compiler/ir/functor.h"
#include "compiler/ops/cpu_schedules.h"
#include "compiler/schedule/schedule.h"
#include "compiler/te/te.h"

namespace temper::graph {
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

PrimFunc schedule_function(const std::vector<te::Tensor>& params, size_t num_inputs, const std::string& name,
                           const Target& target, PrimFunc* inlined_func) {
  ops::OpInstance instance;
  instance.name = name;
  instance.inputs.assign(params.begin(), params.begin() + static_cast<std::ptrdiff_t>(num_inputs));
  instance.outputs.assign(params.begin() + static_cast<std::ptrdiff_t>(num_inputs), params.end());
  Schedule inlined(te::create_prim_func(params, name));
  inline_elementwise_intermediates(inlined);
  instance.func = inlined.func();
  if (inlined_func) *inlined_func = inlined.func();
  return ops::schedule_cpu_default(instance, target).func();
}

}  // namespace detail

NodeKernel compile_node(const Graph& graph, int node, const Target& target) {
  return compile_group(graph, FusedGroup{{node}, node}, target);
}

void run_node(const NodeKernel& kernel, const std::vector<NDArray*>& args) {
  TEMPER_CHECK(args.size() == kernel.args.size(), "kernel ", kernel.function.name(), " takes ", kernel.args.size(),
               " arrays, given ", args.size());
  kernel.function(args);
}

}  // namespace temper::graph
