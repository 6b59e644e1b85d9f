// The neural-network ONNX ops: Conv, Gemm, MatMul, MaxPool, AveragePool,
// GlobalAveragePool, BatchNormalization (inference), Softmax, LogSoftmax, Hardmax,
// LayerNormalization, InstanceNormalization and GroupNormalization.
//
// Conv, Gemm, MatMul (2-D), GlobalAveragePool, BatchNormalization and Softmax compute with
// the operator library's builders (compiler/ops). Pooling has its own compute: ONNX's
// ceil_mode, MaxPool's dilations, 1-D and 3-D windows and the divisor of windows that
// ceil_mode extends past the padding are more than ops::max_pool2d/avg_pool2d express.
// LayerNormalization has its own too, for its optional Mean and InvStdDev outputs.
//
// Windows (Conv and pooling) follow ONNX: pads are [x1_begin, x2_begin, ..., x1_end,
// x2_end]; auto_pad SAME_UPPER/SAME_LOWER pads so that the output extent is
// ceil(input / stride), the odd unit of padding at the end (UPPER) or the beginning
// (LOWER); with ceil_mode the output extent rounds up, but a window never starts in the
// end padding.
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "compiler/graph/graph_ops_common.h"
#include "compiler/ops/conv.h"
#include "compiler/ops/elementwise.h"
#include "compiler/ops/matmul.h"
#include "compiler/ops/nn.h"
#include "compiler/ops/pool.h"
#include "compiler/ops/shape.h"
#include "compiler/ops/transform.h"

namespace temper::graph::detail {

namespace {

int64_t product(const Shape& shape, size_t begin, size_t end) {
  return std::accumulate(shape.begin() + begin, shape.begin() + end, int64_t{1}, std::multiplies<>());
}

// ---------------------------------------------------------------- sliding windows

// What never wins a max: -inf, or the integer type's lowest value.
double lowest_value(DataType t) {
  if (t.is_float()) return -std::numeric_limits<double>::infinity();
  if (t.is_uint() || t.is_bool()) return 0.0;
  return -std::ldexp(1.0, t.bits() - 1);
}

struct Window {
  Shape kernel, strides, dilations, pads_begin, pads_end;
  Shape output;  // the output's spatial extents
};

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// The window of a Conv or pooling node over the spatial extents `in` with kernel extents
// `kernel` (see the file comment). ceil_mode is pooling's.
Window window_of(const Node& node, const Shape& in, const Shape& kernel, bool ceil_mode) {
  size_t n = in.size();
  Window w;
  w.kernel = kernel;
  w.strides = ints_attr(node, "strides", n, 1);
  w.dilations = ints_attr(node, "dilations", n, 1);
  for (size_t d = 0; d < n; ++d) {
    if (w.strides[d] <= 0 || w.dilations[d] <= 0 || kernel[d] <= 0) {
      throw UserError(str("strides ", ints_str(w.strides), ", dilations ", ints_str(w.dilations), " and kernel ",
                          ints_str(kernel), " must be positive"));
    }
  }
  std::string auto_pad = node.attrs.get_string_or("auto_pad", "NOTSET");
  Shape pads = ints_attr(node, "pads", 2 * n, 0);
  if (auto_pad == "VALID") {
    pads.assign(2 * n, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t d = 0; d < n; ++d) {
      int64_t effective_kernel = w.dilations[d] * (kernel[d] - 1) + 1;
      int64_t total =
          std::max<int64_t>(0, (ceil_div(in[d], w.strides[d]) - 1) * w.strides[d] + effective_kernel - in[d]);
      int64_t small = total / 2;
      pads[d] = auto_pad == "SAME_UPPER" ? small : total - small;
      pads[d + n] = total - pads[d];
    }
    ceil_mode = false;  // the padding already makes the extent ceil(in / stride)
  } else if (auto_pad != "NOTSET") {
    throw UserError(str("auto_pad '", auto_pad, "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID"));
  }
  w.pads_begin.assign(pads.begin(), pads.begin() + n);
  w.pads_end.assign(pads.begin() + n, pads.end());
  for (size_t d = 0; d < n; ++d) {
    if (w.pads_begin[d] < 0 || w.pads_end[d] < 0)
      throw UserError(str("pads ", ints_str(pads), " must not be negative"));
    int64_t effective_kernel = w.dilations[d] * (kernel[d] - 1) + 1;
    int64_t span = in[d] + w.pads_begin[d] + w.pads_end[d] - effective_kernel;
    if (span < 0) {
      throw UserError(str("the kernel ", ints_str(kernel), " (dilations ", ints_str(w.dilations),
                          ") is larger than the padded input: spatial dimension ", d, " is ", in[d], " plus pads ",
                          w.pads_begin[d], " and ", w.pads_end[d]));
    }
    int64_t out = (ceil_mode ? ceil_div(span, w.strides[d]) : span / w.strides[d]) + 1;
    if (ceil_mode && (out - 1) * w.strides[d] >= in[d] + w.pads_begin[d]) --out;
    w.output.push_back(out);
  }
  return w;
}

// The kernel_shape attribute, checked against the weight's extents where there is a weight.
Shape kernel_shape(const Node& node, size_t spatial) {
  if (!node.attrs.has("kernel_shape")) throw UserError("attribute kernel_shape is missing");
  return ints_attr(node, "kernel_shape", spatial, 0);
}

// ---------------------------------------------------------------- Conv

struct ConvShapes {
  TensorType x, w;
  Window window;
  int64_t group;
  Shape output;
};

ConvShapes conv_shapes(const Graph& graph, const Node& node) {
  check_arity(node, 2, 3);
  ConvShapes c;
  c.x = input_type(graph, node, 0, "X");
  c.w = input_type(graph, node, 1, "W");
  check_float(c.x, "input X");
  check_same_dtype(c.x, c.w, "input X", "weight W");
  size_t rank = c.x.shape.size();
  if (rank != 3 && rank != 4) {
    throw UnsupportedError(
        str("input X is ", c.x.to_string(), "; Temper serves 1-D and 2-D convolutions (rank 3 or 4)"));
  }
  if (c.w.shape.size() != rank) {
    throw UserError(str("weight W is ", c.w.to_string(), " but must have the rank of X ", c.x.to_string()));
  }
  c.group = node.attrs.get_int_or("group", 1);
  int64_t channels = c.x.shape[1];
  int64_t filters = c.w.shape[0];
  if (c.group <= 0 || channels % c.group != 0 || filters % c.group != 0 || c.w.shape[1] * c.group != channels) {
    throw UserError(str("X ", c.x.to_string(), " and W ", c.w.to_string(), " do not fit group=", c.group,
                        ": W's dimension 1 times group must be X's channels, and both channel counts divisible by "
                        "group"));
  }
  Shape spatial(c.x.shape.begin() + 2, c.x.shape.end());
  Shape kernel(c.w.shape.begin() + 2, c.w.shape.end());
  if (node.attrs.has("kernel_shape") && kernel_shape(node, rank - 2) != kernel) {
    throw UserError(str("attribute kernel_shape=", ints_str(kernel_shape(node, rank - 2)),
                        " differs from the weight's ", ints_str(kernel)));
  }
  if (has_input(node, 2)) {
    const TensorType& b = input_type(graph, node, 2, "B");
    check_same_dtype(c.x, b, "input X", "bias B");
    if (b.shape != Shape{filters}) throw UserError(str("bias B is ", b.to_string(), " but must be [", filters, "]"));
  }
  c.window = window_of(node, spatial, kernel, /*ceil_mode=*/false);
  c.output = {c.x.shape[0], filters};
  c.output.insert(c.output.end(), c.window.output.begin(), c.window.output.end());
  return c;
}

std::vector<TensorType> infer_conv(const Graph& graph, const Node& node) {
  ConvShapes c = conv_shapes(graph, node);
  return {{c.output, c.x.dtype}};
}

// The bias, added per output channel.
te::Tensor conv_epilogue(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in,
                         const te::Tensor& product) {
  if (!has_input(node, 2)) return product;
  const te::Tensor& b = in[2];
  return te::compute(
      shape_exprs(graph.value(node.outputs[0]).type.shape),
      [&](const std::vector<Var>& i) {
        return product({i.begin(), i.end()}) + b(i[1]);
      },
      output_name(graph, node, 0));
}

// A 1-D convolution runs as a 2-D one over [N, C, 1, L].
std::vector<te::Tensor> compute_conv(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  ConvShapes c = conv_shapes(graph, node);
  std::string name = output_name(graph, node, 0);
  bool one_d = c.x.shape.size() == 3;
  bool has_bias = has_input(node, 2);
  te::Tensor x = in[0];
  te::Tensor w = in[1];
  ops::Window2d window;
  const Window& cw = c.window;
  if (one_d) {
    x = ops::reshape(x, {c.x.shape[0], c.x.shape[1], 1, c.x.shape[2]}, name + "_x2d");
    w = ops::reshape(w, {c.w.shape[0], c.w.shape[1], 1, c.w.shape[2]}, name + "_w2d");
    window.stride = {1, cw.strides[0]};
    window.dilation = {1, cw.dilations[0]};
    window.padding = {0, cw.pads_begin[0], 0, cw.pads_end[0]};
  } else {
    window.stride = {cw.strides[0], cw.strides[1]};
    window.dilation = {cw.dilations[0], cw.dilations[1]};
    window.padding = {cw.pads_begin[0], cw.pads_begin[1], cw.pads_end[0], cw.pads_end[1]};
  }
  bool conv_is_last = !one_d && !has_bias;
  te::Tensor y = ops::conv2d(x, w, window, c.group, ops::Layout::NCHW, conv_is_last ? name : name + "_conv");
  if (one_d) y = ops::reshape(y, c.output, has_bias ? name + "_conv1d" : name);
  return {conv_epilogue(graph, node, in, y)};
}

// ---------------------------------------------------------------- Gemm and MatMul

struct GemmShapes {
  TensorType a, b;
  bool trans_a, trans_b;
  int64_t m, n;
};

GemmShapes gemm_shapes(const Graph& graph, const Node& node) {
  check_arity(node, 2, 3);
  GemmShapes g;
  g.a = input_type(graph, node, 0, "A");
  g.b = input_type(graph, node, 1, "B");
  check_same_dtype(g.a, g.b, "input A", "input B");
  if (g.a.shape.size() != 2 || g.b.shape.size() != 2) {
    throw UserError(str("inputs A ", g.a.to_string(), " and B ", g.b.to_string(), " must be matrices"));
  }
  g.trans_a = node.attrs.get_int_or("transA", 0) != 0;
  g.trans_b = node.attrs.get_int_or("transB", 0) != 0;
  g.m = g.a.shape[g.trans_a ? 1 : 0];
  int64_t k_a = g.a.shape[g.trans_a ? 0 : 1];
  int64_t k_b = g.b.shape[g.trans_b ? 1 : 0];
  g.n = g.b.shape[g.trans_b ? 0 : 1];
  if (k_a != k_b) {
    throw UserError(str("A ", g.a.to_string(), " (transA=", g.trans_a, ") and B ", g.b.to_string(),
                        " (transB=", g.trans_b, ") have inner extents ", k_a, " and ", k_b, "; they must be equal"));
  }
  if (has_input(node, 2)) {
    const TensorType& c = input_type(graph, node, 2, "C");
    check_same_dtype(g.a, c, "input A", "input C");
    // C broadcasts to [M, N] one way only: its extents, aligned at the end, are M and N or 1.
    Shape result = {g.m, g.n};
    bool fits = c.shape.size() <= 2;
    for (size_t d = 0; fits && d < c.shape.size(); ++d) {
      int64_t extent = c.shape[c.shape.size() - 1 - d];
      fits = extent == 1 || extent == result[1 - d];
    }
    if (!fits) {
      throw UserError(str("input C ", c.to_string(), " does not broadcast to the result ",
                          TensorType{result, g.a.dtype}.to_string()));
    }
  }
  return g;
}

std::vector<TensorType> infer_gemm(const Graph& graph, const Node& node) {
  GemmShapes g = gemm_shapes(graph, node);
  return {{{g.m, g.n}, g.a.dtype}};
}

// Whether Y = alpha * A' B' + beta * C differs from A' B'.
bool gemm_has_epilogue(const Node& node) {
  bool has_c = has_input(node, 2) && node.attrs.get_float_or("beta", 1.0) != 0.0;
  return has_c || node.attrs.get_float_or("alpha", 1.0) != 1.0;
}

// alpha * product + beta * C.
te::Tensor gemm_epilogue(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in,
                         const te::Tensor& product) {
  if (!gemm_has_epilogue(node)) return product;
  double alpha = node.attrs.get_float_or("alpha", 1.0);
  double beta = node.attrs.get_float_or("beta", 1.0);
  bool has_c = has_input(node, 2) && beta != 0.0;
  DataType t = product.dtype();
  return te::compute(
      shape_exprs(graph.value(node.outputs[0]).type.shape),
      [&](const std::vector<Var>& i) {
        Expr y = product(i[0], i[1]);
        if (alpha != 1.0) y = make_const(t, alpha) * y;
        if (!has_c) return y;
        Expr c = broadcast_load(in[2], i);
        return y + (beta != 1.0 ? make_const(t, beta) * c : c);
      },
      output_name(graph, node, 0));
}

std::vector<te::Tensor> compute_gemm(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  GemmShapes g = gemm_shapes(graph, node);
  std::string name = output_name(graph, node, 0);
  te::Tensor product =
      ops::matmul(in[0], in[1], g.trans_a, g.trans_b, gemm_has_epilogue(node) ? name + "_matmul" : name);
  return {gemm_epilogue(graph, node, in, product)};
}

// numpy's matmul: a 1-D A is a row [1, K] and a 1-D B a column [K, 1], the added
// dimension dropped from the result; leading (batch) dimensions broadcast.
struct MatMulShapes {
  TensorType a, b;
  Shape batch;
  Shape output;
};

MatMulShapes matmul_shapes(const Graph& graph, const Node& node) {
  check_arity(node, 2, 2);
  MatMulShapes s;
  s.a = input_type(graph, node, 0, "A");
  s.b = input_type(graph, node, 1, "B");
  check_same_dtype(s.a, s.b, "input A", "input B");
  if (s.a.shape.empty() || s.b.shape.empty()) {
    throw UserError(str("inputs A ", s.a.to_string(), " and B ", s.b.to_string(), " must have at least 1 dimension"));
  }
  Shape a = s.a.shape.size() == 1 ? Shape{1, s.a.shape[0]} : s.a.shape;
  Shape b = s.b.shape.size() == 1 ? Shape{s.b.shape[0], 1} : s.b.shape;
  if (a.back() != b[b.size() - 2]) {
    throw UserError(str("A ", s.a.to_string(), " and B ", s.b.to_string(), " have inner extents ", a.back(), " and ",
                        b[b.size() - 2], "; they must be equal"));
  }
  TensorType batch_a{Shape(a.begin(), a.end() - 2), s.a.dtype};
  TensorType batch_b{Shape(b.begin(), b.end() - 2), s.b.dtype};
  s.batch = broadcast_shapes(batch_a, batch_b);
  s.output = s.batch;
  if (s.a.shape.size() > 1) s.output.push_back(a[a.size() - 2]);
  if (s.b.shape.size() > 1) s.output.push_back(b.back());
  return s;
}

std::vector<TensorType> infer_matmul(const Graph& graph, const Node& node) {
  MatMulShapes s = matmul_shapes(graph, node);
  return {{s.output, s.a.dtype}};
}

std::vector<te::Tensor> compute_matmul(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  MatMulShapes s = matmul_shapes(graph, node);
  std::string name = output_name(graph, node, 0);
  const te::Tensor& a = in[0];
  const te::Tensor& b = in[1];
  if (a.ndim() == 2 && b.ndim() == 2) return {ops::matmul(a, b, false, false, name)};
  int64_t k_extent = s.a.shape.back();
  IterVar k = te::reduce_axis({0, ops::index_const(k_extent)}, "rk");
  int batch = static_cast<int>(s.batch.size());
  // An operand's batch dimensions are the last of the result's; extent 1 reads index 0.
  auto batch_index = [&](const Shape& shape, const std::vector<Var>& i) {
    std::vector<Expr> index;
    int own = static_cast<int>(shape.size()) - 2;
    for (int d = 0; d < own; ++d) index.push_back(shape[d] == 1 ? ops::index_const(0) : Expr(i[batch - own + d]));
    return index;
  };
  return {te::compute(
      shape_exprs(s.output),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> ai = {k};
        if (s.a.shape.size() > 1) {
          ai = batch_index(s.a.shape, i);
          ai.push_back(i[batch]);
          ai.push_back(k);
        }
        std::vector<Expr> bi = {k};
        if (s.b.shape.size() > 1) {
          bi = batch_index(s.b.shape, i);
          bi.push_back(k);
          bi.push_back(i.back());
        }
        return te::sum(a(ai) * b(bi), {k});
      },
      name)};
}

// ---------------------------------------------------------------- pooling

struct PoolShapes {
  TensorType x;
  Window window;
  bool ceil_mode;
  Shape output;
};

// The blocked pools (NchwcMaxPool, NchwcAveragePool, NchwcGlobalAveragePool; written by
// the NCHWc layout pass) read [N, C/b, spatial..., b]: one more, trailing, dimension that
// is neither pooled nor padded.
bool is_blocked(const Node& node) {
  return node.op.rfind("Nchwc", 0) == 0;
}

bool is_max_pool(const Node& node) {
  return node.op == "MaxPool" || node.op == "NchwcMaxPool";
}

PoolShapes pool_shapes(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1, node.op == "MaxPool" ? 2 : 1);
  if (node.outputs.size() > 1) throw UnsupportedError("the Indices output is not supported");
  PoolShapes p;
  p.x = input_type(graph, node, 0, "X");
  // MaxPool serves integers too (its padding is the type's lowest value).
  if (!is_max_pool(node)) check_float(p.x, "input X");
  size_t lanes = is_blocked(node) ? 1 : 0;
  if (p.x.shape.size() < 3 + lanes) {
    throw UserError(str("input X is ", p.x.to_string(), "; pooling needs [N, C, spatial...]"));
  }
  size_t spatial = p.x.shape.size() - 2 - lanes;
  if (!is_max_pool(node) && node.attrs.has("dilations") &&
      ints_attr(node, "dilations", spatial, 1) != Shape(spatial, 1)) {
    throw UnsupportedError("attribute dilations is not supported for AveragePool (it is an opset 19 attribute)");
  }
  p.ceil_mode = node.attrs.get_int_or("ceil_mode", 0) != 0;
  p.window = window_of(node, Shape(p.x.shape.begin() + 2, p.x.shape.begin() + 2 + spatial), kernel_shape(node, spatial),
                       p.ceil_mode);
  p.output = {p.x.shape[0], p.x.shape[1]};
  p.output.insert(p.output.end(), p.window.output.begin(), p.window.output.end());
  if (lanes) p.output.push_back(p.x.shape.back());
  return p;
}

std::vector<TensorType> infer_pool(const Graph& graph, const Node& node) {
  PoolShapes p = pool_shapes(graph, node);
  return {{p.output, p.x.dtype}};
}

// MaxPool or AveragePool over any number of spatial dimensions: the input padded (for
// MaxPool with the lowest value, for AveragePool with 0) by the pads plus whatever the
// windows of ceil_mode reach beyond them, then a max or a sum over the window; an average
// divides by the elements of its window inside the input, or with count_include_pad
// inside the padded input.
std::vector<te::Tensor> compute_pool(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  PoolShapes p = pool_shapes(graph, node);
  const Window& w = p.window;
  std::string name = output_name(graph, node, 0);
  bool is_max = is_max_pool(node);
  bool blocked = is_blocked(node);
  size_t spatial = w.kernel.size();
  const te::Tensor& x = in[0];
  std::vector<int64_t> before(2, 0);
  std::vector<int64_t> after(2, 0);
  Shape reach_end(spatial);  // the padding at the end the windows read: pads, or more with ceil_mode
  bool padded_anywhere = false;
  for (size_t d = 0; d < spatial; ++d) {
    int64_t in_extent = p.x.shape[d + 2];
    int64_t last_window_end = (w.output[d] - 1) * w.strides[d] + w.dilations[d] * (w.kernel[d] - 1) + 1;
    reach_end[d] = std::max(w.pads_end[d], last_window_end - w.pads_begin[d] - in_extent);
    before.push_back(w.pads_begin[d]);
    after.push_back(reach_end[d]);
    padded_anywhere |= w.pads_begin[d] > 0 || reach_end[d] > 0;
  }
  if (blocked) {
    before.push_back(0);
    after.push_back(0);
  }
  te::Tensor padded =
      padded_anywhere ? ops::pad(x, before, after, is_max ? lowest_value(x.dtype()) : 0.0, name + "_pad") : x;
  std::vector<IterVar> axes;
  for (size_t d = 0; d < spatial; ++d) {
    axes.push_back(te::reduce_axis({0, ops::index_const(w.kernel[d])}, "r" + std::to_string(d)));
  }
  auto window_element = [&](const std::vector<Var>& i) {
    std::vector<Expr> index = {i[0], i[1]};
    for (size_t d = 0; d < spatial; ++d) {
      index.push_back(ops::times(i[d + 2], w.strides[d]) + ops::times(axes[d], w.dilations[d]));
    }
    if (blocked) index.push_back(i.back());
    return padded(index);
  };
  if (is_max) {
    return {te::compute(
        shape_exprs(p.output), [&](const std::vector<Var>& i) { return te::max(window_element(i), axes); }, name)};
  }
  te::Tensor sum = te::compute(
      shape_exprs(p.output), [&](const std::vector<Var>& i) { return te::sum(window_element(i), axes); },
      name + "_sum");
  bool count_pad = node.attrs.get_int_or("count_include_pad", 0) != 0;
  return {te::compute(
      shape_exprs(p.output),
      [&](const std::vector<Var>& i) {
        // Window d covers [o * stride, o * stride + kernel) of the padded dimension, whose
        // counted part is [0, begin + in + end) with count_include_pad, else [begin, begin + in).
        Expr count;
        int64_t constant_count = 1;
        for (size_t d = 0; d < spatial; ++d) {
          int64_t in_extent = p.x.shape[d + 2];
          int64_t first = count_pad ? 0 : w.pads_begin[d];
          int64_t last = count_pad ? w.pads_begin[d] + in_extent + w.pads_end[d] : w.pads_begin[d] + in_extent;
          bool always_full = count_pad ? reach_end[d] == w.pads_end[d] : (w.pads_begin[d] == 0 && reach_end[d] == 0);
          if (always_full) {
            constant_count *= w.kernel[d];
            continue;
          }
          Expr start = ops::times(i[d + 2], w.strides[d]);
          Expr covered =
              min(start + ops::index_const(w.kernel[d]), ops::index_const(last)) - max(start, ops::index_const(first));
          count = count.defined() ? count * covered : covered;
        }
        Expr divisor = make_const(p.x.dtype, static_cast<double>(constant_count));
        if (count.defined()) divisor = divisor * cast(p.x.dtype, count);
        return sum({i.begin(), i.end()}) / divisor;
      },
      name)};
}

std::vector<TensorType> infer_global_average_pool(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  const TensorType& x = input_type(graph, node, 0, "X");
  check_float(x, "input X");
  if (is_blocked(node)) {
    if (x.shape.size() != 5) throw UserError(str("input X is ", x.to_string(), "; expected [N, C/b, H, W, b]"));
    return {{{x.shape[0], x.shape[1], 1, 1, x.shape[4]}, x.dtype}};
  }
  if (x.shape.size() != 4) throw UnsupportedError(str("input X is ", x.to_string(), "; Temper serves 4-D NCHW inputs"));
  return {{{x.shape[0], x.shape[1], 1, 1}, x.dtype}};
}

std::vector<te::Tensor> compute_global_average_pool(const Graph& graph, const Node& node,
                                                    const std::vector<te::Tensor>& in) {
  std::string name = output_name(graph, node, 0);
  if (!is_blocked(node)) return {ops::global_avg_pool2d(in[0], ops::Layout::NCHW, name)};
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  IterVar ry = te::reduce_axis({0, ops::index_const(x[2])}, "ry");
  IterVar rx = te::reduce_axis({0, ops::index_const(x[3])}, "rx");
  te::Tensor sum = te::compute(
      shape_exprs(graph.value(node.outputs[0]).type.shape),
      [&](Var n, Var c, Var, Var, Var ci) {
        return te::sum(in[0](n, c, ry, rx, ci), {ry, rx});
      },
      name + "_sum");
  return {te::compute(
      shape_exprs(graph.value(node.outputs[0]).type.shape),
      [&](const std::vector<Var>& i) {
        return sum(ops::as_exprs(i)) / make_const(in[0].dtype(), static_cast<double>(x[2] * x[3]));
      },
      name)};
}

// ---------------------------------------------------------------- normalisations

std::vector<TensorType> infer_batch_norm(const Graph& graph, const Node& node) {
  check_arity(node, 5, 5, 5);
  if (node.outputs.size() > 1 || node.attrs.get_int_or("training_mode", 0) != 0) {
    throw UnsupportedError(
        "training mode (outputs running_mean and running_var) is not supported; Temper runs inference");
  }
  if (node.attrs.get_int_or("spatial", 1) == 0) throw UnsupportedError("attribute spatial=0 is not supported");
  const TensorType& x = input_type(graph, node, 0, "X");
  check_float(x, "input X");
  if (x.shape.size() < 2) throw UserError(str("input X is ", x.to_string(), "; it needs a channel dimension"));
  const char* const roles[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (int i = 1; i < 5; ++i) {
    const TensorType& param = input_type(graph, node, i, roles[i]);
    check_same_dtype(x, param, "input X", roles[i]);
    if (param.shape != Shape{x.shape[1]}) {
      throw UserError(
          str("input ", roles[i], " is ", param.to_string(), " but must be [", x.shape[1], "] (X's channels)"));
    }
  }
  return {x};
}

// i with its entry along axis replaced by `along`.
std::vector<Expr> with_axis(const std::vector<Var>& i, int64_t axis, Expr along) {
  std::vector<Expr> index(i.begin(), i.end());
  index[axis] = std::move(along);
  return index;
}

// A stage of x's shape with axis of extent 1, each element reduce(i, k) for a reduction
// axis k over x's axis: the row statistics of the softmax family.
te::Tensor row_stage(const te::Tensor& x, int64_t axis,
                     const std::function<Expr(const std::vector<Var>&, const IterVar&)>& reduce,
                     const std::string& name) {
  Shape rows = static_shape(x);
  int64_t extent = rows[axis];
  rows[axis] = 1;
  return te::compute(
      shape_exprs(rows),
      [&](const std::vector<Var>& i) {
        return reduce(i, te::reduce_axis({0, ops::index_const(extent)}, "k"));
      },
      name);
}

te::Tensor row_max(const te::Tensor& x, int64_t axis, const std::string& name) {
  return row_stage(
      x, axis, [&](const std::vector<Var>& i, const IterVar& k) { return te::max(x(with_axis(i, axis, k)), {k}); },
      name);
}

// 1 at the first maximum along axis, 0 elsewhere.
te::Tensor hardmax(const te::Tensor& x, int64_t axis, const std::string& name) {
  int64_t extent = static_shape(x)[axis];
  te::Tensor m = row_max(x, axis, name + "_max");
  te::Tensor first = row_stage(
      x, axis,
      [&](const std::vector<Var>& i, const IterVar& k) {
        Expr hit = x(with_axis(i, axis, k)) == m(with_axis(i, axis, ops::index_const(0)));
        return te::min(select(hit, Expr(k), ops::index_const(extent)), {k});
      },
      name + "_first");
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        Expr hit = Expr(i[axis]) == first(with_axis(i, axis, ops::index_const(0)));
        return select(hit, make_const(x.dtype(), 1.0), make_const(x.dtype(), 0.0));
      },
      name);
}

int softmax_axis(const Graph& graph, const Node& node, int64_t rank) {
  return normalize_axis(node.attrs.get_int_or("axis", graph.opset < 13 ? 1 : -1), rank, "axis");
}

std::vector<TensorType> infer_softmax(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  const TensorType& x = input_type(graph, node, 0, "input");
  check_float(x, "the input");
  softmax_axis(graph, node, static_cast<int64_t>(x.shape.size()));
  return {x};
}

// From opset 13 softmax runs along `axis`; before, over all of [axis, rank) at once (the
// input as the matrix [prod(shape[:axis]), prod(shape[axis:])]).
// LogSoftmax alike.
std::vector<te::Tensor> compute_softmax(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  std::string name = output_name(graph, node, 0);
  auto along = node.op == "Softmax" ? ops::softmax : node.op == "LogSoftmax" ? log_softmax : hardmax;
  Shape shape = static_shape(in[0]);
  int axis = softmax_axis(graph, node, static_cast<int64_t>(shape.size()));
  if (graph.opset >= 13 || product(shape, axis + 1, shape.size()) == 1) return {along(in[0], axis, name)};
  Shape matrix = {product(shape, 0, axis), product(shape, axis, shape.size())};
  te::Tensor rows = ops::reshape(in[0], matrix, name + "_rows");
  te::Tensor y = along(rows, 1, name + "_" + node.op);
  return {ops::reshape(y, shape, name)};
}

// Outputs Y, Mean, InvStdDev; the statistics keep X's rank with extent 1 from axis on.
std::vector<TensorType> infer_layer_norm(const Graph& graph, const Node& node) {
  check_arity(node, 2, 3, 3);
  const TensorType& x = input_type(graph, node, 0, "X");
  check_float(x, "input X");
  int64_t rank = static_cast<int64_t>(x.shape.size());
  int axis = normalize_axis(node.attrs.get_int_or("axis", -1), rank, "axis");
  for (int i = 1; i < 3; ++i) {
    if (i == 2 && !has_input(node, i)) continue;
    const char* role = i == 1 ? "Scale" : "B";
    const TensorType& param = input_type(graph, node, i, role);
    check_same_dtype(x, param, "input X", role);
    if (param.shape.size() > static_cast<size_t>(rank - axis) || broadcast_shapes(x, param) != x.shape) {
      throw UserError(str("input ", role, " ", param.to_string(), " does not broadcast to the normalised dimensions ",
                          ints_str(Shape(x.shape.begin() + axis, x.shape.end())), " of X ", x.to_string()));
    }
  }
  Shape stats = x.shape;
  std::fill(stats.begin() + axis, stats.end(), 1);
  std::vector<TensorType> types = {x, {stats, x.dtype}, {stats, x.dtype}};
  types.resize(node.outputs.size());
  return types;
}

std::vector<te::Tensor> compute_layer_norm(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  Shape shape = static_shape(x);
  int rank = static_cast<int>(shape.size());
  int axis = normalize_axis(node.attrs.get_int_or("axis", -1), rank, "axis");
  DataType t = x.dtype();
  std::string name = output_name(graph, node, 0);
  Shape stats_shape = shape;
  std::vector<IterVar> axes;
  for (int d = axis; d < rank; ++d) {
    stats_shape[d] = 1;
    axes.push_back(te::reduce_axis({0, ops::index_const(shape[d])}, "r" + std::to_string(d - axis)));
  }
  auto over_axes = [&](const std::vector<Var>& i) {
    std::vector<Expr> index(i.begin(), i.end());
    for (int d = axis; d < rank; ++d) index[d] = axes[d - axis];
    return index;
  };
  auto stat_index = [&](const std::vector<Var>& i) {
    std::vector<Expr> index(i.begin(), i.end());
    for (int d = axis; d < rank; ++d) index[d] = ops::index_const(0);
    return index;
  };
  auto stat_name = [&](int o, const std::string& suffix) {
    return o < static_cast<int>(node.outputs.size()) ? output_name(graph, node, o) : name + suffix;
  };
  // A reduction must be a whole body: each element is scaled by 1/n before the sum.
  Expr inv_count = make_const(t, 1.0 / static_cast<double>(product(shape, axis, rank)));
  te::Tensor mean = te::compute(
      shape_exprs(stats_shape), [&](const std::vector<Var>& i) { return te::sum(x(over_axes(i)) * inv_count, axes); },
      stat_name(1, "_mean"));
  te::Tensor variance = te::compute(
      shape_exprs(stats_shape),
      [&](const std::vector<Var>& i) {
        Expr centered = x(over_axes(i)) - mean(stat_index(i));
        return te::sum(centered * centered * inv_count, axes);
      },
      name + "_var");
  te::Tensor inv_std = te::compute(
      shape_exprs(stats_shape),
      [&](const std::vector<Var>& i) {
        return te::rsqrt(variance({i.begin(), i.end()}) + make_const(t, node.attrs.get_float_or("epsilon", 1e-5)));
      },
      stat_name(2, "_inv_std"));
  te::Tensor y = te::compute(
      shape_exprs(shape),
      [&](const std::vector<Var>& i) {
        Expr normalized = (x({i.begin(), i.end()}) - mean(stat_index(i))) * inv_std(stat_index(i));
        Expr scaled = normalized * broadcast_load(in[1], i);
        return has_input(node, 2) ? scaled + broadcast_load(in[2], i) : scaled;
      },
      name);
  std::vector<te::Tensor> outputs = {y, mean, inv_std};
  outputs.resize(node.outputs.size());
  return outputs;
}

// InstanceNormalization and GroupNormalization: X [N, C, d...] normalised over groups of
// channels by each group's own mean and variance, then scaled and shifted per channel.
// InstanceNormalization's groups are single channels. GroupNormalization (opset 18) takes
// num_groups G dividing C; its scale and bias are per group ([G]) in opset 18 and per
// channel ([C]) from opset 21 (ONNX changed the op; a per-group parameter applies to each
// channel of its group).
struct NormGroups {
  int64_t groups;
  bool params_per_group;
};

NormGroups norm_groups(const Graph& graph, const Node& node, const TensorType& x) {
  if (node.op == "InstanceNormalization") return {x.shape[1], false};
  if (!node.attrs.has("num_groups")) throw UserError("attribute num_groups is missing");
  int64_t groups = node.attrs.get_int("num_groups");
  if (groups <= 0 || x.shape[1] % groups != 0) {
    throw UserError(str("num_groups=", groups, " does not divide the ", x.shape[1], " channels of ", x.to_string()));
  }
  return {groups, graph.opset < 21};
}

std::vector<TensorType> infer_group_norm(const Graph& graph, const Node& node) {
  check_arity(node, 3, 3);
  const TensorType& x = input_type(graph, node, 0, node.op == "InstanceNormalization" ? "input" : "X");
  check_float(x, "the input");
  if (x.shape.size() < 3) throw UserError(str("input is ", x.to_string(), "; it must be [N, C, d1, ...]"));
  NormGroups g = norm_groups(graph, node, x);
  int64_t params = g.params_per_group ? g.groups : x.shape[1];
  for (int i : {1, 2}) {
    const char* role = i == 1 ? "scale" : (node.op == "InstanceNormalization" ? "B" : "bias");
    const TensorType& param = input_type(graph, node, i, role);
    check_same_dtype(x, param, "the input", role);
    if (param.shape != Shape{params}) {
      throw UserError(str("input ", role, " is ", param.to_string(), " but must be [", params, "] (",
                          g.params_per_group ? "the groups, before opset 21" : "the channels", ")"));
    }
  }
  return {x};
}

std::vector<te::Tensor> compute_group_norm(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  Shape shape = static_shape(x);
  int rank = static_cast<int>(shape.size());
  DataType t = x.dtype();
  std::string name = output_name(graph, node, 0);
  NormGroups g = norm_groups(graph, node, input_type(graph, node, 0, "input"));
  int64_t per_group = shape[1] / g.groups;
  Shape stats_shape = {shape[0], g.groups};
  Expr inv_count = make_const(t, 1.0 / static_cast<double>(per_group * product(shape, 2, rank)));
  // The elements of group (n, group): its channels (a reduce axis unless it has one) and planes.
  auto group = [&](Var n, Var group, std::vector<IterVar>& axes) {
    Expr channel = group * ops::index_const(per_group);
    if (per_group > 1) {
      axes.push_back(te::reduce_axis({0, ops::index_const(per_group)}, "rc"));
      channel = channel + axes.back();
    }
    std::vector<Expr> index = {n, channel};
    for (int d = 2; d < rank; ++d) {
      axes.push_back(te::reduce_axis({0, ops::index_const(shape[d])}, "r" + std::to_string(d)));
      index.push_back(axes.back());
    }
    return index;
  };
  te::Tensor mean = te::compute(
      shape_exprs(stats_shape),
      [&](Var n, Var c) {
        std::vector<IterVar> axes;
        std::vector<Expr> at = group(n, c, axes);
        return te::sum(x(at) * inv_count, axes);
      },
      name + "_mean");
  te::Tensor variance = te::compute(
      shape_exprs(stats_shape),
      [&](Var n, Var c) {
        std::vector<IterVar> axes;
        std::vector<Expr> at = group(n, c, axes);
        Expr centered = x(at) - mean(n, c);
        return te::sum(centered * centered * inv_count, axes);
      },
      name + "_var");
  Expr epsilon = make_const(t, node.attrs.get_float_or("epsilon", 1e-5));
  return {te::compute(
      shape_exprs(shape),
      [&](const std::vector<Var>& i) {
        Expr group_of = per_group > 1 ? i[1] / ops::index_const(per_group) : Expr(i[1]);
        Expr param = g.params_per_group ? group_of : Expr(i[1]);
        Expr normalized =
            (x({i.begin(), i.end()}) - mean(i[0], group_of)) * te::rsqrt(variance(i[0], group_of) + epsilon);
        return normalized * in[1](param) + in[2](param);
      },
      name)};
}

}  // namespace

te::Tensor log_softmax(const te::Tensor& x, int64_t axis, const std::string& name) {
  te::Tensor m = row_max(x, axis, name + "_max");
  te::Tensor sum = row_stage(
      x, axis,
      [&](const std::vector<Var>& i, const IterVar& k) {
        return te::sum(te::exp(x(with_axis(i, axis, k)) - m(with_axis(i, axis, ops::index_const(0)))), {k});
      },
      name + "_sumexp");
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> row = with_axis(i, axis, ops::index_const(0));
        return x({i.begin(), i.end()}) - m(row) - te::log(sum(row));
      },
      name);
}

ConvWindow2d conv2d_window(const Graph& graph, const Node& node) {
  ConvShapes c = conv_shapes(graph, node);
  if (c.x.shape.size() != 4) throw UserError(str("input X is ", c.x.to_string(), "; not a 2-D convolution"));
  const Window& w = c.window;
  return {w.strides, w.dilations, {w.pads_begin[0], w.pads_begin[1], w.pads_end[0], w.pads_end[1]}};
}

std::vector<GraphOp> nn_graph_ops() {
  std::vector<GraphOp> blocked_pools = {
      {"NchwcMaxPool", OpPattern::Reduction, infer_pool, compute_pool},
      {"NchwcAveragePool", OpPattern::Reduction, infer_pool, compute_pool},
      {"NchwcGlobalAveragePool", OpPattern::Reduction, infer_global_average_pool, compute_global_average_pool},
  };
  for (GraphOp& op : blocked_pools) op.internal = true;
  std::vector<GraphOp> ops = {
      {"Conv", OpPattern::OutFusable, infer_conv, compute_conv, nullptr, conv_epilogue},
      {"Gemm", OpPattern::OutFusable, infer_gemm, compute_gemm, nullptr, gemm_epilogue},
      {"MatMul", OpPattern::OutFusable, infer_matmul, compute_matmul},
      {"MaxPool", OpPattern::Reduction, infer_pool, compute_pool},
      {"AveragePool", OpPattern::Reduction, infer_pool, compute_pool},
      {"GlobalAveragePool", OpPattern::Reduction, infer_global_average_pool, compute_global_average_pool},
      {"BatchNormalization", OpPattern::Broadcast, infer_batch_norm,
       [](const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
         double epsilon = node.attrs.get_float_or("epsilon", 1e-5);
         return std::vector<te::Tensor>{
             ops::batch_norm(in[0], in[3], in[4], in[1], in[2], 1, epsilon, output_name(graph, node, 0))};
       }},
      {"Softmax", OpPattern::Reduction, infer_softmax, compute_softmax},
      {"LogSoftmax", OpPattern::Reduction, infer_softmax, compute_softmax},
      {"Hardmax", OpPattern::Reduction, infer_softmax, compute_softmax},
      {"InstanceNormalization", OpPattern::Reduction, infer_group_norm, compute_group_norm},
      {"GroupNormalization", OpPattern::Reduction, infer_group_norm, compute_group_norm},
      {"LayerNormalization", OpPattern::Reduction, infer_layer_norm, compute_layer_norm},
  };
  ops.insert(ops.end(), blocked_pools.begin(), blocked_pools.end());
  return ops;
}

}  // namespace temper::graph::detail
