// GraphExecutor: runs a graph on the host, one compiled kernel per node (node_kernel.h).
//
//   GraphExecutor exec(graph, Target::parse("llvm -mcpu=native"));
//   std::vector<NDArray> out = exec.run({{"input", image}});
//
// By default the executor fuses: it runs identity removal and batch-norm folding
// (pass_remove_identity.h, pass_fold_batch_norm.h) on its copy of the graph, partitions
// it into fused groups (fusion.h) and compiles each group of several nodes as one kernel
// (fused_kernel.h), a lone node as compile_node does. With ExecutorOptions::fuse off
// every node is its own kernel and the graph is run as given. Kernels get the CPU
// default schedule when the executor is made; every value a run produces gets a fresh
// array (no memory planning yet).
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

struct ExecutorOptions {
  bool fuse = true;  // rewrite and fuse the graph (see the file comment); off: one kernel per node
};

class GraphExecutor {
 public:
  // Compiles every kernel (evaluates Constant and Shape nodes, which constant folding
  // normally removed); the errors are compile_node's (an unsupported op names the node).
  GraphExecutor(const Graph& graph, const Target& target, const ExecutorOptions& options);
  GraphExecutor(const Graph& graph, const Target& target) : GraphExecutor(graph, target, ExecutorOptions{}) {}

  std::vector<NDArray> run(const std::map<std::string, NDArray>& inputs) const;

  // The graph it runs: the given one, rewritten by the passes when fusing.
  const Graph& graph() const { return graph_; }
  // Kernels a run calls (evaluated nodes not counted).
  int num_kernels() const;

 private:
  // One group of nodes run at once: a kernel writing `outputs`, or for an evaluated op
  // (Constant, Shape: see GraphOp::evaluate) the arrays it evaluated to.
  struct Step {
    std::vector<ValueId> outputs;
    NodeKernel kernel;
    std::vector<NDArray> evaluated;
  };

  Graph graph_;
  Target target_;
  std::vector<Step> steps_;  // in an order that respects every dependency
};

}  // namespace temper::graph
