#include "compiler/graph/executor.h"

#include <algorithm>

#include "compiler/graph/fused_kernel.h"
#include "compiler/graph/fusion.h"
#include "compiler/graph/graph_ops.h"
#include "compiler/graph/pass_fold_batch_norm.h"
#include "compiler/graph/pass_remove_identity.h"
#include "compiler/ir/error.h"
#include "compiler/ir/text.h"
#include "compiler/runtime/c_runtime_api.h"

namespace temper::graph {
namespace {

// "graph 'resnet'", or "the graph" when the model did not name it.
std::string label(const Graph& graph) {
  return graph.name.empty() ? "the graph" : str("graph '", graph.name, "'");
}

}  // namespace

GraphExecutor::GraphExecutor(const Graph& graph, const Target& target, const ExecutorOptions& options)
    : graph_(graph), target_(target) {
  std::vector<FusedGroup> groups;
  if (options.fuse) {
    remove_identity(graph_);
    fold_batch_norm(graph_);
    groups = partition_for_fusion(graph_);
  } else {
    for (int n = 0; n < static_cast<int>(graph_.nodes().size()); ++n) groups.push_back(FusedGroup{{n}, n});
  }
  for (const FusedGroup& group : groups) {
    Step step;
    if (group.nodes.size() > 1) {
      step.kernel = compile_group(graph_, group, target_);
      // The kernel's args are its inputs, then what the group writes.
      for (ValueId v : step.kernel.args) {
        int producer = graph_.value(v).producer;
        if (std::find(group.nodes.begin(), group.nodes.end(), producer) != group.nodes.end()) {
          step.outputs.push_back(v);
        }
      }
    } else {
      int n = group.nodes[0];
      const Node& node = graph_.nodes()[n];
      step.outputs = node.outputs;
      const GraphOp* op = find_graph_op(node.op);
      if (op && op->evaluate) {
        step.evaluated = op->evaluate(graph_, node);
      } else {
        step.kernel = compile_node(graph_, n, target_);
      }
    }
    steps_.push_back(std::move(step));
  }
}

int GraphExecutor::num_kernels() const {
  return static_cast<int>(
      std::count_if(steps_.begin(), steps_.end(), [](const Step& step) { return step.kernel.function.defined(); }));
}

std::vector<NDArray> GraphExecutor::run(const std::map<std::string, NDArray>& inputs) const {
  std::vector<NDArray> arrays(graph_.values().size());
  std::vector<std::string> input_names;
  for (ValueId v : graph_.inputs()) input_names.push_back(graph_.value(v).name);
  for (const auto& [name, array] : inputs) {
    ValueId v = graph_.find(name);
    bool is_input =
        v != kNoValue && std::find(graph_.inputs().begin(), graph_.inputs().end(), v) != graph_.inputs().end();
    if (!is_input) {
      throw UserError(str(label(graph_), " has no input '", name, "'; its inputs are: ", join(input_names, ", ")));
    }
    const TensorType& expected = graph_.value(v).type;
    TensorType given{array.shape(), array.dtype()};
    if (!array.defined() || given != expected) {
      throw UserError(str("input '", name, "' of ", label(graph_), " expects ", expected.to_string(), ", given ",
                          array.defined() ? given.to_string() : std::string("an empty array")));
    }
    arrays[v] = array;
  }
  for (ValueId v : graph_.inputs()) {
    if (!arrays[v].defined()) {
      throw UserError(str("input '", graph_.value(v).name, "' (", graph_.value(v).type.to_string(), ") of ",
                          label(graph_), " is not given"));
    }
  }
  for (ValueId v = 0; v < static_cast<ValueId>(graph_.values().size()); ++v) {
    if (graph_.value(v).constant) arrays[v] = *graph_.value(v).constant;
  }

  if (target_.num_cores > 0) temper_set_num_threads(target_.num_cores);
  for (const Step& step : steps_) {
    if (!step.kernel.function.defined()) {
      for (size_t o = 0; o < step.outputs.size(); ++o) arrays[step.outputs[o]] = step.evaluated[o];
      continue;
    }
    for (ValueId out : step.outputs) {
      const TensorType& type = graph_.value(out).type;
      arrays[out] = NDArray::empty(type.shape, type.dtype);
    }
    std::vector<NDArray*> args;
    for (ValueId v : step.kernel.args) args.push_back(&arrays[v]);
    run_node(step.kernel, args);
  }

  std::vector<NDArray> outputs;
  for (ValueId v : graph_.outputs()) outputs.push_back(arrays[v]);
  return outputs;
}

}  // namespace temper::graph
