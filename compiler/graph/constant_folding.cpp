#include "compiler/graph/constant_folding.h"

#include <algorithm>

#include "compiler/graph/graph_ops.h"
#include "compiler/graph/node_kernel.h"
#include "compiler/graph/shape_inference.h"

namespace temper::graph {
namespace {

// Evaluated ops (Constant, Shape) fold whatever their inputs are.
bool foldable(const Graph& graph, const Node& node, const GraphOp& op) {
  if (op.evaluate) return true;
  return std::all_of(node.inputs.begin(), node.inputs.end(),
                     [&](ValueId v) { return v == kNoValue || graph.value(v).constant.has_value(); });
}

// The node's outputs, computed by its kernel on the constant inputs.
std::vector<NDArray> run_on_constants(const Graph& graph, int n, const Target& host) {
  NodeKernel kernel = compile_node(graph, n, host);
  std::vector<NDArray> arrays;
  for (ValueId v : kernel.args) {
    const Value& value = graph.value(v);
    arrays.push_back(value.constant ? *value.constant : NDArray::empty(value.type.shape, value.type.dtype));
  }
  std::vector<NDArray*> pointers;
  for (NDArray& a : arrays) pointers.push_back(&a);
  run_node(kernel, pointers);
  // The outputs are the last arguments.
  return std::vector<NDArray>(arrays.end() - static_cast<std::ptrdiff_t>(graph.nodes()[n].outputs.size()),
                              arrays.end());
}

}  // namespace

int fold_constants(Graph& graph) {
  // Folding runs on the compiling machine, whatever the model is built for: a generic
  // host target, compiled without tuning.
  const Target host = Target::parse("llvm");
  int folded = 0;
  // Nodes are in topological order, so a node's folded producers are constants by the
  // time it is visited, and whole chains fold in one pass.
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    Node& node = graph.nodes()[n];
    // Typed as the sweep reaches it: a Reshape's output type is known only once the
    // Shape chain computing its target shape has folded.
    infer_node_types(graph, node);
    const GraphOp& op = *find_graph_op(node.op);
    if (!foldable(graph, node, op)) continue;
    std::vector<NDArray> outputs = op.evaluate ? op.evaluate(graph, node) : run_on_constants(graph, n, host);
    TEMPER_CHECK(outputs.size() == node.outputs.size(), "node ", node.name, " (", node.op, ") folds to ",
                 outputs.size(), " arrays for ", node.outputs.size(), " outputs");
    for (size_t o = 0; o < outputs.size(); ++o) {
      Value& value = graph.value(node.outputs[o]);
      value.constant = outputs[o];
      value.producer = -1;
    }
    // The node no longer produces anything: remove_dead drops it.
    node.outputs.clear();
    ++folded;
  }
  if (folded > 0) graph.remove_dead();
  return folded;
}

}  // namespace temper::graph
