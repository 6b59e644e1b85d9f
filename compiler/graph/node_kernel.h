// One graph node as a compiled kernel: its te compute over placeholders of its inputs'
// types, made into a PrimFunc (parameters: the node's present inputs in order, then its
// outputs), given a CPU default schedule (compiler/ops/cpu_schedules.h) and built for the
// target. Shared by constant folding and the executor.
#pragma once

#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/runtime/module.h"
#include "compiler/target/target.h"

namespace temper::graph {

struct NodeKernel {
  std::vector<ValueId> args;  // the values passed, in parameter order (inputs, then outputs)
  PackedFunc function;        // keeps its compiled code alive
};

NodeKernel compile_node(const Graph& graph, int node, const Target& target);
// Runs the kernel on arrays for its args, in args' order.
void run_node(const NodeKernel& kernel, const std::vector<NDArray*>& args);

}  // namespace temper::graph
