// GraphExecutor: runs a graph on the host, one compiled kernel per node (node_kernel.h).
//
//   GraphExecutor exec(graph, Target::parse("llvm -mcpu=native"));
//   std::vector<NDArray> out = exec.run({{"input", image}});
//
// This first executor is unfused and unplanned: every node is its own kernel, compiled
// with the CPU default schedule when the executor is made, and every value a run
// produces gets a fresh array. Fusion, tuned schedules and memory planning (buffers
// reused across values) come with the graph passes that provide them.
//
// run() checks its inputs against the graph's: each graph input given once, with its
// shape and dtype, and no name the graph does not have (UserError naming the input, what
// was expected and what was given). Constants are the graph's own arrays, passed to the
// kernels as arguments. Outputs come back in the graph's output order.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/graph/node_kernel.h"
#include "compiler/target/target.h"

namespace temper::graph {

class GraphExecutor {
 public:
  // Compiles every node (evaluates Constant and Shape nodes, which constant folding
  // normally removed); the errors are compile_node's (an unsupported op names the node).
  GraphExecutor(const Graph& graph, const Target& target);

  std::vector<NDArray> run(const std::map<std::string, NDArray>& inputs) const;

  const Graph& graph() const { return graph_; }

 private:
  Graph graph_;
  Target target_;
  // Per node, in node order: its kernel, or for an evaluated op (Constant, Shape: see
  // GraphOp::evaluate) the outputs it evaluated to.
  std::vector<NodeKernel> kernels_;
  std::vector<std::vector<NDArray>> evaluated_;
};

}  // namespace temper::graph
