// What the graph_ops_*.cpp families share: reading a node's inputs, attributes and
// constant inputs, broadcasting, and naming the te tensors a node computes. Internal to
// the op table (graph_ops.h is the interface).
//
// Errors thrown here name the input or attribute but not the node: the table
// (graph_ops.cpp) prefixes every UserError an op's infer or compute throws with
// "<op> node '<name>': ".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/graph_ops.h"

namespace temper::graph::detail {

using Shape = std::vector<int64_t>;

// The families of the table, each in its graph_ops_<family>.cpp.
std::vector<GraphOp> elementwise_graph_ops();     // arithmetic, math, activations, Clip, Identity, Cast
std::vector<GraphOp> logical_graph_ops();         // comparisons, And/Or/Xor/Not, IsNaN/IsInf, Where
std::vector<GraphOp> reduce_graph_ops();          // ReduceSum/Mean/Max/..., ArgMax/ArgMin
std::vector<GraphOp> tensor_graph_ops();          // ConstantOfShape, Range, Expand, Tile, Split, Trilu, ...
std::vector<GraphOp> loss_graph_ops();            // NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
std::vector<GraphOp> conv_transpose_graph_ops();  // ConvTranspose
std::vector<GraphOp> resize_graph_ops();          // Resize, Upsample
std::vector<GraphOp> einsum_graph_ops();          // Einsum
std::vector<GraphOp> nn_graph_ops();              // Conv, Gemm, MatMul, pooling, normalisations, softmax
std::vector<GraphOp> shape_graph_ops();           // Reshape, Transpose, Concat, Pad, Slice, Gather, Shape, ...
std::vector<GraphOp> nchwc_graph_ops();           // the blocked layout's conversions and convs (internal)
std::vector<GraphOp> attention_graph_ops();       // Attention (internal; pass_fuse_attention.h)

// UserError unless the node has between min_inputs and max_inputs inputs (omitted
// optional ones included), and at most max_outputs outputs.
void check_arity(const Node& node, int min_inputs, int max_inputs, int max_outputs = 1);

// Whether input i is present (not omitted, not past the end).
bool has_input(const Node& node, int i);
// The type of input i, which must be present: UserError naming `role` otherwise.
const TensorType& input_type(const Graph& graph, const Node& node, int i, const std::string& role);
// The data of input i, which must be a constant: ConstantRequiredError naming the input,
// its role and why the value is needed otherwise.
const NDArray& constant_input(const Graph& graph, const Node& node, int i, const std::string& role);
// A constant integer input (shapes, axes, pads, starts) as int64 values.
std::vector<int64_t> constant_ints(const Graph& graph, const Node& node, int i, const std::string& role);

// An attribute list of ints with `count` entries, or `count` copies of fallback when the
// attribute is absent; UserError when it has another length.
std::vector<int64_t> ints_attr(const Node& node, const std::string& name, size_t count, int64_t fallback);

// axis in [0, rank); negative counts from the end. UserError naming `what` when out of range.
int normalize_axis(int64_t axis, int64_t rank, const std::string& what);

// numpy's (ONNX's multidirectional) broadcast of two shapes; UserError naming both types.
Shape broadcast_shapes(const TensorType& a, const TensorType& b);

// The element of t read at output index i of a broadcast result of rank i.size(): t's
// dimensions align with the last ones of the output, and an extent-1 dimension reads 0.
Expr broadcast_load(const te::Tensor& t, const std::vector<Var>& i);

// UserError unless type is floating point.
void check_float(const TensorType& type, const std::string& what);
// UserError unless a and b have one dtype.
void check_same_dtype(const TensorType& a, const TensorType& b, const std::string& a_role, const std::string& b_role);

// The name of the te tensor computing output o: the graph value's name made an identifier.
std::string output_name(const Graph& graph, const Node& node, int o);

// Shape expressions for te (int32 constants).
std::vector<Expr> shape_exprs(const Shape& shape);
// The static extents of a te tensor.
Shape static_shape(const te::Tensor& t);

// The window of a 2-D Conv node with auto_pad resolved as its compute resolves it:
// strides and dilations (height, width) and pads (top, left, bottom, right). UserError for
// a Conv that is not 2-D or whose shapes do not fit.
struct ConvWindow2d {
  Shape strides, dilations, pads;
};
ConvWindow2d conv2d_window(const Graph& graph, const Node& node);

// How many rows of additive key biases an Attention mask of shape `mask` holds for scores
// whose leading (batch, head) extents are `batch` and whose keys number `keys`: the mask,
// its rank padded with leading 1s to the scores', must be [.., 1, keys] with leading
// extents equal to the scores' up to some dimension and 1 after it ([N, 1, 1, T] for a
// batch of N x heads), so that batch entry b of the flattened scores reads mask row
// b / (B / rows). nullopt for any other shape.
std::optional<int64_t> attention_mask_rows(const Shape& batch, int64_t keys, const Shape& mask);

// The compute of an op whose one output is f(node, x) for each element x of its one input.
using ElementFn = std::function<Expr(const Node& node, const Expr& x)>;
decltype(GraphOp::compute) map_elements(ElementFn f);

// x - m - log(sum e^(x - m)) along axis, m the maximum there: LogSoftmax's (opset 13) and
// the cross-entropy loss's.
te::Tensor log_softmax(const te::Tensor& x, int64_t axis, const std::string& name);

// The element type of TensorProto.DataType `code`, read from the node's `attribute`
// (Cast's to, EyeLike's dtype); UnsupportedError naming both for a type Temper does not
// compute (string, complex, bfloat16).
DataType onnx_dtype(int64_t code, const std::string& attribute);

// "[1,2,3]" for messages.
std::string ints_str(const std::vector<int64_t>& values);

}  // namespace temper::graph::detail
