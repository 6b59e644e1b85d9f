// What a built model is apart from its machine code: the arrays a run uses, the kernel
// calls in order, and where each intermediate lives. GraphExecutor (executor.h) makes
// one from a graph, with the scheduled kernels it names, or reads one that `temper build`
// wrote beside the model's shared library (TVM's graph JSON and params).
//
// Making it (make_execution_plan): the graph is rewritten by optimize_graph (on a CPU
// into the blocked layout, pass_nchwc_layout.h) and partitioned into fused groups (fusion.h), unless fuse is off (then every node is its own
// group, as given). A group whose anchor is a tuning task (task_extraction.h: Conv, Gemm,
// MatMul) gets the task's kernel -- the workload's op, scheduled by `schedules` (the log's
// best through ApplyHistoryBest) or, without one, by the template's default config --
// writing the anchor's product; the rest of the group (the anchor's bias or beta C, then
// its fused epilogue), if any, is moved into that kernel's loops (epilogue_fusion.h), or
// runs as a second kernel where the schedule cannot take it. Where the task's config packs
// a constant weight (conv2d's NCHWc blocks, dense's transposed weight: the layout the
// template wants), the weight is packed once here and the kernel reads the packed
// constant (schedule_space::Task::apply_prepacked). Every other group is one kernel
// (fused_kernel.h), but for a group of views alone (Reshape, Flatten, Squeeze, Unsqueeze),
// which is no kernel: later calls read its input's array with the view's shape (a graph
// output stays an array of its own). Constant and Shape nodes left unfolded are evaluated
// into constants.
// Arrays no call reads or writes leave the plan (values inside a fused kernel, weights
// read only packed), and intermediates share storage (memory_plan.h).
//
// Files (save_execution_plan / load_execution_plan): a JSON plan (format
// "temper-execution-plan", version 1: arrays, calls, storage, the target) and a weights
// file holding the constants' bytes back to back, 64-byte aligned, with its size and
// FNV-1a hash recorded in the plan. Loading refuses another format or version, a damaged
// or truncated file, weights that do not match the plan, and a plan built for CPU
// features this machine lacks, with a message saying to rebuild the model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/graph/pass_nchwc_layout.h"
#include "compiler/ops/schedule_source.h"
#include "compiler/target/target.h"

namespace temper::graph {

struct PlannedArray {
  enum class Kind { Input, Constant, Output, Intermediate };
  std::string name;
  TensorType type;
  Kind kind = Kind::Intermediate;
  int storage = -1;  // an Intermediate's storage block (memory_plan.h)
  NDArray data;      // a Constant's data
};

struct KernelCall {
  std::string function;  // the compiled function's name
  std::vector<int> args;  // arrays, the num_inputs read first, then those written
  int num_inputs = 0;
  // The shape each argument is passed with: the array's own, or another view of the same
  // elements in the same order (a tuned matmul reads a [1, 128, 768] array as [128, 768]).
  std::vector<std::vector<int64_t>> shapes;
  // The tuning task whose schedule this kernel runs (its canonical workload string), so a
  // profile can set the kernel's time in the model beside the log's; empty for the rest.
  std::string workload;
  // Whether the kernel converts between NCHW and the blocked layout (its group holds a
  // ReorderToNchwc or ReorderFromNchwc; pass_nchwc_layout.h): what --profile counts.
  bool layout_conversion = false;
};

struct ExecutionPlan {
  std::string graph_name;
  std::string target;  // Target::to_string() of what the kernels were built for
  // The building machine's CPU (codegen/llvm/host_cpu.h), and for a "native" target its
  // features: such code may use any of them, so a machine lacking one cannot load it.
  std::string cpu_name;
  std::string cpu_features;  // "+avx2,+fma,-avx512f,..."; empty for other targets
  std::vector<PlannedArray> arrays;
  std::vector<int> inputs;   // the graph's inputs, in order
  std::vector<int> outputs;  // the graph's outputs, in order (an output may be an input or constant)
  std::vector<KernelCall> calls;
  std::vector<int64_t> storage_bytes;  // one per storage block
  // Tuning tasks found among the anchors, and how many were given a schedule by `schedules`.
  int tasks = 0;
  // The activations' layout ("NCHW16c" when the convs run blocked, else "NCHW") and where
  // the graph converts (LayoutReport::conversions).
  std::string layout = "NCHW";
  std::vector<std::string> layout_conversions;
};

// A plan and the scheduled kernels its calls name: what build() compiles.
struct PlanKernels {
  ExecutionPlan plan;
  std::vector<PrimFunc> scheduled;  // one per distinct KernelCall::function
};

// See the file comment. schedules may be nullptr. The errors are the graph's: an
// unsupported op names the node. Expects a verified graph with inferred types.
PlanKernels make_execution_plan(const Graph& graph, const Target& target, bool fuse,
                                ops::ScheduleSource* schedules, LayoutChoice layout = LayoutChoice::Blocked);

void save_execution_plan(const ExecutionPlan& plan, const std::string& plan_path, const std::string& weights_path);
ExecutionPlan load_execution_plan(const std::string& plan_path, const std::string& weights_path);

}  // namespace temper::graph
