// The blocked-layout ops (ops/nchwc.h) that the NCHWc layout pass (pass_nchwc_layout.h)
// writes into a graph. They are internal: no ONNX model may name them (import refuses
// them, `temper ops` does not list them). Every one carries the logical channel count of
// its output as attribute "channels", so a reader of the graph knows the tail lanes.
//
//   ReorderToNchwc      X [N, C, H, W] -> [N, ceil(C/b), H, W, b], tail lanes 0 (attr block)
//   ReorderFromNchwc    X [N, Cb, H, W, b] -> [N, channels, H, W]
//   NchwcConv           X [N, Ci, H, W, cb] (or NCHW [N, C, H, W]: cb = 1), W packed
//                       [Ko, Ci, R, S, cb, kb], optional B [Ko, kb] -> [N, Ko, P, Q, kb];
//                       attrs strides, pads (top, left, bottom, right), dilations,
//                       in_channels (logical C), channels (logical K), group (default
//                       1; W then [Ko, Ci/Gb, R, S, cb, kb], ops::nchwc_block_groups)
//   NchwcDepthwiseConv  X [N, Cb, H, W, b], W [Cb, R, S, b], optional B [Cb, b]; attrs as
//                       NchwcConv
//   NchwcWinogradConv   a 3x3 stride-1 conv by Winograd's F(tile x tile, 3x3) (ops/winograd.h):
//                       X [N, Cb, H, W, b], W transformed [a, a, Ko, Cb, b, b], optional
//                       B [Ko, b]; attrs pads, tile, in_channels, channels
//   NchwcDepthwisePointwiseConv
//                       a NchwcDepthwiseConv, its bias and activation, then a 1x1 NchwcConv
//                       over that (ops::depthwise_pointwise_nchwc; written by
//                       pass_fuse_depthwise_pointwise.h): X [N, Cb, H, W, b], Wdw [Cb, R, S,
//                       b], Bdw [Cb, b], Wpw [Ko, Cb, 1, 1, b, b], optional B [Ko, b]; attrs
//                       the depthwise conv's strides, pads, dilations, activation ("none",
//                       "relu", "relu6"), in_channels (its C), channels (the 1x1 conv's K)
// (The blocked pools, NchwcMaxPool, NchwcAveragePool and NchwcGlobalAveragePool, are
// graph_ops_nn.cpp's pooling with a trailing lane dimension.)
#include "compiler/graph/graph_ops_common.h"
#include "compiler/ops/nchwc.h"
#include "compiler/ops/shape.h"
#include "compiler/ops/winograd.h"

namespace temper::graph::detail {

namespace {

// ---------------------------------------------------------------- conversions

std::vector<TensorType> infer_reorder_to(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  const TensorType& x = input_type(graph, node, 0, "X");
  if (x.shape.size() != 4) throw UserError(str("input X is ", x.to_string(), "; the blocked layout takes NCHW"));
  int64_t b = node.attrs.get_int("block");
  return {{{x.shape[0], ops::channel_blocks(x.shape[1], b), x.shape[2], x.shape[3], b}, x.dtype}};
}

std::vector<te::Tensor> compute_reorder_to(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const TensorType& x = graph.value(node.inputs[0]).type;
  Shape out = graph.value(node.outputs[0]).type.shape;
  int64_t C = x.shape[1], b = out[4];
  const te::Tensor& t = in[0];
  return {te::compute(
      shape_exprs(out),
      [&](Var n, Var co, Var h, Var w, Var ci) {
        Expr c = ops::times(co, b) + ci;
        if (C % b == 0) return t(n, c, h, w);
        // The tail lanes are 0; the clamped index keeps their (unused) read in bounds.
        return select(c < ops::index_const(C), t(n, min(c, ops::index_const(C - 1)), h, w), make_const(x.dtype, 0.0));
      },
      output_name(graph, node, 0), "injective")};
}

std::vector<TensorType> infer_reorder_from(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  const TensorType& x = input_type(graph, node, 0, "X");
  int64_t C = node.attrs.get_int("channels");
  if (x.shape.size() != 5 || ops::channel_blocks(C, x.shape[4]) != x.shape[1]) {
    throw UserError(str("input X is ", x.to_string(), ", not ", C, " channels in the blocked layout"));
  }
  return {{{x.shape[0], C, x.shape[2], x.shape[3]}, x.dtype}};
}

std::vector<te::Tensor> compute_reorder_from(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  int64_t b = graph.value(node.inputs[0]).type.shape[4];
  const te::Tensor& t = in[0];
  return {te::compute(
      shape_exprs(graph.value(node.outputs[0]).type.shape),
      [&](Var n, Var c, Var h, Var w) {
        return t(n, floordiv(c, ops::index_const(b)), h, w, floormod(c, ops::index_const(b)));
      },
      output_name(graph, node, 0), "injective")};
}

// ---------------------------------------------------------------- convolutions

ops::Window2d window_attrs(const Node& node) {
  ops::Window2d window;
  Shape s = ints_attr(node, "strides", 2, 1);
  Shape d = ints_attr(node, "dilations", 2, 1);
  Shape p = ints_attr(node, "pads", 4, 0);
  window.stride = {s[0], s[1]};
  window.dilation = {d[0], d[1]};
  window.padding = {p[0], p[1], p[2], p[3]};
  return window;
}

// The conv's output type, found by building its te compute over placeholders: the ops
// library's checks and shape rules, not a second copy of them.
te::Tensor blocked_conv(const Graph& graph, const Node& node, const te::Tensor& x, const te::Tensor& w,
                        const std::string& name) {
  ops::Window2d window = window_attrs(node);
  if (node.op == "NchwcConv") {
    const std::vector<int64_t>& ws = graph.value(node.inputs[1]).type.shape;
    int64_t groups = node.attrs.get_int_or("group", 1);
    int64_t block_groups = ws.size() == 6
                               ? ops::nchwc_block_groups(node.attrs.get_int("in_channels"),
                                                         node.attrs.get_int("channels"), groups, ws[4], ws[5])
                               : 1;
    if (block_groups == 0) {
      throw UserError(str("group=", groups, " does not line up with the weight's blocks ", ops::shape_str(ws)));
    }
    int64_t channels = ws.size() == 6 && ws[4] > 1 ? node.attrs.get_int("in_channels") : 0;
    return ops::conv2d_nchwc(x, w, window, name, block_groups, channels);
  }
  if (node.op == "NchwcWinogradConv") {
    return ops::conv2d_winograd_nchwc(x, w, window.padding, node.attrs.get_int("tile"), name);
  }
  return ops::depthwise_conv2d_nchwc(x, w, window, name);
}

te::Tensor placeholder_of(const TensorType& t, const std::string& name) {
  return te::placeholder(shape_exprs(t.shape), t.dtype, name);
}

// The node's optional input `bias` is the blocked bias [Ko, b] of an output [N, Ko, P, Q, b].
void check_blocked_bias(const Graph& graph, const Node& node, int bias, const Shape& out) {
  if (!has_input(node, bias)) return;
  const TensorType& b = input_type(graph, node, bias, "B");
  if (b.shape != Shape{out[1], out[4]}) {
    throw UserError(str("bias B is ", b.to_string(), " but must be [", out[1], ",", out[4], "] (blocked)"));
  }
}

std::vector<TensorType> infer_blocked_conv(const Graph& graph, const Node& node) {
  check_arity(node, 2, 3);
  const TensorType& x = input_type(graph, node, 0, "X");
  const TensorType& w = input_type(graph, node, 1, "W");
  check_float(x, "input X");
  Shape out = static_shape(blocked_conv(graph, node, placeholder_of(x, "x"), placeholder_of(w, "w"), "y"));
  check_blocked_bias(graph, node, 2, out);
  return {{out, x.dtype}};
}

// The product plus the blocked bias [Ko, b] that is the node's input `bias`, when it has one.
te::Tensor plus_blocked_bias(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in,
                             const te::Tensor& product, int bias) {
  if (!has_input(node, bias)) return product;
  const te::Tensor& b = in[bias];
  return te::compute(
      shape_exprs(graph.value(node.outputs[0]).type.shape),
      [&](const std::vector<Var>& i) {
        return product({i.begin(), i.end()}) + b(i[1], i[4]);
      },
      output_name(graph, node, 0));
}

te::Tensor blocked_conv_epilogue(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in,
                                 const te::Tensor& product) {
  return plus_blocked_bias(graph, node, in, product, 2);
}

std::vector<te::Tensor> compute_blocked_conv(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  std::string name = output_name(graph, node, 0);
  te::Tensor y = blocked_conv(graph, node, in[0], in[1], has_input(node, 2) ? name + "_conv" : name);
  return {blocked_conv_epilogue(graph, node, in, y)};
}

// ---------------------------------------------------------------- depthwise + 1x1

std::optional<ops::UnaryOp> depthwise_activation(const Node& node) {
  std::string act = node.attrs.get_string_or("activation", "none");
  if (act == "relu") return ops::UnaryOp::Relu;
  if (act == "relu6") return ops::UnaryOp::Relu6;
  if (act != "none") throw UserError(str("activation '", act, "' is not one of none, relu, relu6"));
  return std::nullopt;
}

te::Tensor depthwise_pointwise(const Node& node, const std::vector<te::Tensor>& in, const std::string& name) {
  return ops::depthwise_pointwise_nchwc(in[0], in[1], in[2], in[3], window_attrs(node), depthwise_activation(node),
                                        node.attrs.get_int("in_channels"), name);
}

std::vector<TensorType> infer_depthwise_pointwise(const Graph& graph, const Node& node) {
  check_arity(node, 4, 5);
  const char* roles[] = {"X", "Wdw", "Bdw", "Wpw"};
  std::vector<te::Tensor> in;
  for (int i = 0; i < 4; ++i) {
    const TensorType& t = input_type(graph, node, i, roles[i]);
    if (i == 0) check_float(t, "input X");
    in.push_back(placeholder_of(t, str("in", i)));
  }
  Shape out = static_shape(depthwise_pointwise(node, in, "y"));
  check_blocked_bias(graph, node, 4, out);
  return {{out, graph.value(node.inputs[0]).type.dtype}};
}

te::Tensor depthwise_pointwise_epilogue(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in,
                                        const te::Tensor& product) {
  return plus_blocked_bias(graph, node, in, product, 4);
}

std::vector<te::Tensor> compute_depthwise_pointwise(const Graph& graph, const Node& node,
                                                    const std::vector<te::Tensor>& in) {
  std::string name = output_name(graph, node, 0);
  te::Tensor y = depthwise_pointwise(node, in, has_input(node, 4) ? name + "_conv" : name);
  return {depthwise_pointwise_epilogue(graph, node, in, y)};
}

}  // namespace

std::vector<GraphOp> nchwc_graph_ops() {
  std::vector<GraphOp> ops = {
      {"ReorderToNchwc", OpPattern::Injective, infer_reorder_to, compute_reorder_to},
      {"ReorderFromNchwc", OpPattern::Injective, infer_reorder_from, compute_reorder_from},
      {"NchwcConv", OpPattern::OutFusable, infer_blocked_conv, compute_blocked_conv, nullptr, blocked_conv_epilogue},
      {"NchwcDepthwiseConv", OpPattern::OutFusable, infer_blocked_conv, compute_blocked_conv, nullptr,
       blocked_conv_epilogue},
      {"NchwcWinogradConv", OpPattern::OutFusable, infer_blocked_conv, compute_blocked_conv, nullptr,
       blocked_conv_epilogue},
      {"NchwcDepthwisePointwiseConv", OpPattern::OutFusable, infer_depthwise_pointwise, compute_depthwise_pointwise,
       nullptr, depthwise_pointwise_epilogue},
  };
  for (GraphOp& op : ops) op.internal = true;
  return ops;
}

}  // namespace temper::graph::detail
