// ConvTranspose (the gradient of Conv with respect to its input: the upsampling layer of
// decoders and segmentation heads), for any number of spatial dimensions.
//
// X [N, C, d1, ...], W [C, M / group, k1, ...], optional B [M]. Along each spatial
// dimension an input element i lands on the outputs i * stride + k * dilation - pad_begin
// for each kernel offset k; the output extent is
//   stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 - pad_begin - pad_end,
// or output_shape, when given, from which the total padding follows: split evenly, the odd
// unit at the end for SAME_UPPER (and NOTSET) and at the beginning for SAME_LOWER, as
// onnxruntime splits it; an output longer than that extent is zeros at the end. auto_pad
// SAME_* makes the output in * stride.
//
// Computed as a gather: each output element sums, over the input channels of its group
// and the kernel offsets, the inputs whose position maps onto it (where oh + pad_begin -
// k * dilation is a multiple of the stride inside the input).
#include "compiler/graph/graph_ops_common.h"
#include "compiler/ops/shape.h"

namespace temper::graph::detail {

namespace {

struct TransposedWindow {
  Shape kernel, strides, dilations, pads_begin, output;
  int64_t group = 1;
  int64_t out_channels = 0;
};

TransposedWindow transposed_window(const Graph& graph, const Node& node) {
  check_arity(node, 2, 3);
  const TensorType& x = input_type(graph, node, 0, "X");
  const TensorType& w = input_type(graph, node, 1, "W");
  check_float(x, "input X");
  check_same_dtype(x, w, "input X", "weight W");
  if (x.shape.size() < 3) throw UserError(str("input X is ", x.to_string(), "; it must be [N, C, d1, ...]"));
  if (w.shape.size() != x.shape.size()) {
    throw UserError(str("weight W is ", w.to_string(), " but must have the rank of X ", x.to_string()));
  }
  size_t n = x.shape.size() - 2;
  TransposedWindow t;
  t.group = node.attrs.get_int_or("group", 1);
  if (t.group < 1 || x.shape[1] % t.group != 0) {
    throw UserError(str("group=", t.group, " does not divide the ", x.shape[1], " input channels"));
  }
  if (w.shape[0] != x.shape[1]) {
    throw UserError(str("weight W ", w.to_string(), " must have X's ", x.shape[1], " channels first"));
  }
  t.out_channels = w.shape[1] * t.group;
  t.kernel = node.attrs.has("kernel_shape") ? ints_attr(node, "kernel_shape", n, 0)
                                            : Shape(w.shape.begin() + 2, w.shape.end());
  if (t.kernel != Shape(w.shape.begin() + 2, w.shape.end())) {
    throw UserError(str("kernel_shape ", ints_str(t.kernel), " does not match weight W ", w.to_string()));
  }
  t.strides = ints_attr(node, "strides", n, 1);
  t.dilations = ints_attr(node, "dilations", n, 1);
  Shape output_padding = ints_attr(node, "output_padding", n, 0);
  Shape pads = ints_attr(node, "pads", 2 * n, 0);
  std::string auto_pad = node.attrs.get_string_or("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    throw UserError(str("auto_pad '", auto_pad, "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID"));
  }
  if (auto_pad == "VALID") pads.assign(2 * n, 0);
  std::vector<int64_t> output_shape = node.attrs.get_ints_or("output_shape", {});
  if (!output_shape.empty() && output_shape.size() != n) {
    // The full [N, M, d1, ...] form some exporters write.
    if (output_shape.size() == n + 2) {
      output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
    } else {
      throw UserError(str("attribute output_shape=", ints_str(output_shape), " must have ", n, " entries"));
    }
  }
  for (size_t d = 0; d < n; ++d) {
    if (t.strides[d] < 1 || t.dilations[d] < 1 || t.kernel[d] < 1 || output_padding[d] < 0) {
      throw UserError(str("strides ", ints_str(t.strides), ", dilations ", ints_str(t.dilations), ", kernel ",
                          ints_str(t.kernel), " must be positive and output_padding ", ints_str(output_padding),
                          " not negative"));
    }
    int64_t full = t.strides[d] * (x.shape[d + 2] - 1) + output_padding[d] + (t.kernel[d] - 1) * t.dilations[d] + 1;
    bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    if (!output_shape.empty() || same) {
      int64_t out = !output_shape.empty() ? output_shape[d] : x.shape[d + 2] * t.strides[d];
      // A negative total is an output longer than the input reaches: zeros at the end,
      // as output_padding gives.
      int64_t total = full - out;
      int64_t begin = total < 0 ? 0 : auto_pad == "SAME_LOWER" ? total - total / 2 : total / 2;
      pads[d] = begin;
      pads[d + n] = total - begin;
    } else if (pads[d] < 0 || pads[d + n] < 0) {
      throw UserError(str("pads ", ints_str(pads), " must not be negative"));
    }
    int64_t out = full - pads[d] - pads[d + n];
    if (out < 1) throw UserError(str("pads ", ints_str(pads), " leave no output in spatial dimension ", d));
    t.pads_begin.push_back(pads[d]);
    t.output.push_back(out);
  }
  if (has_input(node, 2)) {
    const TensorType& b = input_type(graph, node, 2, "B");
    check_same_dtype(x, b, "input X", "bias B");
    if (b.shape != Shape{t.out_channels}) {
      throw UserError(str("bias B is ", b.to_string(), " but must be [", t.out_channels, "] (the output channels)"));
    }
  }
  return t;
}

std::vector<TensorType> infer_conv_transpose(const Graph& graph, const Node& node) {
  const TensorType& x = input_type(graph, node, 0, "X");
  TransposedWindow t = transposed_window(graph, node);
  Shape out = {x.shape[0], t.out_channels};
  out.insert(out.end(), t.output.begin(), t.output.end());
  return {{out, x.dtype}};
}

std::vector<te::Tensor> compute_conv_transpose(const Graph& graph, const Node& node,
                                               const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  const te::Tensor& w = in[1];
  TransposedWindow t = transposed_window(graph, node);
  Shape xs = static_shape(x);
  size_t n = xs.size() - 2;
  int64_t group_in = xs[1] / t.group;
  int64_t group_out = t.out_channels / t.group;
  Shape out = infer_conv_transpose(graph, node)[0].shape;
  return {te::compute(
      shape_exprs(out),
      [&](const std::vector<Var>& o) {
        IterVar rc = te::reduce_axis({0, ops::index_const(group_in)}, "rc");
        std::vector<IterVar> axes = {rc};
        Expr group = floordiv(o[1], ops::index_const(group_out));
        Expr channel = group * ops::index_const(group_in) + rc;
        std::vector<Expr> x_at = {o[0], channel};
        std::vector<Expr> w_at = {channel, floormod(o[1], ops::index_const(group_out))};
        Expr inside = make_bool(true);
        for (size_t d = 0; d < n; ++d) {
          IterVar k = te::reduce_axis({0, ops::index_const(t.kernel[d])}, "rk" + std::to_string(d));
          axes.push_back(k);
          // The input position that lands on o[d + 2] through kernel offset k.
          Expr shifted = o[d + 2] + ops::index_const(t.pads_begin[d]) - Expr(k) * ops::index_const(t.dilations[d]);
          Expr stride = ops::index_const(t.strides[d]);
          Expr position = floordiv(shifted, stride);
          inside = inside && shifted >= ops::index_const(0) && floormod(shifted, stride) == ops::index_const(0) &&
                   position < ops::index_const(xs[d + 2]);
          x_at.push_back(min(max(position, ops::index_const(0)), ops::index_const(xs[d + 2] - 1)));
          w_at.push_back(k);
        }
        return te::sum(x(x_at) * w(w_at), axes, inside);
      },
      has_input(node, 2) ? output_name(graph, node, 0) + "_product" : output_name(graph, node, 0))};
}

std::vector<te::Tensor> compute_conv_transpose_with_bias(const Graph& graph, const Node& node,
                                                         const std::vector<te::Tensor>& in) {
  te::Tensor product = compute_conv_transpose(graph, node, in)[0];
  if (!has_input(node, 2)) return {product};
  return {te::compute(
      product.shape(),
      [&](const std::vector<Var>& i) {
        return product({i.begin(), i.end()}) + in[2](i[1]);
      },
      output_name(graph, node, 0))};
}

}  // namespace

std::vector<GraphOp> conv_transpose_graph_ops() {
  return {{"ConvTranspose", OpPattern::Opaque, infer_conv_transpose, compute_conv_transpose_with_bias}};
}

}  // namespace temper::graph::detail
