// One graph node as a compiled kernel: its te compute over placeholders of its inputs'
// types, made into a PrimFunc (parameters: the node's present inputs in order, then its
// outputs), given a CPU default schedule (compiler/ops/cpu_schedules.h) and built for the
// target. Shared by constant folding and the executor.
#pragma once

#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/runtime/module.h"
#include "compiler/schedule/schedule.h"
#include "compiler/target/target.h"
#include "compiler/te/te.h"

namespace temper::graph {

struct NodeKernel {
  std::vector<ValueId> args;  // the values passed, in parameter order (inputs, then outputs)
  PackedFunc function;        // keeps its compiled code alive
};

// The node as a group of its own (fused_kernel.h): its present inputs, then its outputs.
NodeKernel compile_node(const Graph& graph, int node, const Target& target);
// Runs the kernel on arrays for its args, in args' order.
void run_node(const NodeKernel& kernel, const std::vector<NDArray*>& args);

// The steps of compile_node that fused kernels (fused_kernel.h) take too.
namespace detail {

// Letters, digits and '_' only (at most 48), so that the name is a C identifier in either backend.
std::string sanitize(const std::string& name);
// A copy of t under a new name: a PrimFunc parameter must be written by its own stage, so
// an output that is an input (Identity) or another output is copied.
te::Tensor copy_of(const te::Tensor& t, const std::string& name);
// TEMPER_CHECK that output `index` of node computes t with the inferred type.
void check_output_type(const Node& node, int index, const te::Tensor& t, const TensorType& expected);
// Intermediate stages that only feed non-reduction stages are substituted into them:
// the elementwise steps of one op (a cast before a clip, a pad before a pool) then cost
// no buffer and no loop of their own. A producer read by a reduction stays materialised,
// since inlining would recompute it for every reduction step.
void inline_elementwise_intermediates(Schedule& s);
// The function over params (the first num_inputs read, the rest written) named name:
// intermediates inlined as above, then the CPU default schedule for target.
// inlined (when not null) receives the function before the default schedule.
PrimFunc schedule_function(const std::vector<te::Tensor>& params, size_t num_inputs, const std::string& name,
                           const Target& target, PrimFunc* inlined = nullptr);

}  // namespace detail

}  // namespace temper::graph
