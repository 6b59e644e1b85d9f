#include "compiler/ops/conv.h"

namespace temper::ops {

namespace {

// The extents of a conv2d's input and weight, named independently of the layout.
struct ConvDims {
  int64_t N, C, H, W;            // input
  int64_t K, C_per_group, R, S;  // weight
};

ConvDims conv_dims(const Shape& input, const Shape& weight, Layout layout) {
  if (layout == Layout::NCHW) {
    return {input[0], input[1], input[2], input[3], weight[0], weight[1], weight[2], weight[3]};
  }
  return {input[0], input[3], input[1], input[2], weight[3], weight[2], weight[0], weight[1]};
}

const char* weight_layout_name(Layout layout) {
  return layout == Layout::NCHW ? "KCRS" : "RSCK";
}

ConvDims check_conv(const te::Tensor& input, const te::Tensor& weight, const Window2d& window, int64_t groups,
                    Layout layout, const std::string& op) {
  check_rank(input, 4, op, str("the input (", layout_name(layout), ")"));
  check_rank(weight, 4, op, str("the weight (", weight_layout_name(layout), ")"));
  check_same_dtype(input, weight, op);
  check_window(window, op);
  ConvDims d = conv_dims(static_shape(input, op), static_shape(weight, op), layout);
  if (groups <= 0) throw UserError(str(op, ": groups=", groups, " must be positive"));
  if (d.C % groups != 0) {
    throw UserError(str(op, ": the input's ", d.C, " channels are not divisible by groups=", groups));
  }
  if (d.K % groups != 0) {
    throw UserError(str(op, ": the weight's ", d.K, " output channels are not divisible by groups=", groups));
  }
  if (d.C_per_group != d.C / groups) {
    throw UserError(str(op, ": input has ", d.C, " channels but the weight expects ", d.C_per_group * groups, " (",
                        d.C_per_group, " per group x groups=", groups, "; the weight's C/groups must be ", d.C / groups,
                        ")"));
  }
  return d;
}

}  // namespace

Shape conv2d_output_shape(const Shape& input, const Shape& weight, const Window2d& window, Layout layout,
                          const std::string& op) {
  ConvDims d = conv_dims(input, weight, layout);
  const Padding2d& pad = window.padding;
  int64_t P = window_output_extent(d.H, pad.top, pad.bottom, d.R, window.stride[0], window.dilation[0]);
  int64_t Q = window_output_extent(d.W, pad.left, pad.right, d.S, window.stride[1], window.dilation[1]);
  if (P <= 0 || Q <= 0) {
    throw UserError(str(op, ": the ", d.R, "x", d.S, " kernel (", window.dilation[0] * (d.R - 1) + 1, "x",
                        window.dilation[1] * (d.S - 1) + 1, " with dilation) is larger than the padded input ",
                        d.H + pad.top + pad.bottom, "x", d.W + pad.left + pad.right, " (", d.H, "x", d.W,
                        " plus padding)"));
  }
  return layout == Layout::NCHW ? Shape{d.N, d.K, P, Q} : Shape{d.N, P, Q, d.K};
}

te::Tensor conv2d(const te::Tensor& input, const te::Tensor& weight, const Window2d& window, int64_t groups,
                  Layout layout, const std::string& name) {
  ConvDims d = check_conv(input, weight, window, groups, layout, "conv2d");
  Shape out =
      conv2d_output_shape(static_shape(input, "conv2d"), static_shape(weight, "conv2d"), window, layout, "conv2d");
  te::Tensor padded = pad_spatial(input, layout, window.padding, 0.0, name + "_pad");
  IterVar rc = te::reduce_axis({0, index_const(d.C_per_group)}, "rc");
  IterVar ry = te::reduce_axis({0, index_const(d.R)}, "ry");
  IterVar rx = te::reduce_axis({0, index_const(d.S)}, "rx");
  int64_t K_per_group = d.K / groups;
  auto input_channel = [&](const Expr& k) -> Expr {
    if (groups == 1) return rc;
    return times(floordiv(k, index_const(K_per_group)), d.C_per_group) + rc;
  };
  auto row = [&](const Expr& p) { return times(p, window.stride[0]) + times(ry, window.dilation[0]); };
  auto col = [&](const Expr& q) { return times(q, window.stride[1]) + times(rx, window.dilation[1]); };
  if (layout == Layout::NCHW) {
    return te::compute(
        shape_exprs(out, "conv2d"),
        [&](Var n, Var k, Var p, Var q) {
          return te::sum(padded(n, input_channel(k), row(p), col(q)) * weight(k, rc, ry, rx), {rc, ry, rx});
        },
        name);
  }
  return te::compute(
      shape_exprs(out, "conv2d"),
      [&](Var n, Var p, Var q, Var k) {
        return te::sum(padded(n, row(p), col(q), input_channel(k)) * weight(ry, rx, rc, k), {rc, ry, rx});
      },
      name);
}

te::Tensor depthwise_conv2d(const te::Tensor& input, const te::Tensor& weight, const Window2d& window, Layout layout,
                            const std::string& name) {
  const std::string op = "depthwise_conv2d";
  check_rank(input, 4, op, str("the input (", layout_name(layout), ")"));
  check_rank(weight, 4, op, str("the weight (", weight_layout_name(layout), ")"));
  ConvDims d = conv_dims(static_shape(input, op), static_shape(weight, op), layout);
  if (d.C_per_group != 1) {
    throw UserError(str(op, ": the weight's input-channel dimension is ", d.C_per_group,
                        " but must be 1 (one input channel per group)"));
  }
  if (d.K % d.C != 0) {
    throw UserError(str(op, ": the weight's ", d.K, " output channels are not a multiple of the input's ", d.C,
                        " channels (K = C x channel multiplier)"));
  }
  check_conv(input, weight, window, d.C, layout, op);
  Shape out = conv2d_output_shape(static_shape(input, op), static_shape(weight, op), window, layout, op);
  int64_t multiplier = d.K / d.C;
  te::Tensor padded = pad_spatial(input, layout, window.padding, 0.0, name + "_pad");
  IterVar ry = te::reduce_axis({0, index_const(d.R)}, "ry");
  IterVar rx = te::reduce_axis({0, index_const(d.S)}, "rx");
  auto input_channel = [&](const Expr& k) -> Expr {
    return multiplier == 1 ? k : floordiv(k, index_const(multiplier));
  };
  auto row = [&](const Expr& p) { return times(p, window.stride[0]) + times(ry, window.dilation[0]); };
  auto col = [&](const Expr& q) { return times(q, window.stride[1]) + times(rx, window.dilation[1]); };
  if (layout == Layout::NCHW) {
    return te::compute(
        shape_exprs(out, op),
        [&](Var n, Var k, Var p, Var q) {
          return te::sum(padded(n, input_channel(k), row(p), col(q)) * weight(k, 0, ry, rx), {ry, rx});
        },
        name);
  }
  return te::compute(
      shape_exprs(out, op),
      [&](Var n, Var p, Var q, Var k) {
        return te::sum(padded(n, row(p), col(q), input_channel(k)) * weight(ry, rx, 0, k), {ry, rx});
      },
      name);
}

}  // namespace temper::ops
