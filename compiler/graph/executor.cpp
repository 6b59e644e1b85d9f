#include "compiler/graph/executor.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "compiler/codegen/build.h"
#include "compiler/ir/error.h"
#include "compiler/ir/text.h"
#include "compiler/runtime/c_runtime_api.h"
#include "compiler/runtime/shared_library_module.h"

namespace temper::graph {
namespace {

// "graph 'resnet'", or "the graph" when the model did not name it.
std::string label(const ExecutionPlan& plan) {
  return plan.graph_name.empty() ? "the graph" : str("graph '", plan.graph_name, "'");
}

// path with its extension (if any) replaced by suffix.
std::string beside(const std::string& path, const std::string& suffix) {
  std::filesystem::path p(path);
  p.replace_extension();
  return p.string() + suffix;
}

}  // namespace

GraphExecutor::GraphExecutor(ExecutionPlan plan, Target target) : plan_(std::move(plan)), target_(std::move(target)) {
  allocate_storage();
}

GraphExecutor::GraphExecutor(const Graph& graph, const Target& target, const ExecutorOptions& options)
    : target_(target) {
  if (target.is_gpu()) {
    throw UserError(str("whole models run on CPU targets (llvm, c) for now, not '", target.to_string(),
                        "'; on a GPU target Temper builds, runs and tunes single operators (temper run WORKLOAD "
                        "--target ",
                        target_kind_name(target.kind), ")"));
  }
  PlanKernels planned = make_execution_plan(graph, target, options.fuse, options.schedules, options.layout);
  plan_ = std::move(planned.plan);
  scheduled_ = std::move(planned.scheduled);
  if (!scheduled_.empty()) {
    std::shared_ptr<Module> module = build(scheduled_, target_).module;
    for (const KernelCall& call : plan_.calls) functions_.push_back(module->get_function(call.function));
  }
  allocate_storage();
}

void GraphExecutor::allocate_storage() {
  for (int64_t bytes : plan_.storage_bytes)
    storage_.push_back(NDArray::empty({std::max<int64_t>(bytes, 1)}, DataType::uint8()));
}

std::string GraphExecutor::plan_path_for(const std::string& library_path) {
  return beside(library_path, ".plan.json");
}

std::string GraphExecutor::weights_path_for(const std::string& library_path) {
  return beside(library_path, ".weights");
}

void GraphExecutor::export_library(const std::string& library_path) const {
  if (scheduled_.empty() && !plan_.calls.empty()) {
    throw UserError(str("cannot export ", library_path,
                        ": this executor was loaded from a built model, which holds "
                        "no kernels to compile; export from an executor made from the graph"));
  }
  if (!scheduled_.empty()) temper::export_library(scheduled_, target_, library_path);
  save_execution_plan(plan_, plan_path_for(library_path), weights_path_for(library_path));
}

std::unique_ptr<GraphExecutor> GraphExecutor::load(const std::string& library_path) {
  ExecutionPlan plan = load_execution_plan(plan_path_for(library_path), weights_path_for(library_path));
  Target target = Target::parse(plan.target);
  std::unique_ptr<GraphExecutor> exec(new GraphExecutor(std::move(plan), target));
  if (exec->plan_.calls.empty()) return exec;
  std::shared_ptr<Module> module = load_shared_library(library_path);
  for (const KernelCall& call : exec->plan_.calls) {
    try {
      exec->functions_.push_back(module->get_function(call.function));
    } catch (const UserError& e) {
      throw UserError(str("model library '", library_path, "' does not match its plan: ", e.what(),
                          "; rebuild the model with `temper build`"));
    }
  }
  return exec;
}

std::vector<NDArray> GraphExecutor::run(const std::map<std::string, NDArray>& inputs,
                                        std::vector<double>* call_seconds) const {
  std::vector<NDArray> arrays(plan_.arrays.size());
  std::vector<std::string> input_names;
  for (int id : plan_.inputs) input_names.push_back(plan_.arrays[id].name);
  for (const auto& [name, array] : inputs) {
    auto it =
        std::find_if(plan_.inputs.begin(), plan_.inputs.end(), [&](int id) { return plan_.arrays[id].name == name; });
    if (it == plan_.inputs.end()) {
      throw UserError(str(label(plan_), " has no input '", name, "'; its inputs are: ", join(input_names, ", ")));
    }
    const TensorType& expected = plan_.arrays[*it].type;
    TensorType given{array.shape(), array.dtype()};
    if (!array.defined() || given != expected) {
      throw UserError(str("input '", name, "' of ", label(plan_), " expects ", expected.to_string(), ", given ",
                          array.defined() ? given.to_string() : std::string("an empty array")));
    }
    arrays[*it] = array;
  }
  for (int id : plan_.inputs) {
    if (!arrays[id].defined()) {
      throw UserError(str("input '", plan_.arrays[id].name, "' (", plan_.arrays[id].type.to_string(), ") of ",
                          label(plan_), " is not given"));
    }
  }
  for (size_t id = 0; id < plan_.arrays.size(); ++id) {
    const PlannedArray& a = plan_.arrays[id];
    if (a.kind == PlannedArray::Kind::Constant) arrays[id] = a.data;
    if (a.kind == PlannedArray::Kind::Output) arrays[id] = NDArray::empty(a.type.shape, a.type.dtype);
  }

  std::lock_guard<std::mutex> lock(run_mutex_);
  if (call_seconds) call_seconds->clear();
  if (target_.num_cores > 0) temper_set_num_threads(target_.num_cores);
  std::vector<TemperTensor> args;
  for (size_t c = 0; c < plan_.calls.size(); ++c) {
    const KernelCall& call = plan_.calls[c];
    args.clear();
    for (size_t i = 0; i < call.args.size(); ++i) {
      const PlannedArray& a = plan_.arrays[call.args[i]];
      TemperTensor t{};
      if (a.kind == PlannedArray::Kind::Intermediate) {
        t = storage_[a.storage].tensor();
        t.code = static_cast<uint8_t>(a.type.dtype.code());
        t.bits = static_cast<uint8_t>(a.type.dtype.bits());
        t.lanes = 1;
      } else {
        t = arrays[call.args[i]].tensor();
      }
      t.shape = call.shapes[i].data();
      t.ndim = static_cast<int32_t>(call.shapes[i].size());
      t.strides = nullptr;
      args.push_back(t);
    }
    if (!call_seconds) {
      functions_[c](args);
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    functions_[c](args);
    call_seconds->push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }

  std::vector<NDArray> outputs;
  for (int id : plan_.outputs) outputs.push_back(arrays[id]);
  return outputs;
}

}  // namespace temper::graph
