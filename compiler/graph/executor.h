// GraphExecutor: runs a model on the host from its execution plan (execution_plan.h) and
// the plan's kernels, compiled in memory from a graph or loaded from a library that
// export_library wrote.
//
//   GraphExecutor exec(graph, Target::parse("llvm -mcpu=native"));   // template defaults
//   std::vector<NDArray> out = exec.run({{"input", image}});
//
//   search::ApplyHistoryBest best(db, &std::cerr);                  // the log's best
//   GraphExecutor tuned(graph, target, ExecutorOptions{.schedules = &best});
//   tuned.export_library("model.so");     // model.so, model.plan.json, model.weights
//   GraphExecutor loaded = GraphExecutor::load("model.so");
//
// By default the executor fuses: optimize_graph, then fused groups, a tuning task's anchor
// computed by the task's kernel (execution_plan.h). With ExecutorOptions::fuse off every
// node is its own kernel and the graph is run as given. All kernels are compiled into one
// module. Intermediates live in storage blocks shared by arrays whose lifetimes do not
// overlap (memory_plan.h), allocated once per executor; outputs are fresh arrays each run
// (an output that is an input or a constant is that array).
//
// run() checks its inputs against the graph's: each graph input given once, with its
// shape and dtype, and no name the graph does not have (UserError naming the input, what
// was expected and what was given). Outputs come back in the graph's output order. Runs
// from several threads take turns (the storage blocks are shared).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compiler/graph/execution_plan.h"
#include "compiler/graph/graph.h"
#include "compiler/ops/schedule_source.h"
#include "compiler/runtime/module.h"
#include "compiler/target/target.h"

namespace temper::graph {

struct ExecutorOptions {
  bool fuse = true;  // rewrite and fuse the graph (see the file comment); off: one kernel per node
  // Where each tuning task's schedule comes from (search::ApplyHistoryBest over a log);
  // nullptr: the task's template default. Only used while the executor is made.
  ops::ScheduleSource* schedules = nullptr;
  // The activations' layout (execution_plan.h); only with fuse.
  LayoutChoice layout = LayoutChoice::Blocked;
};

class GraphExecutor {
 public:
  // Plans and compiles every kernel; the errors are make_execution_plan's (an unsupported
  // op names the node). CPU targets only: a GPU target is a UserError.
  GraphExecutor(const Graph& graph, const Target& target, const ExecutorOptions& options);
  GraphExecutor(const Graph& graph, const Target& target) : GraphExecutor(graph, target, ExecutorOptions{}) {}

  // A model export_library wrote: the library at path, the plan and weights beside it
  // (plan_path_for, weights_path_for). UserError for a missing or damaged file, or a
  // library that lacks a kernel of the plan, saying to rebuild.
  static std::unique_ptr<GraphExecutor> load(const std::string& library_path);
  // Writes the kernels as one shared library at library_path (LLVM targets), and the plan
  // and weights beside it. UserError for a loaded executor (it has no kernels to compile).
  void export_library(const std::string& library_path) const;
  static std::string plan_path_for(const std::string& library_path);
  static std::string weights_path_for(const std::string& library_path);

  // call_seconds (when not null) receives each kernel call's wall time, in plan order.
  std::vector<NDArray> run(const std::map<std::string, NDArray>& inputs,
                           std::vector<double>* call_seconds = nullptr) const;

  const ExecutionPlan& plan() const { return plan_; }
  // Kernel calls in one run.
  int num_kernels() const { return static_cast<int>(plan_.calls.size()); }

 private:
  GraphExecutor(ExecutionPlan plan, Target target);
  void allocate_storage();

  ExecutionPlan plan_;
  Target target_;
  std::vector<PrimFunc> scheduled_;  // empty for a loaded executor
  std::vector<PackedFunc> functions_;  // one per call
  mutable std::mutex run_mutex_;
  std::vector<NDArray> storage_;  // one per storage block
};

}  // namespace temper::graph
