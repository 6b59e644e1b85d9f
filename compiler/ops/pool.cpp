#include "compiler/ops/pool.h"

#include <limits>

namespace temper::ops {

namespace {

int height_dim(Layout layout) {
  return layout == Layout::NCHW ? 2 : 1;
}

// The indices, in `layout`, of the element at batch n, channel c, row h, column w.
std::vector<Expr> nchw_to_layout(Layout layout, Expr n, Expr c, Expr h, Expr w) {
  if (layout == Layout::NCHW) return {n, c, h, w};
  return {n, h, w, c};
}

struct PoolIndex {
  Expr n, c, p, q;
};

PoolIndex pool_index(Layout layout, const std::vector<Var>& i) {
  if (layout == Layout::NCHW) return {i[0], i[1], i[2], i[3]};
  return {i[0], i[3], i[1], i[2]};
}

// out[n, c, p, q] = the max (or sum) of padded over the kernel window at output (p, q):
// padded[n, c, p*stride + ry, q*stride + rx], indexed in the layout's order.
te::Tensor reduce_window(const te::Tensor& padded, const Shape& out, std::array<int64_t, 2> kernel,
                         const Window2d& window, Layout layout, bool is_max, const std::string& op,
                         const std::string& name) {
  IterVar ry = te::reduce_axis({0, index_const(kernel[0])}, "ry");
  IterVar rx = te::reduce_axis({0, index_const(kernel[1])}, "rx");
  return te::compute(
      shape_exprs(out, op),
      [&](const std::vector<Var>& i) {
        PoolIndex o = pool_index(layout, i);
        Expr h = times(o.p, window.stride[0]) + ry;
        Expr w = times(o.q, window.stride[1]) + rx;
        Expr element = padded(nchw_to_layout(layout, o.n, o.c, h, w));
        return is_max ? te::max(element, {ry, rx}) : te::sum(element, {ry, rx});
      },
      name);
}

Shape check_pool(const te::Tensor& x, std::array<int64_t, 2> kernel, const Window2d& window, Layout layout,
                 const std::string& op) {
  check_rank(x, 4, op, str("the input (", layout_name(layout), ")"));
  check_window(window, op);
  if (window.dilation != std::array<int64_t, 2>{1, 1}) {
    throw UnsupportedError(str(op, ": dilation ", window.dilation[0], "x", window.dilation[1],
                               " is not supported; pooling takes dilation 1"));
  }
  return pool2d_output_shape(static_shape(x, op), kernel, window, layout, op);
}

}  // namespace

Shape pool2d_output_shape(const Shape& input, std::array<int64_t, 2> kernel, const Window2d& window, Layout layout,
                          const std::string& op) {
  int h = height_dim(layout);
  for (int64_t k : kernel) {
    if (k <= 0) throw UserError(str(op, ": kernel ", kernel[0], "x", kernel[1], " must be positive"));
  }
  const Padding2d& pad = window.padding;
  if (pad.top >= kernel[0] || pad.bottom >= kernel[0] || pad.left >= kernel[1] || pad.right >= kernel[1]) {
    throw UserError(str(op, ": padding (top ", pad.top, ", left ", pad.left, ", bottom ", pad.bottom, ", right ",
                        pad.right, ") must be smaller than the ", kernel[0], "x", kernel[1],
                        " kernel, or a window would cover only padding"));
  }
  int64_t P = window_output_extent(input[h], pad.top, pad.bottom, kernel[0], window.stride[0], 1);
  int64_t Q = window_output_extent(input[h + 1], pad.left, pad.right, kernel[1], window.stride[1], 1);
  if (P <= 0 || Q <= 0) {
    throw UserError(str(op, ": the ", kernel[0], "x", kernel[1], " kernel is larger than the padded input ",
                        input[h] + pad.top + pad.bottom, "x", input[h + 1] + pad.left + pad.right, " (", input[h], "x",
                        input[h + 1], " plus padding)"));
  }
  Shape out = input;
  out[h] = P;
  out[h + 1] = Q;
  return out;
}

te::Tensor max_pool2d(const te::Tensor& x, std::array<int64_t, 2> kernel, const Window2d& window, Layout layout,
                      const std::string& name) {
  Shape out = check_pool(x, kernel, window, layout, "max_pool2d");
  if (x.dtype().is_integer() && x.dtype() != DataType::int32()) {
    throw UnsupportedError(str("max_pool2d: input dtype ", x.dtype(), " is not supported; use a float type or int32"));
  }
  double lowest = x.dtype().is_float() ? -std::numeric_limits<double>::infinity()
                                       : static_cast<double>(std::numeric_limits<int32_t>::lowest());
  te::Tensor padded = pad_spatial(x, layout, window.padding, lowest, name + "_pad");
  return reduce_window(padded, out, kernel, window, layout, /*is_max=*/true, "max_pool2d", name);
}

te::Tensor avg_pool2d(const te::Tensor& x, std::array<int64_t, 2> kernel, const Window2d& window, Layout layout,
                      bool count_include_pad, const std::string& name) {
  Shape out = check_pool(x, kernel, window, layout, "avg_pool2d");
  check_float(x, "avg_pool2d", "the input");
  Shape in = static_shape(x, "avg_pool2d");
  int hd = height_dim(layout);
  te::Tensor padded = pad_spatial(x, layout, window.padding, 0.0, name + "_pad");
  te::Tensor sum = reduce_window(padded, out, kernel, window, layout, /*is_max=*/false, "avg_pool2d", name + "_sum");
  const Padding2d& pad = window.padding;
  bool constant_count = count_include_pad || pad.is_zero();
  return te::compute(
      shape_exprs(out, "avg_pool2d"),
      [&](const std::vector<Var>& i) {
        if (constant_count) return sum(as_exprs(i)) / make_const(x.dtype(), static_cast<double>(kernel[0] * kernel[1]));
        // Output row p covers input rows [p*stride - top, p*stride - top + R), clipped to [0, H).
        PoolIndex o = pool_index(layout, i);
        auto covered = [](const Expr& scaled, int64_t pad_before, int64_t kernel, int64_t limit) {
          return min(plus(scaled, kernel - pad_before), index_const(limit)) -
                 max(plus(scaled, -pad_before), index_const(0));
        };
        Expr rows = covered(times(o.p, window.stride[0]), pad.top, kernel[0], in[hd]);
        Expr cols = covered(times(o.q, window.stride[1]), pad.left, kernel[1], in[hd + 1]);
        return sum(as_exprs(i)) / cast(x.dtype(), rows * cols);
      },
      name);
}

te::Tensor global_avg_pool2d(const te::Tensor& x, Layout layout, const std::string& name) {
  const std::string op = "global_avg_pool2d";
  check_rank(x, 4, op, str("the input (", layout_name(layout), ")"));
  check_float(x, op, "the input");
  Shape in = static_shape(x, op);
  int hd = height_dim(layout);
  Shape out = in;
  out[hd] = 1;
  out[hd + 1] = 1;
  IterVar ry = te::reduce_axis({0, index_const(in[hd])}, "ry");
  IterVar rx = te::reduce_axis({0, index_const(in[hd + 1])}, "rx");
  te::Tensor sum = te::compute(
      shape_exprs(out, op),
      [&](const std::vector<Var>& i) {
        PoolIndex o = pool_index(layout, i);
        return te::sum(x(nchw_to_layout(layout, o.n, o.c, ry, rx)), {ry, rx});
      },
      name + "_sum");
  return te::compute(
      shape_exprs(out, op),
      [&](const std::vector<Var>& i) {
        return sum(as_exprs(i)) / make_const(x.dtype(), static_cast<double>(in[hd] * in[hd + 1]));
      },
      name);
}

}  // namespace temper::ops
