#include "compiler/graph/execution_plan.h"

#include <algorithm>
#include <optional>

#include "compiler/graph/fused_kernel.h"
#include "compiler/graph/fusion.h"
#include "compiler/graph/graph_ops.h"
#include "compiler/graph/memory_plan.h"
#include "compiler/graph/optimize.h"
#include "compiler/graph/task_extraction.h"
#include "compiler/ir/error.h"
#include "schedule_space/template.h"

namespace temper::graph {
namespace {

std::vector<int64_t> static_shape(const te::Tensor& t) {
  std::vector<int64_t> shape;
  for (const Expr& e : t.shape()) {
    const int64_t* c = as_const_int(e);
    TEMPER_CHECK(c, "tensor ", t.name(), " has a non-constant extent");
    shape.push_back(*c);
  }
  return shape;
}

class PlanBuilder {
 public:
  PlanBuilder(const Graph& graph, const Target& target, ops::ScheduleSource* schedules)
      : graph_(graph), target_(target), schedules_(schedules) {
    plan_.graph_name = graph.name;
    plan_.target = target.to_string();
    for (const Value& v : graph.values()) {
      PlannedArray a;
      a.name = v.name;
      a.type = v.type;
      if (v.constant) {
        a.kind = PlannedArray::Kind::Constant;
        a.data = *v.constant;
      }
      plan_.arrays.push_back(std::move(a));
    }
    for (ValueId v : graph.inputs()) plan_.arrays[v].kind = PlannedArray::Kind::Input;
    for (ValueId v : graph.outputs()) {
      if (plan_.arrays[v].kind == PlannedArray::Kind::Intermediate) plan_.arrays[v].kind = PlannedArray::Kind::Output;
    }
    plan_.inputs = graph.inputs();
    plan_.outputs = graph.outputs();
  }

  void add_group(const FusedGroup& group, bool fused) {
    if (group.nodes.size() == 1) {
      const Node& node = graph_.nodes()[group.nodes[0]];
      const GraphOp* op = find_graph_op(node.op);
      if (op && op->evaluate) {
        std::vector<NDArray> values = op->evaluate(graph_, node);
        for (size_t o = 0; o < values.size(); ++o) {
          PlannedArray& a = plan_.arrays[node.outputs[o]];
          a.kind = PlannedArray::Kind::Constant;
          a.data = values[o];
        }
        return;
      }
    }
    if (fused && add_tuned_anchor(group)) return;
    const Node& anchor = graph_.nodes()[group.anchor];
    std::string name = str(group.nodes.size() == 1 ? "n" : "f", group.anchor, "_", detail::sanitize(anchor.name));
    add_kernel(schedule_group(graph_, group, target_, name));
  }

  PlanKernels finish() {
    plan_memory(plan_);
    return PlanKernels{std::move(plan_), std::move(scheduled_)};
  }

 private:
  const Graph& graph_;
  Target target_;
  ops::ScheduleSource* schedules_;
  ExecutionPlan plan_;
  std::vector<PrimFunc> scheduled_;

  // A call of the kernel with its arrays' own shapes, or `shapes` where given.
  void add_kernel(const ScheduledKernel& kernel, std::vector<std::vector<int64_t>> shapes = {}) {
    KernelCall call;
    call.function = kernel.func.name;
    call.args = kernel.args;
    call.num_inputs = kernel.num_inputs;
    if (shapes.empty()) {
      for (int id : kernel.args) shapes.push_back(plan_.arrays[id].type.shape);
    }
    call.shapes = std::move(shapes);
    plan_.calls.push_back(std::move(call));
    scheduled_.push_back(kernel.func);
  }

  // The anchor computed by its task's kernel (see the file comment); false when the anchor
  // is no task or no template serves it, and the group is one kernel as usual.
  bool add_tuned_anchor(const FusedGroup& group) {
    const Node& anchor = graph_.nodes()[group.anchor];
    std::optional<NodeTask> task = node_task(graph_, anchor);
    if (!task) return false;
    std::unique_ptr<schedule_space::Task> templated;
    try {
      templated = schedule_space::Task::create(task->workload, target_);
    } catch (const UserError&) {
      return false;
    }
    ++plan_.tasks;
    const ops::OpInstance& op = templated->op();
    Schedule s = schedules_ ? schedules_->schedule_for(task->workload, op, target_)
                            : templated->apply(templated->default_config());

    ScheduledKernel tuned;
    tuned.func = s.func();
    tuned.func.name = str("t", group.anchor, "_", detail::sanitize(anchor.name));
    int result = anchor.outputs[0];
    if (!task->writes_output) {
      result = static_cast<int>(plan_.arrays.size());
      PlannedArray product;
      product.name = anchor.name + "_product";
      product.type = graph_.value(anchor.outputs[0]).type;
      plan_.arrays.push_back(std::move(product));
    }
    std::vector<std::vector<int64_t>> shapes;
    for (size_t i = 0; i < task->inputs.size(); ++i) {
      tuned.args.push_back(anchor.inputs[task->inputs[i]]);
      shapes.push_back(static_shape(op.inputs[i]));
    }
    tuned.num_inputs = static_cast<int>(tuned.args.size());
    tuned.args.push_back(result);
    shapes.push_back(static_shape(op.outputs[0]));
    add_kernel(tuned, std::move(shapes));

    if (task->writes_output && group.nodes.size() == 1) return true;
    AnchorProduct product{result, task->writes_output};
    add_kernel(schedule_group(graph_, group, target_, str("e", group.anchor, "_", detail::sanitize(anchor.name)),
                              &product));
    return true;
  }
};

}  // namespace

PlanKernels make_execution_plan(const Graph& graph, const Target& target, bool fuse, ops::ScheduleSource* schedules) {
  Graph g = graph;
  std::vector<FusedGroup> groups;
  if (fuse) {
    optimize_graph(g);
    groups = partition_for_fusion(g);
  } else {
    for (int n = 0; n < static_cast<int>(g.nodes().size()); ++n) groups.push_back(FusedGroup{{n}, n});
  }
  PlanBuilder builder(g, target, schedules);
  for (const FusedGroup& group : groups) builder.add_group(group, fuse);
  return builder.finish();
}

}  // namespace temper::graph
