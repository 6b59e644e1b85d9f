// What the graph knows of each ONNX op it supports: how to infer its output types, how to
// compute it as tensor expressions, and its fusion pattern. One table (graph_ops_*.cpp,
// by family) that import, shape inference, constant folding and the executor all read.
//
//   const GraphOp* op = find_graph_op("Conv");   // nullptr if unsupported
//   std::vector<TensorType> out = op->infer(graph, node);
//   std::vector<te::Tensor> t = op->compute(graph, node, input_tensors);
//
// infer may read constant inputs' data where the op needs it (Reshape's shape, Slice's
// starts, Pad's pads in opset >= 11, Unsqueeze's axes in opset >= 13): a non-constant one there is a
// ConstantRequiredError naming the node and the input. compute receives one te tensor per input
// (kNoValue inputs: an undefined te::Tensor) and returns one per output, with the inferred
// shapes and dtypes. Both throw UserError naming the node and the attribute or shape they
// cannot serve (an auto_pad value, a broadcast that does not fit, ...).
//
// A node with optional outputs (LayerNormalization's Mean and InvStdDev) gets one type and
// one tensor per output it has; an output Temper cannot compute (MaxPool's Indices,
// BatchNormalization's training statistics) is a UserError naming it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/te/te.h"

namespace temper::graph {

// For fusion (TVM's OpPatternKind): which ops can join which.
enum class OpPattern {
  Elementwise,  // out[i] = f(in[i]) per element, same shape
  Broadcast,    // elementwise with broadcasting
  Injective,    // each output element reads input elements by index (reshape, transpose, concat, ...)
  Reduction,    // reduces axes (softmax, reduce_mean, pooling, ...)
  OutFusable,   // conv, matmul, gemm: elementwise consumers may fuse into its output
  Opaque,       // nothing fuses with it
};

struct GraphOp {
  std::string op;  // ONNX op type
  OpPattern pattern;
  std::function<std::vector<TensorType>(const Graph& graph, const Node& node)> infer;
  std::function<std::vector<te::Tensor>(const Graph& graph, const Node& node, const std::vector<te::Tensor>& inputs)>
      compute;
  // Only for ops whose outputs never depend on input data -- Constant (its attribute) and
  // Shape (its input's type) -- and empty for all others: the outputs as arrays, computed
  // on the host. Import and constant folding call it instead of compiling the node, and
  // for Shape even when its input is not a constant. Constant's compute throws: it is
  // always evaluated, never compiled.
  std::function<std::vector<NDArray>(const Graph& graph, const Node& node)> evaluate = nullptr;
  // Only for OutFusable ops: the node's output from its product -- the bare convolution or
  // A B, shaped as the output, which a tuned kernel computes on its own -- and the node's
  // inputs (Conv's bias, Gemm's beta C). compute is this applied to the op's own product.
  // Empty: the product is the output (MatMul).
  std::function<te::Tensor(const Graph& graph, const Node& node, const std::vector<te::Tensor>& inputs,
                           const te::Tensor& product)>
      epilogue = nullptr;
  // An op only Temper's own passes write (the blocked layout's, graph_ops_nchwc.cpp): no
  // ONNX model may name it, and supported_graph_ops leaves it out.
  bool internal = false;
};

// An op needs the value of a graph value that is not a constant (Reshape's shape fed as a
// graph input, computed from data): Temper's shapes are static. value() names it, for a
// caller that can bind it (ImportOptions::constants) and import again.
class ConstantRequiredError : public UnsupportedError {
 public:
  ConstantRequiredError(const std::string& message, std::string value)
      : UnsupportedError(message), value_(std::move(value)) {}
  const std::string& value() const { return value_; }

 private:
  std::string value_;
};

const GraphOp* find_graph_op(const std::string& op);
// The ONNX op types supported, sorted (for error messages and `temper ops`); internal ops
// are not among them.
std::vector<std::string> supported_graph_ops();

}  // namespace temper::graph
