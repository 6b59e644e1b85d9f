#include "compiler/ops/op_table.h"

#include <cmath>
#include <limits>

#include "compiler/ops/attention.h"
#include "compiler/ops/conv.h"
#include "compiler/ops/elementwise.h"
#include "compiler/ops/matmul.h"
#include "compiler/ops/nchwc.h"
#include "compiler/ops/nn.h"
#include "compiler/ops/pool.h"
#include "compiler/ops/reference.h"
#include "compiler/ops/transform.h"
#include "compiler/ops/winograd.h"

namespace temper::ops {

namespace {

using Reference = std::function<void(const std::vector<const void*>&, const std::vector<void*>&)>;

// Calls f(T{}) with T the C++ type of dtype (float32 or int32, the types workloads take).
template <typename F>
void with_dtype(DataType dtype, F&& f) {
  if (dtype == DataType::float32()) {
    f(float{});
  } else {
    TEMPER_CHECK(dtype == DataType::int32(), "no reference implementation for dtype ", dtype);
    f(int32_t{});
  }
}

template <typename T>
const T* in(const std::vector<const void*>& ins, size_t i) {
  return static_cast<const T*>(ins[i]);
}
template <typename T>
T* out(const std::vector<void*>& outs, size_t i) {
  return static_cast<T*>(outs[i]);
}

te::Tensor placeholder(const Workload& w, const Shape& shape, const std::string& name) {
  return te::placeholder(shape_exprs(shape, w.op), w.dtype(), name);
}

// The instance of w computing `output` from `inputs`.
OpInstance finish(const Workload& w, std::vector<te::Tensor> inputs, te::Tensor output, double flops,
                  Reference reference, std::vector<ValueRange> ranges = {}) {
  OpInstance inst;
  inst.name = w.op;
  inst.inputs = std::move(inputs);
  inst.outputs = {std::move(output)};
  std::vector<te::Tensor> args = inst.inputs;
  args.insert(args.end(), inst.outputs.begin(), inst.outputs.end());
  inst.func = te::create_prim_func(args, w.op);
  inst.flops = flops;
  // Small integers keep integer sums far from overflow.
  ValueRange default_range = w.dtype().is_float() ? ValueRange{-1.0, 1.0} : ValueRange{-8.0, 8.0};
  ranges.resize(inst.inputs.size(), default_range);
  inst.input_ranges = std::move(ranges);
  size_t num_inputs = inst.inputs.size();
  std::string op = w.op;
  inst.reference = [num_inputs, op, reference](const std::vector<const void*>& ins, const std::vector<void*>& outs) {
    if (ins.size() != num_inputs || outs.size() != 1) {
      throw UserError(str("the reference of ", op, " takes ", num_inputs, " inputs and 1 output, got ", ins.size(),
                          " and ", outs.size()));
    }
    reference(ins, outs);
  };
  return inst;
}

// The N, C, H, W image of w in w's layout.
Shape image_shape(const Workload& w, Layout layout) {
  int64_t N = w.get_int("N");
  int64_t C = w.get_int("C");
  int64_t H = w.get_int("H");
  int64_t W = w.get_int("W");
  return layout == Layout::NCHW ? Shape{N, C, H, W} : Shape{N, H, W, C};
}

// ---------------------------------------------------------------- matrix products

OpInstance instantiate_matmul(const Workload& w) {
  int64_t M = w.get_int("M"), N = w.get_int("N"), K = w.get_int("K");
  bool ta = w.get_bool("transpose_a"), tb = w.get_bool("transpose_b");
  te::Tensor a = placeholder(w, ta ? Shape{K, M} : Shape{M, K}, "A");
  te::Tensor b = placeholder(w, tb ? Shape{N, K} : Shape{K, N}, "B");
  OpInstance inst = finish(w, {a, b}, matmul(a, b, ta, tb), 2.0 * M * N * K, [=, dtype = w.dtype()](auto& ins, auto& outs) {
    with_dtype(dtype, [&](auto t) {
      using T = decltype(t);
      reference::matmul(in<T>(ins, 0), in<T>(ins, 1), out<T>(outs, 0), M, N, K, ta, tb);
    });
  });
  inst.weight_inputs = {1};
  return inst;
}

OpInstance instantiate_batch_matmul(const Workload& w) {
  int64_t B = w.get_int("B"), M = w.get_int("M"), N = w.get_int("N"), K = w.get_int("K");
  bool ta = w.get_bool("transpose_a"), tb = w.get_bool("transpose_b");
  te::Tensor a = placeholder(w, ta ? Shape{B, K, M} : Shape{B, M, K}, "A");
  te::Tensor b = placeholder(w, tb ? Shape{B, N, K} : Shape{B, K, N}, "B");
  return finish(w, {a, b}, batch_matmul(a, b, ta, tb), 2.0 * B * M * N * K,
                [=, dtype = w.dtype()](auto& ins, auto& outs) {
                  with_dtype(dtype, [&](auto t) {
                    using T = decltype(t);
                    reference::batch_matmul(in<T>(ins, 0), in<T>(ins, 1), out<T>(outs, 0), B, M, N, K, ta, tb);
                  });
                });
}

OpInstance instantiate_dense(const Workload& w) {
  int64_t M = w.get_int("M"), N = w.get_int("N"), K = w.get_int("K");
  bool has_bias = w.get_bool("bias");
  std::optional<UnaryOp> act = dense_activation(w);
  te::Tensor x = placeholder(w, {M, K}, "X");
  te::Tensor weight = placeholder(w, {N, K}, "W");
  std::vector<te::Tensor> inputs = {x, weight};
  te::Tensor bias;
  if (has_bias) {
    bias = placeholder(w, {N}, "bias");
    inputs.push_back(bias);
  }
  double flops = 2.0 * M * N * K + (has_bias ? M * N : 0) + (act ? M * N : 0);
  OpInstance inst = finish(w, inputs, dense(x, weight, bias, act), flops, [=](auto& ins, auto& outs) {
    const float* b = has_bias ? in<float>(ins, 2) : nullptr;
    reference::dense(in<float>(ins, 0), in<float>(ins, 1), b, out<float>(outs, 0), M, N, K, act);
  });
  inst.weight_inputs = has_bias ? std::vector<int>{1, 2} : std::vector<int>{1};
  return inst;
}

// ---------------------------------------------------------------- convolution and pooling

OpInstance instantiate_conv2d(const Workload& w) {
  Layout layout = parse_layout(w.get("layout"));
  Shape in_shape = image_shape(w, layout);
  int64_t groups = w.get_int("groups");
  int64_t K = w.get_int("K"), R = w.get_int("R"), S = w.get_int("S");
  int64_t C = w.get_int("C");
  if (C % groups != 0) {
    throw UserError(str("conv2d: C=", C, " channels are not divisible by groups=", groups));
  }
  Shape w_shape = layout == Layout::NCHW ? Shape{K, C / groups, R, S} : Shape{R, S, C / groups, K};
  Window2d window = window_of(w, true);
  te::Tensor x = placeholder(w, in_shape, "input");
  te::Tensor weight = placeholder(w, w_shape, "weight");
  te::Tensor y = conv2d(x, weight, window, groups, layout);
  double flops = 2.0 * num_elements(static_shape(y, "conv2d")) * (C / groups) * R * S;
  OpInstance inst = finish(w, {x, weight}, y, flops, [=, dtype = w.dtype()](auto& ins, auto& outs) {
    with_dtype(dtype, [&](auto t) {
      using T = decltype(t);
      reference::conv2d(in<T>(ins, 0), in<T>(ins, 1), out<T>(outs, 0), in_shape, w_shape, window, groups, layout);
    });
  });
  inst.weight_inputs = {1};
  return inst;
}

// conv2d (NCHW, one group) with its epilogue: + bias[k], + a residual of the output's
// shape (residual=1), then an activation -- a ResNet block's conv, bias (a folded batch
// norm), shortcut add and relu as one op. No template serves it: the auto-scheduler's
// consumer fusion does.
OpInstance instantiate_fused_conv2d(const Workload& w) {
  Shape in_shape = image_shape(w, Layout::NCHW);
  int64_t K = w.get_int("K"), R = w.get_int("R"), S = w.get_int("S");
  Shape w_shape = {K, in_shape[1], R, S};
  Window2d window = window_of(w, true);
  bool has_residual = w.get_bool("residual");
  std::optional<UnaryOp> act = dense_activation(w);
  te::Tensor x = placeholder(w, in_shape, "input");
  te::Tensor weight = placeholder(w, w_shape, "weight");
  te::Tensor bias = placeholder(w, {K}, "bias");
  te::Tensor conv = conv2d(x, weight, window, 1, Layout::NCHW, "fused_conv2d_conv");
  Shape out_shape = static_shape(conv, "fused_conv2d");
  std::vector<te::Tensor> inputs = {x, weight, bias};
  te::Tensor residual;
  if (has_residual) {
    residual = placeholder(w, out_shape, "residual");
    inputs.push_back(residual);
  }
  te::Tensor y = te::compute(
      shape_exprs(out_shape, "fused_conv2d"),
      [&](Var n, Var k, Var h, Var x_) {
        Expr v = conv(n, k, h, x_) + bias(k);
        if (has_residual) v = v + residual(n, k, h, x_);
        return act ? unary_expr(*act, v) : v;
      },
      "fused_conv2d");
  int64_t outputs = num_elements(out_shape);
  double flops = 2.0 * outputs * in_shape[1] * R * S + outputs * (1 + (has_residual ? 1 : 0) + (act ? 1 : 0));
  OpInstance inst = finish(w, inputs, y, flops, [=](auto& ins, auto& outs) {
    float* o = out<float>(outs, 0);
    reference::conv2d(in<float>(ins, 0), in<float>(ins, 1), o, in_shape, w_shape, window, 1, Layout::NCHW);
    const float* b = in<float>(ins, 2);
    const float* res = has_residual ? in<float>(ins, 3) : nullptr;
    int64_t plane = out_shape[2] * out_shape[3];
    for (int64_t i = 0; i < outputs; ++i) {
      float v = o[i] + b[(i / plane) % K] + (res ? res[i] : 0.0f);
      o[i] = act ? reference::unary(*act, v) : v;
    }
  });
  inst.weight_inputs = {1, 2};
  return inst;
}

OpInstance instantiate_depthwise_conv2d(const Workload& w) {
  Layout layout = parse_layout(w.get("layout"));
  Shape in_shape = image_shape(w, layout);
  int64_t K = w.get_int("C") * w.get_int("multiplier"), R = w.get_int("R"), S = w.get_int("S");
  Shape w_shape = layout == Layout::NCHW ? Shape{K, 1, R, S} : Shape{R, S, 1, K};
  Window2d window = window_of(w, true);
  te::Tensor x = placeholder(w, in_shape, "input");
  te::Tensor weight = placeholder(w, w_shape, "weight");
  te::Tensor y = depthwise_conv2d(x, weight, window, layout);
  double flops = 2.0 * num_elements(static_shape(y, "depthwise_conv2d")) * R * S;
  OpInstance inst = finish(w, {x, weight}, y, flops, [=, dtype = w.dtype()](auto& ins, auto& outs) {
    with_dtype(dtype, [&](auto t) {
      using T = decltype(t);
      reference::depthwise_conv2d(in<T>(ins, 0), in<T>(ins, 1), out<T>(outs, 0), in_shape, w_shape, window, layout);
    });
  });
  inst.weight_inputs = {1};
  return inst;
}

// The blocked-layout convolutions (nchwc.h): C and K are the logical channel counts, the
// arrays hold them in blocks (the tail lanes are data like any other, but for the input
// lanes past C, which an ungrouped conv does not reduce over). group_conv2d_nchwc
// is conv2d_nchwc of `groups` groups lined up with the blocks (nchwc_block_groups).
OpInstance instantiate_conv2d_nchwc(const Workload& w) {
  int64_t N = w.get_int("N"), C = w.get_int("C"), H = w.get_int("H"), W = w.get_int("W");
  int64_t K = w.get_int("K"), R = w.get_int("R"), S = w.get_int("S");
  int64_t cb = w.get_int("in_block"), kb = w.get_int("out_block");
  int64_t groups = nchwc_conv_groups(w);
  if (C % groups != 0 || K % groups != 0) {
    throw UserError(str(w.op, ": C=", C, " and K=", K, " channels are not both divisible by groups=", groups));
  }
  int64_t Gb = nchwc_block_groups(C, K, groups, cb, kb);
  if (Gb == 0) {
    throw UserError(str(w.op, ": groups of ", C / groups, " input and ", K / groups,
                        " output channels do not line up with in_block=", cb, " and out_block=", kb,
                        "; each group must be whole blocks, or each block whole groups of as many input as output "
                        "channels (in_block = out_block)"));
  }
  int64_t Ci = channel_blocks(C, cb), Ko = channel_blocks(K, kb);
  Window2d window = window_of(w, true);
  Shape in_shape = cb == 1 ? Shape{N, C, H, W} : Shape{N, Ci, H, W, cb};
  Shape w_shape = {Ko, Ci / Gb, R, S, cb, kb};
  te::Tensor x = placeholder(w, in_shape, "input");
  te::Tensor weight = placeholder(w, w_shape, "weight");
  te::Tensor y = conv2d_nchwc(x, weight, window, "conv2d_nchwc", Gb, cb == 1 ? 0 : C);
  Shape out_shape = static_shape(y, "conv2d_nchwc");
  double flops = 2.0 * N * K * out_shape[2] * out_shape[3] * (C / groups) * R * S;  // the logical channels
  OpInstance inst = finish(w, {x, weight}, y, flops, [=](auto& ins, auto& outs) {
    reference::conv2d_nchwc(in<float>(ins, 0), in<float>(ins, 1), out<float>(outs, 0), in_shape, w_shape, window, Gb,
                            C);
  });
  inst.weight_inputs = {1};
  return inst;
}

OpInstance instantiate_depthwise_conv2d_nchwc(const Workload& w) {
  int64_t N = w.get_int("N"), C = w.get_int("C"), H = w.get_int("H"), W = w.get_int("W");
  int64_t R = w.get_int("R"), S = w.get_int("S"), b = w.get_int("block");
  int64_t Cb = channel_blocks(C, b);
  Window2d window = window_of(w, true);
  te::Tensor x = placeholder(w, {N, Cb, H, W, b}, "input");
  te::Tensor weight = placeholder(w, {Cb, R, S, b}, "weight");
  te::Tensor y = depthwise_conv2d_nchwc(x, weight, window);
  Shape out_shape = static_shape(y, "depthwise_conv2d_nchwc");
  double flops = 2.0 * N * C * out_shape[2] * out_shape[3] * R * S;
  OpInstance inst = finish(w, {x, weight}, y, flops, [=](auto& ins, auto& outs) {
    reference::depthwise_conv2d_nchwc(in<float>(ins, 0), in<float>(ins, 1), out<float>(outs, 0), {N, Cb, H, W, b},
                                      {Cb, R, S, b}, window);
  });
  inst.weight_inputs = {1};
  return inst;
}

// A depthwise conv, its bias and activation, then a 1x1 conv to K channels, all in blocks
// of `block` (nchwc.h's depthwise_pointwise_nchwc); C and K are logical channel counts.
OpInstance instantiate_depthwise_pointwise_nchwc(const Workload& w) {
  int64_t N = w.get_int("N"), C = w.get_int("C"), H = w.get_int("H"), W = w.get_int("W");
  int64_t R = w.get_int("R"), S = w.get_int("S"), K = w.get_int("K"), b = w.get_int("block");
  int64_t Cb = channel_blocks(C, b), Kb = channel_blocks(K, b);
  Window2d window = window_of(w, true);
  std::optional<UnaryOp> act = dense_activation(w);
  Shape in_shape = {N, Cb, H, W, b}, dw_shape = {Cb, R, S, b}, pw_shape = {Kb, Cb, 1, 1, b, b};
  te::Tensor x = placeholder(w, in_shape, "input");
  te::Tensor dw_weight = placeholder(w, dw_shape, "dw_weight");
  te::Tensor dw_bias = placeholder(w, {Cb, b}, "dw_bias");
  te::Tensor pw_weight = placeholder(w, pw_shape, "pw_weight");
  te::Tensor y = depthwise_pointwise_nchwc(x, dw_weight, dw_bias, pw_weight, window, act, C);
  Shape out_shape = static_shape(y, "depthwise_pointwise_nchwc");
  int64_t pixels = N * out_shape[2] * out_shape[3];
  double flops = 2.0 * pixels * C * (R * S + K) + pixels * C * (act ? 2 : 1);
  OpInstance inst = finish(w, {x, dw_weight, dw_bias, pw_weight}, y, flops, [=](auto& ins, auto& outs) {
    Shape mid_shape = {N, Cb, out_shape[2], out_shape[3], b};
    std::vector<float> mid(num_elements(mid_shape));
    reference::depthwise_conv2d_nchwc(in<float>(ins, 0), in<float>(ins, 1), mid.data(), in_shape, dw_shape, window);
    const float* bias = in<float>(ins, 2);
    int64_t plane = out_shape[2] * out_shape[3];
    for (int64_t i = 0; i < static_cast<int64_t>(mid.size()); ++i) {
      float v = mid[i] + bias[((i / (plane * b)) % Cb) * b + i % b];
      mid[i] = act ? reference::unary(*act, v) : v;
    }
    reference::conv2d_nchwc(mid.data(), in<float>(ins, 3), out<float>(outs, 0), mid_shape, pw_shape, Window2d{}, 1,
                            C);
  });
  inst.weight_inputs = {1, 2, 3};
  return inst;
}

// Winograd's 3x3 stride-1 conv over the blocked layout (winograd.h); its weight is the
// transformed one, so C and K here are the blocked (padded) channel counts' logical ones.
OpInstance instantiate_conv2d_winograd_nchwc(const Workload& w) {
  int64_t N = w.get_int("N"), C = w.get_int("C"), H = w.get_int("H"), W = w.get_int("W");
  int64_t K = w.get_int("K"), b = w.get_int("block"), m = w.get_int("tile");
  const WinogradMatrices& mat = winograd_matrices(m);
  int64_t a = mat.alpha, Cb = channel_blocks(C, b), Kb = channel_blocks(K, b);
  Padding2d padding = padding_of(w);
  te::Tensor x = placeholder(w, {N, Cb, H, W, b}, "input");
  te::Tensor weight = placeholder(w, {a, a, Kb, Cb, b, b}, "weight");
  te::Tensor y = conv2d_winograd_nchwc(x, weight, padding, m);
  Shape out_shape = static_shape(y, "conv2d_winograd_nchwc");
  // The direct convolution's FLOPs: what the kernel replaces, so GFLOP/s compare with it.
  double flops = 2.0 * N * K * out_shape[2] * out_shape[3] * C * 9;
  OpInstance inst = finish(w, {x, weight}, y, flops, [=](auto& ins, auto& outs) {
    reference::conv2d_winograd_nchwc(in<float>(ins, 0), in<float>(ins, 1), out<float>(outs, 0), {N, Cb, H, W, b},
                                     {a, a, Kb, Cb, b, b}, padding, m);
  });
  inst.weight_inputs = {1};
  inst.tolerance_of_largest = 1e-5;
  return inst;
}

OpInstance instantiate_max_pool2d(const Workload& w) {
  Layout layout = parse_layout(w.get("layout"));
  Shape shape = image_shape(w, layout);
  std::array<int64_t, 2> kernel = pair_of(w, "kernel");
  Window2d window = window_of(w, false);
  te::Tensor x = placeholder(w, shape, "X");
  te::Tensor y = max_pool2d(x, kernel, window, layout);
  double flops = static_cast<double>(num_elements(static_shape(y, "max_pool2d"))) * kernel[0] * kernel[1];
  return finish(w, {x}, y, flops, [=, dtype = w.dtype()](auto& ins, auto& outs) {
    with_dtype(dtype, [&](auto t) {
      using T = decltype(t);
      reference::max_pool2d(in<T>(ins, 0), out<T>(outs, 0), shape, kernel, window, layout);
    });
  });
}

OpInstance instantiate_avg_pool2d(const Workload& w) {
  Layout layout = parse_layout(w.get("layout"));
  Shape shape = image_shape(w, layout);
  std::array<int64_t, 2> kernel = pair_of(w, "kernel");
  Window2d window = window_of(w, false);
  bool include_pad = w.get_bool("count_include_pad");
  te::Tensor x = placeholder(w, shape, "X");
  te::Tensor y = avg_pool2d(x, kernel, window, layout, include_pad);
  double flops = static_cast<double>(num_elements(static_shape(y, "avg_pool2d"))) * (kernel[0] * kernel[1] + 1);
  return finish(w, {x}, y, flops, [=](auto& ins, auto& outs) {
    reference::avg_pool2d(in<float>(ins, 0), out<float>(outs, 0), shape, kernel, window, layout, include_pad);
  });
}

OpInstance instantiate_global_avg_pool2d(const Workload& w) {
  Layout layout = parse_layout(w.get("layout"));
  Shape shape = image_shape(w, layout);
  te::Tensor x = placeholder(w, shape, "X");
  return finish(w, {x}, global_avg_pool2d(x, layout), static_cast<double>(num_elements(shape)),
                [=](auto& ins, auto& outs) {
                  reference::global_avg_pool2d(in<float>(ins, 0), out<float>(outs, 0), shape, layout);
                });
}

// ---------------------------------------------------------------- elementwise

template <BinaryOp kOp>
OpInstance instantiate_binary(const Workload& w) {
  Shape sa = w.get_ints("A");
  Shape sb = w.get_ints("B");
  te::Tensor a = placeholder(w, sa, "A");
  te::Tensor b = placeholder(w, sb, "B");
  te::Tensor y = binary(kOp, a, b, binary_op_name(kOp));
  std::vector<ValueRange> ranges;
  if (kOp == BinaryOp::Div) ranges = {ValueRange{-1.0, 1.0}, ValueRange{0.5, 2.0}};
  return finish(
      w, {a, b}, y, static_cast<double>(num_elements(static_shape(y, w.op))),
      [=, dtype = w.dtype()](auto& ins, auto& outs) {
        with_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          reference::binary(kOp, in<T>(ins, 0), sa, in<T>(ins, 1), sb, out<T>(outs, 0));
        });
      },
      ranges);
}

template <UnaryOp kOp>
OpInstance instantiate_unary(const Workload& w) {
  Shape shape = w.get_ints("shape");
  te::Tensor x = placeholder(w, shape, "X");
  int64_t count = num_elements(shape);
  std::vector<ValueRange> ranges;
  if (kOp == UnaryOp::Sqrt) ranges = {ValueRange{0.0, 2.0}};
  return finish(
      w, {x}, unary(kOp, x, unary_op_name(kOp)), static_cast<double>(count),
      [=, dtype = w.dtype()](auto& ins, auto& outs) {
        with_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          reference::unary(kOp, in<T>(ins, 0), out<T>(outs, 0), count);
        });
      },
      ranges);
}

OpInstance instantiate_scale_bias(const Workload& w) {
  Shape shape = w.get_ints("shape");
  int axis = normalize_axis(w.get_int("axis"), static_cast<int>(shape.size()), "scale_bias");
  te::Tensor x = placeholder(w, shape, "X");
  te::Tensor scale = placeholder(w, {shape[axis]}, "scale");
  te::Tensor bias = placeholder(w, {shape[axis]}, "bias");
  return finish(w, {x, scale, bias}, scale_bias(x, scale, bias, axis), 2.0 * num_elements(shape),
                [=](auto& ins, auto& outs) {
                  reference::scale_bias(in<float>(ins, 0), in<float>(ins, 1), in<float>(ins, 2), out<float>(outs, 0),
                                        shape, axis);
                });
}

// ---------------------------------------------------------------- normalisation

OpInstance instantiate_softmax(const Workload& w) {
  Shape shape = w.get_ints("shape");
  int axis = normalize_axis(w.get_int("axis"), static_cast<int>(shape.size()), "softmax");
  te::Tensor x = placeholder(w, shape, "X");
  return finish(w, {x}, softmax(x, axis), 4.0 * num_elements(shape), [=](auto& ins, auto& outs) {
    reference::softmax(in<float>(ins, 0), out<float>(outs, 0), shape, axis);
  });
}

OpInstance instantiate_layer_norm(const Workload& w) {
  Shape shape = w.get_ints("shape");
  int axis = normalize_axis(w.get_int("axis"), static_cast<int>(shape.size()), "layer_norm");
  double eps = w.get_float("eps");
  Shape normalized(shape.begin() + axis, shape.end());
  te::Tensor x = placeholder(w, shape, "X");
  te::Tensor gamma = placeholder(w, normalized, "gamma");
  te::Tensor beta = placeholder(w, normalized, "beta");
  return finish(w, {x, gamma, beta}, layer_norm(x, gamma, beta, axis, eps), 10.0 * num_elements(shape),
                [=](auto& ins, auto& outs) {
                  reference::layer_norm(in<float>(ins, 0), in<float>(ins, 1), in<float>(ins, 2), out<float>(outs, 0),
                                        shape, axis, eps);
                });
}

OpInstance instantiate_attention(const Workload& w) {
  int64_t B = w.get_int("B"), S = w.get_int("S"), T = w.get_int("T"), D = w.get_int("D"), E = w.get_int("E");
  int64_t mask_rows = w.get_int("mask_rows");
  double scale = w.get_float("scale");
  if (mask_rows > 0 && B % mask_rows != 0) {
    throw UserError(str("attention: mask_rows=", mask_rows, " must divide B=", B, " (each mask row serves B / mask_rows "
                        "batch entries); 0 for no mask"));
  }
  int64_t heads = w.get_int("heads");
  if (heads > 0 && B % heads != 0) {
    throw UserError(str("attention: heads=", heads, " must divide B=", B, " (B counts batch entries x heads); 0 for "
                        "inputs [B, S, D], [B, D, T], [B, T, E]"));
  }
  int64_t N = heads > 0 ? B / heads : 0;
  te::Tensor q = heads > 0 ? placeholder(w, {N, S, heads, D}, "Q") : placeholder(w, {B, S, D}, "Q");
  te::Tensor k = heads > 0 ? placeholder(w, {N, T, heads, D}, "K") : placeholder(w, {B, D, T}, "KT");
  te::Tensor v = heads > 0 ? placeholder(w, {N, T, heads, E}, "V") : placeholder(w, {B, T, E}, "V");
  std::vector<te::Tensor> inputs = {q, k, v};
  te::Tensor mask;
  if (mask_rows > 0) {
    mask = placeholder(w, {mask_rows, T}, "mask");
    inputs.push_back(mask);
  }
  double flops = 2.0 * B * S * T * (D + E) + 5.0 * B * S * T;
  int64_t per_mask_row = mask_rows > 0 ? B / mask_rows : 0;
  return finish(w, inputs, attention(q, k, v, mask, scale, heads), flops, [=](auto& ins, auto& outs) {
    reference::attention(in<float>(ins, 0), in<float>(ins, 1), in<float>(ins, 2),
                         mask_rows > 0 ? in<float>(ins, 3) : nullptr, out<float>(outs, 0), B, S, T, D, E, per_mask_row,
                         scale, heads);
  });
}

OpInstance instantiate_batch_norm(const Workload& w) {
  Shape shape = w.get_ints("shape");
  int axis = normalize_axis(w.get_int("axis"), static_cast<int>(shape.size()), "batch_norm");
  double eps = w.get_float("eps");
  te::Tensor x = placeholder(w, shape, "X");
  std::vector<te::Tensor> inputs = {x};
  for (const char* name : {"mean", "var", "gamma", "beta"}) inputs.push_back(placeholder(w, {shape[axis]}, name));
  te::Tensor y = batch_norm(x, inputs[1], inputs[2], inputs[3], inputs[4], axis, eps);
  std::vector<ValueRange> ranges = {{-1.0, 1.0}, {-1.0, 1.0}, {0.1, 1.0}, {-1.0, 1.0}, {-1.0, 1.0}};
  return finish(
      w, inputs, y, 4.0 * num_elements(shape),
      [=](auto& ins, auto& outs) {
        reference::batch_norm(in<float>(ins, 0), in<float>(ins, 1), in<float>(ins, 2), in<float>(ins, 3),
                              in<float>(ins, 4), out<float>(outs, 0), shape, axis, eps);
      },
      ranges);
}

// ---------------------------------------------------------------- data movement

OpInstance instantiate_transpose(const Workload& w) {
  Shape shape = w.get_ints("shape");
  std::vector<int64_t> perm = w.get_ints("perm");
  te::Tensor x = placeholder(w, shape, "X");
  return finish(w, {x}, transpose(x, perm), 0.0, [=, dtype = w.dtype()](auto& ins, auto& outs) {
    with_dtype(dtype, [&](auto t) {
      using T = decltype(t);
      reference::transpose(in<T>(ins, 0), out<T>(outs, 0), shape, perm);
    });
  });
}

OpInstance instantiate_reshape(const Workload& w) {
  Shape shape = w.get_ints("shape");
  te::Tensor x = placeholder(w, shape, "X");
  int64_t count = num_elements(shape);
  return finish(w, {x}, reshape(x, w.get_ints("newshape")), 0.0, [=, dtype = w.dtype()](auto& ins, auto& outs) {
    with_dtype(dtype, [&](auto t) {
      using T = decltype(t);
      reference::reshape(in<T>(ins, 0), out<T>(outs, 0), count);
    });
  });
}

OpInstance instantiate_pad(const Workload& w) {
  Shape shape = w.get_ints("shape");
  std::vector<int64_t> before = w.get_ints("before");
  std::vector<int64_t> after = w.get_ints("after");
  double value = w.get_float("value");
  if (w.dtype().is_integer() &&
      (value != std::trunc(value) || std::fabs(value) > std::numeric_limits<int32_t>::max())) {
    throw UserError(str("pad: value=", w.get("value"), " is not an int32 value; an int32 pad takes a whole number"));
  }
  te::Tensor x = placeholder(w, shape, "X");
  return finish(w, {x}, pad(x, before, after, value), 0.0, [=, dtype = w.dtype()](auto& ins, auto& outs) {
    with_dtype(dtype, [&](auto t) {
      using T = decltype(t);
      reference::pad(in<T>(ins, 0), out<T>(outs, 0), shape, before, after, value);
    });
  });
}

OpInstance instantiate_concat(const Workload& w) {
  Shape shape = w.get_ints("shape");
  std::vector<int64_t> sizes = w.get_ints("sizes");
  int axis = normalize_axis(w.get_int("axis"), static_cast<int>(shape.size()), "concat");
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (total != shape[axis]) {
    throw UserError(str("concat: sizes=", w.get("sizes"), " add up to ", total, " but the output's axis ", axis,
                        " has extent ", shape[axis], " (shape=", w.get("shape"), ")"));
  }
  std::vector<te::Tensor> inputs;
  std::vector<Shape> shapes;
  for (size_t t = 0; t < sizes.size(); ++t) {
    Shape s = shape;
    s[axis] = sizes[t];
    shapes.push_back(s);
    inputs.push_back(placeholder(w, s, "X" + std::to_string(t)));
  }
  return finish(w, inputs, concat(inputs, axis), 0.0, [=, dtype = w.dtype()](auto& ins, auto& outs) {
    with_dtype(dtype, [&](auto t) {
      using T = decltype(t);
      std::vector<const T*> pointers;
      for (size_t i = 0; i < ins.size(); ++i) pointers.push_back(in<T>(ins, i));
      reference::concat(pointers, shapes, axis, out<T>(outs, 0));
    });
  });
}

// ---------------------------------------------------------------- the table

ParamSpec required_key(const std::string& key, ParamKind kind) {
  return {key, kind, std::nullopt, {}};
}
ParamSpec defaulted_key(const std::string& key, ParamKind kind, const std::string& default_value) {
  return {key, kind, default_value, {}};
}
ParamSpec choice(const std::string& key, std::vector<std::string> choices) {
  std::string first = choices.front();
  return {key, ParamKind::Choice, first, std::move(choices)};
}
ParamSpec float_or_int() {
  return choice("dtype", {"float32", "int32"});
}
ParamSpec float_only() {
  return choice("dtype", {"float32"});
}
ParamSpec layout() {
  return choice("layout", {"NCHW", "NHWC"});
}

std::vector<ParamSpec> image_keys() {
  return {required_key("N", ParamKind::Positive), required_key("C", ParamKind::Positive),
          required_key("H", ParamKind::Positive), required_key("W", ParamKind::Positive)};
}

std::vector<ParamSpec> concat_keys(std::vector<ParamSpec> a, const std::vector<ParamSpec>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The keys of a conv in the blocked layout (conv2d_nchwc and group_conv2d_nchwc), then `extra`.
std::vector<ParamSpec> nchwc_conv_keys(const std::vector<ParamSpec>& extra) {
  using K = ParamKind;
  return concat_keys(
      concat_keys(image_keys(), {required_key("K", K::Positive), required_key("R", K::Positive),
                                 required_key("S", K::Positive), defaulted_key("stride", K::Pair, "1"),
                                 defaulted_key("pad", K::Pads, "0"), defaulted_key("dilation", K::Pair, "1"),
                                 required_key("in_block", K::Positive), required_key("out_block", K::Positive)}),
      concat_keys(extra, {float_only()}));
}

std::vector<OpSpec> build_table() {
  using K = ParamKind;
  const std::vector<ParamSpec> matmul_flags = {defaulted_key("transpose_a", K::Bool, "0"),
                                               defaulted_key("transpose_b", K::Bool, "0"), float_or_int()};
  const std::vector<ParamSpec> binary_keys = {required_key("A", K::Shape), required_key("B", K::Shape), float_or_int()};
  const std::vector<ParamSpec> unary_int_keys = {required_key("shape", K::Shape), float_or_int()};
  const std::vector<ParamSpec> unary_float_keys = {required_key("shape", K::Shape), float_only()};
  return {
      {"matmul", "C[M,N] = A[M,K] B[K,N]; transpose_a/transpose_b read A as [K,M], B as [N,K]",
       concat_keys({required_key("M", K::Positive), required_key("N", K::Positive), required_key("K", K::Positive)},
                   matmul_flags),
       instantiate_matmul},
      {"batch_matmul", "C[B,M,N] = A[B,M,K] B[B,K,N], with matmul's transpose flags",
       concat_keys({required_key("B", K::Positive), required_key("M", K::Positive), required_key("N", K::Positive),
                    required_key("K", K::Positive)},
                   matmul_flags),
       instantiate_batch_matmul},
      {"dense",
       "Y[M,N] = act(X[M,K] W[N,K]^T + bias[N]); bias=1 adds the bias, act=relu|relu6|sigmoid|tanh|gelu",
       {required_key("M", K::Positive), required_key("N", K::Positive), required_key("K", K::Positive),
        defaulted_key("bias", K::Bool, "0"), choice("act", {"none", "relu", "relu6", "sigmoid", "tanh", "gelu"}),
        float_only()},
       instantiate_dense},
      {"conv2d", "2-D convolution of an N,C,H,W image by K filters of C/groups x R x S (NCHW: KCRS weight, NHWC: RSCK)",
       concat_keys(image_keys(), {required_key("K", K::Positive), required_key("R", K::Positive),
                                  required_key("S", K::Positive), defaulted_key("stride", K::Pair, "1"),
                                  defaulted_key("pad", K::Pads, "0"), defaulted_key("dilation", K::Pair, "1"),
                                  defaulted_key("groups", K::Positive, "1"), layout(), float_or_int()}),
       instantiate_conv2d},
      {"fused_conv2d", "act(conv2d(input, weight) + bias[k] + residual), NCHW: a conv with its epilogue in one op",
       concat_keys(image_keys(), {required_key("K", K::Positive), required_key("R", K::Positive),
                                  required_key("S", K::Positive), defaulted_key("stride", K::Pair, "1"),
                                  defaulted_key("pad", K::Pads, "0"), defaulted_key("dilation", K::Pair, "1"),
                                  defaulted_key("residual", K::Bool, "0"),
                                  choice("act", {"none", "relu", "relu6", "sigmoid", "tanh", "gelu"}), float_only()}),
       instantiate_fused_conv2d},
      {"depthwise_conv2d", "2-D convolution of each channel by its own multiplier x R x S filters (groups = C)",
       concat_keys(image_keys(), {required_key("R", K::Positive), required_key("S", K::Positive),
                                  defaulted_key("multiplier", K::Positive, "1"), defaulted_key("stride", K::Pair, "1"),
                                  defaulted_key("pad", K::Pads, "0"), defaulted_key("dilation", K::Pair, "1"), layout(),
                                  float_or_int()}),
       instantiate_depthwise_conv2d},
      {"conv2d_nchwc",
       "conv2d in the blocked layout: input [N,C/in_block,H,W,in_block] (NCHW when in_block=1), weight "
       "[K/out_block,C/in_block,R,S,in_block,out_block], output [N,K/out_block,P,Q,out_block]",
       nchwc_conv_keys({}), instantiate_conv2d_nchwc},
      {"group_conv2d_nchwc",
       "grouped conv2d in the blocked layout, its groups lined up with the blocks (each group whole blocks, or each "
       "block whole groups of as many input as output channels): input [N,C/in_block,H,W,in_block], weight "
       "[K/out_block,C/in_block/block_groups,R,S,in_block,out_block]",
       nchwc_conv_keys({required_key("groups", K::Positive)}), instantiate_conv2d_nchwc},
      {"depthwise_conv2d_nchwc",
       "depthwise conv2d (multiplier 1) in the blocked layout: input [N,C/block,H,W,block], weight "
       "[C/block,R,S,block]",
       concat_keys(image_keys(), {required_key("R", K::Positive), required_key("S", K::Positive),
                                  defaulted_key("stride", K::Pair, "1"), defaulted_key("pad", K::Pads, "0"),
                                  defaulted_key("dilation", K::Pair, "1"), required_key("block", K::Positive),
                                  float_only()}),
       instantiate_depthwise_conv2d_nchwc},
      {"depthwise_pointwise_nchwc",
       "a depthwise conv2d, its bias and act (none|relu|relu6), then a 1x1 conv2d to K channels, in the blocked "
       "layout (MobileNet's pair as one op): input [N,C/block,H,W,block], dw_weight [C/block,R,S,block], dw_bias "
       "[C/block,block], pw_weight [K/block,C/block,1,1,block,block], output [N,K/block,P,Q,block]",
       concat_keys(image_keys(), {required_key("R", K::Positive), required_key("S", K::Positive),
                                  defaulted_key("stride", K::Pair, "1"), defaulted_key("pad", K::Pads, "0"),
                                  defaulted_key("dilation", K::Pair, "1"), required_key("K", K::Positive),
                                  required_key("block", K::Positive), choice("act", {"none", "relu", "relu6"}),
                                  float_only()}),
       instantiate_depthwise_pointwise_nchwc},
      {"conv2d_winograd_nchwc",
       "3x3 stride-1 conv2d by Winograd's F(tile x tile, 3x3) in the blocked layout: input [N,C/block,H,W,block], "
       "transformed weight [tile+2,tile+2,K/block,C/block,block,block], output [N,K/block,P,Q,block]",
       concat_keys(image_keys(), {required_key("K", K::Positive), defaulted_key("pad", K::Pads, "0"),
                                  required_key("block", K::Positive), choice("tile", {"4", "2"}), float_only()}),
       instantiate_conv2d_winograd_nchwc},
      {"max_pool2d", "maximum over kernel windows of the H,W plane; padding never wins",
       concat_keys(image_keys(), {required_key("kernel", K::Pair), defaulted_key("stride", K::Pair, "1"),
                                  defaulted_key("pad", K::Pads, "0"), layout(), float_or_int()}),
       instantiate_max_pool2d},
      {"avg_pool2d", "average over kernel windows; padding is not counted unless count_include_pad=1",
       concat_keys(image_keys(), {required_key("kernel", K::Pair), defaulted_key("stride", K::Pair, "1"),
                                  defaulted_key("pad", K::Pads, "0"), defaulted_key("count_include_pad", K::Bool, "0"),
                                  layout(), float_only()}),
       instantiate_avg_pool2d},
      {"global_avg_pool2d", "average over all of H,W, keeping them as extent 1",
       concat_keys(image_keys(), {layout(), float_only()}), instantiate_global_avg_pool2d},
      {"add", "A + B, numpy broadcasting", binary_keys, instantiate_binary<BinaryOp::Add>},
      {"sub", "A - B, numpy broadcasting", binary_keys, instantiate_binary<BinaryOp::Sub>},
      {"mul", "A * B, numpy broadcasting", binary_keys, instantiate_binary<BinaryOp::Mul>},
      {"div",
       "A / B, numpy broadcasting",
       {required_key("A", K::Shape), required_key("B", K::Shape), float_only()},
       instantiate_binary<BinaryOp::Div>},
      {"maximum", "max(A, B), numpy broadcasting", binary_keys, instantiate_binary<BinaryOp::Maximum>},
      {"minimum", "min(A, B), numpy broadcasting", binary_keys, instantiate_binary<BinaryOp::Minimum>},
      {"relu", "max(X, 0)", unary_int_keys, instantiate_unary<UnaryOp::Relu>},
      {"relu6", "min(max(X, 0), 6)", unary_int_keys, instantiate_unary<UnaryOp::Relu6>},
      {"sigmoid", "1 / (1 + exp(-X))", unary_float_keys, instantiate_unary<UnaryOp::Sigmoid>},
      {"tanh", "tanh(X)", unary_float_keys, instantiate_unary<UnaryOp::Tanh>},
      {"gelu", "0.5 X (1 + erf(X / sqrt(2)))", unary_float_keys, instantiate_unary<UnaryOp::Gelu>},
      {"exp", "exp(X)", unary_float_keys, instantiate_unary<UnaryOp::Exp>},
      {"sqrt", "sqrt(X)", unary_float_keys, instantiate_unary<UnaryOp::Sqrt>},
      {"scale_bias",
       "X * scale[c] + bias[c] with c the index along axis",
       {required_key("shape", K::Shape), defaulted_key("axis", K::NonNegative, "1"), float_only()},
       instantiate_scale_bias},
      {"softmax",
       "exp(X - max) / sum(exp(X - max)) along axis",
       {required_key("shape", K::Shape), required_key("axis", K::NonNegative), float_only()},
       instantiate_softmax},
      {"layer_norm",
       "normalise over the dimensions from axis on, then * gamma + beta",
       {required_key("shape", K::Shape), required_key("axis", K::NonNegative), defaulted_key("eps", K::Float, "1e-5"),
        float_only()},
       instantiate_layer_norm},
      {"attention",
       "out[B,S,E] = softmax_j(scale * Q[B,S,D] KT[B,D,T] + mask[b / (B / mask_rows), T]) V[B,T,E]: one head per b, "
       "the softmax fused between the products; mask_rows=0: no mask; heads=H: Q, K, V, out as [B/H,S,H,D], "
       "[B/H,T,H,D] (K not transposed), [B/H,T,H,E], [B/H,S,H,E]",
       {required_key("B", K::Positive), required_key("S", K::Positive), required_key("T", K::Positive),
        required_key("D", K::Positive), required_key("E", K::Positive), defaulted_key("scale", K::Float, "1"),
        defaulted_key("mask_rows", K::NonNegative, "0"), defaulted_key("heads", K::NonNegative, "0"), float_only()},
       instantiate_attention},
      {"batch_norm",
       "inference batch norm: (X - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c]",
       {required_key("shape", K::Shape), defaulted_key("axis", K::NonNegative, "1"),
        defaulted_key("eps", K::Float, "1e-5"), float_only()},
       instantiate_batch_norm},
      {"transpose",
       "permute the dimensions: output dimension d is input dimension perm[d]",
       {required_key("shape", K::Shape), required_key("perm", K::Indices), float_or_int()},
       instantiate_transpose},
      {"reshape",
       "the same elements, row-major, under newshape",
       {required_key("shape", K::Shape), required_key("newshape", K::Shape), float_or_int()},
       instantiate_reshape},
      {"pad",
       "pad each dimension with before[d] and after[d] elements of value",
       {required_key("shape", K::Shape), required_key("before", K::Indices), required_key("after", K::Indices),
        defaulted_key("value", K::Float, "0"), float_or_int()},
       instantiate_pad},
      {"concat",
       "join inputs along axis; shape is the output's, sizes the inputs' extents along axis",
       {required_key("shape", K::Shape), required_key("axis", K::NonNegative), required_key("sizes", K::Shape),
        float_or_int()},
       instantiate_concat},
  };
}

}  // namespace

const std::vector<OpSpec>& op_specs() {
  static const std::vector<OpSpec> table = build_table();
  return table;
}

std::optional<UnaryOp> dense_activation(const Workload& w) {
  const std::string& act = w.get("act");
  for (UnaryOp op : {UnaryOp::Relu, UnaryOp::Relu6, UnaryOp::Sigmoid, UnaryOp::Tanh, UnaryOp::Gelu}) {
    if (act == unary_op_name(op)) return op;
  }
  return std::nullopt;
}

}  // namespace temper::ops
