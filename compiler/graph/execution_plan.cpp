#include "compiler/graph/execution_plan.h"

#include <algorithm>
#include <map>
#include <optional>

#include "compiler/codegen/llvm/host_cpu.h"
#include "compiler/graph/epilogue_fusion.h"
#include "compiler/graph/fused_kernel.h"
#include "compiler/graph/fusion.h"
#include "compiler/graph/graph_ops.h"
#include "compiler/graph/memory_plan.h"
#include "compiler/graph/optimize.h"
#include "compiler/graph/task_extraction.h"
#include "compiler/ir/error.h"
#include "compiler/ops/cpu_schedules.h"
#include "schedule_space/template.h"

namespace temper::graph {
namespace {

std::vector<int64_t> static_shape(const Buffer& b) {
  std::vector<int64_t> shape;
  for (const Expr& e : b->shape) {
    const int64_t* c = as_const_int(e);
    TEMPER_CHECK(c, "buffer ", b->name, " has a non-constant extent");
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
    plan_.cpu_name = host_cpu_name();
    // Only code built for this machine's CPU may use all of its features.
    if (target.mcpu == "native" || target.kind == Target::Kind::C) plan_.cpu_features = host_cpu_features();
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
    if (fused && alias_views(group)) return;
    if (fused && add_tuned_anchor(group)) return;
    add_kernel(schedule_group(graph_, group, target_, kernel_name(graph_, group)));
    plan_.calls.back().layout_conversion = std::any_of(group.nodes.begin(), group.nodes.end(), [&](int n) {
      const std::string& op = graph_.nodes()[n].op;
      return op == "ReorderToNchwc" || op == "ReorderFromNchwc";
    });
  }

  PlanKernels finish() {
    drop_unused_arrays();
    plan_memory(plan_);
    return PlanKernels{std::move(plan_), std::move(scheduled_)};
  }

 private:
  const Graph& graph_;
  Target target_;
  ops::ScheduleSource* schedules_;
  ExecutionPlan plan_;
  std::vector<PrimFunc> scheduled_;

  // Values that are another array read with their own shape (alias_views).
  std::map<int, int> aliases_;

  int resolve(int id) const {
    for (auto it = aliases_.find(id); it != aliases_.end(); it = aliases_.find(id)) id = it->second;
    return id;
  }

  // In a fused build a group of views alone (Reshape, Flatten, Squeeze, Unsqueeze: the same
  // elements in the same order) is no kernel: its output is its input's array, which every later call
  // passes with the shape its parameter has -- unless the output is a graph output, an
  // array of its own. (An attention that reads the heads' projections leaves the
  // exporters' Reshapes to and from the heads alone: no copies.)
  bool alias_views(const FusedGroup& group) {
    for (int n : group.nodes) {
      const std::string& op = graph_.nodes()[n].op;
      if (op != "Reshape" && op != "Flatten" && op != "Squeeze" && op != "Unsqueeze") return false;
    }
    int out = graph_.nodes()[group.nodes.back()].outputs[0];
    if (plan_.arrays[out].kind != PlannedArray::Kind::Intermediate) return false;
    aliases_[out] = resolve(graph_.nodes()[group.nodes.front()].inputs[0]);
    return true;
  }

  // A call of the kernel, each array passed with the shape of its parameter.
  void add_kernel(const ScheduledKernel& kernel) {
    KernelCall call;
    call.function = kernel.func.name;
    call.args = kernel.args;
    for (int& id : call.args) id = resolve(id);
    call.num_inputs = kernel.num_inputs;
    call.workload = kernel.workload;
    for (const Buffer& param : kernel.func.params) call.shapes.push_back(static_shape(param));
    plan_.calls.push_back(std::move(call));
    scheduled_.push_back(kernel.func);
  }

  // The anchor computed by its task's kernel (see the file comment); false when the anchor
  // is no task or no template serves it, and the group is one kernel as usual.
  bool add_tuned_anchor(const FusedGroup& group) {
    const Node& anchor = graph_.nodes()[group.anchor];
    std::optional<NodeTask> task = node_task(graph_, anchor);
    if (!task) return false;
    // A task no template serves (a row reduction, a transpose) is the auto-scheduler's: the
    // op's default schedule, or the log's best trace.
    std::unique_ptr<schedule_space::Task> templated;
    std::optional<ops::OpInstance> untemplated;
    try {
      if (schedule_space::find_template(task->workload.op, target_)) {
        templated = schedule_space::Task::create(task->workload, target_);
      } else {
        untemplated = ops::instantiate(task->workload);
      }
    } catch (const UserError&) {
      return false;
    }
    const ops::OpInstance& op = templated ? templated->op() : *untemplated;
    ++plan_.tasks;
    // The schedule, and the template config it applies (null for a replayed trace).
    std::optional<Schedule> schedule;
    nlohmann::json config;
    if (schedules_) {
      ops::SourcedSchedule sourced = schedules_->schedule_for(task->workload, op, target_);
      schedule = std::move(sourced.schedule);
      config = std::move(sourced.config);
    } else if (templated) {
      config = templated->default_config().to_json();
    } else {
      schedule = ops::schedule_cpu_default(op, target_);
    }
    // A constant weight the config packs is packed here, once.
    std::optional<schedule_space::PrepackedSchedule> prepacked;
    if (templated && !config.is_null()) {
      prepacked = templated->apply_prepacked(templated->space().from_json(config));
      if (prepacked && !graph_.value(anchor.inputs[task->inputs[prepacked->input]]).constant) prepacked.reset();
    }
    if (!schedule && !prepacked) schedule = templated->apply(templated->space().from_json(config));

    ScheduledKernel tuned;
    tuned.func = prepacked ? prepacked->compute.func() : schedule->func();
    tuned.func.name = kernel_name(graph_, group, "t");
    tuned.workload = task->workload.to_string();
    int result = anchor.outputs[0];
    if (!task->writes_output) result = add_array(anchor.name + "_product", graph_.value(anchor.outputs[0]).type);
    for (size_t i = 0; i < task->inputs.size(); ++i) {
      int id = anchor.inputs[task->inputs[i]];
      if (prepacked && prepacked->input == static_cast<int>(i)) id = pack_constant(*prepacked, id, anchor);
      tuned.args.push_back(id);
    }
    tuned.num_inputs = static_cast<int>(tuned.args.size());
    tuned.args.push_back(result);
    if (task->writes_output && group.nodes.size() == 1) {
      add_kernel(tuned);
      return true;
    }
    AnchorProduct product{result, task->writes_output, static_shape(tuned.func.params.back())};
    ScheduledKernel epilogue = schedule_group(graph_, group, target_, kernel_name(graph_, group, "e"), &product);
    // One function when the epilogue moves under the anchor's loops; else two kernels.
    int product_param = static_cast<int>(
        std::find(epilogue.args.begin(), epilogue.args.end(), result) - epilogue.args.begin());
    std::optional<PrimFunc> fused;
    if (product_param < epilogue.num_inputs) {
      fused = fuse_epilogue(tuned.func, epilogue.inlined, product_param, tuned.func.name);
    }
    if (!fused) {
      add_kernel(tuned);
      add_kernel(epilogue);
      return true;
    }
    ScheduledKernel one;
    one.func = *fused;
    one.workload = tuned.workload;
    one.args.assign(tuned.args.begin(), tuned.args.end() - 1);
    for (int i = 0; i < static_cast<int>(epilogue.args.size()); ++i) {
      if (i != product_param) one.args.push_back(epilogue.args[i]);
    }
    one.num_inputs = tuned.num_inputs + epilogue.num_inputs - 1;
    add_kernel(one);
    return true;
  }

  int add_array(const std::string& name, const TensorType& type) {
    PlannedArray a;
    a.name = name;
    a.type = type;
    plan_.arrays.push_back(std::move(a));
    return static_cast<int>(plan_.arrays.size()) - 1;
  }

  // A constant holding the pack function run on constant `id`.
  int pack_constant(const schedule_space::PrepackedSchedule& prepacked, int id, const Node& anchor) {
    NDArray packed = schedule_space::pack_once(prepacked, *graph_.value(id).constant, target_);
    int packed_id = add_array(str(graph_.value(id).name, "_packed_for_", anchor.name), {packed.shape(), packed.dtype()});
    plan_.arrays[packed_id].kind = PlannedArray::Kind::Constant;
    plan_.arrays[packed_id].data = packed;
    return packed_id;
  }

  // Arrays no call, input or output names (values inside a fused kernel, weights only
  // their packed copies are read from) leave the plan; ids are renumbered.
  void drop_unused_arrays() {
    std::vector<bool> used(plan_.arrays.size(), false);
    for (const KernelCall& c : plan_.calls) {
      for (int id : c.args) used[id] = true;
    }
    for (int id : plan_.inputs) used[id] = true;
    for (int id : plan_.outputs) used[id] = true;
    std::vector<int> new_id(plan_.arrays.size(), -1);
    std::vector<PlannedArray> kept;
    for (size_t id = 0; id < plan_.arrays.size(); ++id) {
      if (!used[id]) continue;
      new_id[id] = static_cast<int>(kept.size());
      kept.push_back(std::move(plan_.arrays[id]));
    }
    plan_.arrays = std::move(kept);
    for (KernelCall& c : plan_.calls) {
      for (int& id : c.args) id = new_id[id];
    }
    for (int& id : plan_.inputs) id = new_id[id];
    for (int& id : plan_.outputs) id = new_id[id];
  }
};

}  // namespace

PlanKernels make_execution_plan(const Graph& graph, const Target& target, bool fuse, ops::ScheduleSource* schedules,
                                LayoutChoice layout_choice) {
  Graph g = graph;
  std::vector<FusedGroup> groups;
  LayoutReport layout;
  if (fuse) {
    layout = optimize_graph(g, graph_passes_for(target, layout_choice));
    groups = partition_for_fusion(g);
  } else {
    for (int n = 0; n < static_cast<int>(g.nodes().size()); ++n) groups.push_back(FusedGroup{{n}, n});
  }
  PlanBuilder builder(g, target, schedules);
  for (const FusedGroup& group : groups) builder.add_group(group, fuse);
  PlanKernels planned = builder.finish();
  if (layout.block > 0) planned.plan.layout = str("NCHW", layout.block, "c");
  planned.plan.layout_conversions = layout.conversions;
  return planned;
}

}  // namespace temper::graph
