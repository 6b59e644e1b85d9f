#include "compiler/ops/nchwc.h"

#include <cstring>

#include "compiler/ops/shape.h"
#include "compiler/ops/workload.h"

namespace temper::ops {

namespace {

std::array<int64_t, 2> output_extents(int64_t H, int64_t W, int64_t R, int64_t S, const Window2d& window,
                                      const std::string& op) {
  const Padding2d& pad = window.padding;
  int64_t P = window_output_extent(H, pad.top, pad.bottom, R, window.stride[0], window.dilation[0]);
  int64_t Q = window_output_extent(W, pad.left, pad.right, S, window.stride[1], window.dilation[1]);
  if (P <= 0 || Q <= 0) {
    throw UserError(str(op, ": the ", R, "x", S, " kernel (with dilation) is larger than the padded input ",
                        H + pad.top + pad.bottom, "x", W + pad.left + pad.right));
  }
  return {P, Q};
}

void check_float32(const NDArray& a, const std::string& what) {
  if (a.dtype() != DataType::float32()) {
    throw UserError(str(what, " is ", a.dtype(), "; the blocked layout takes float32"));
  }
}

}  // namespace

int64_t nchwc_block_groups(int64_t C, int64_t K, int64_t groups, int64_t cb, int64_t kb) {
  if (groups == 1) return 1;
  if (groups < 1 || C % groups != 0 || K % groups != 0) return 0;
  int64_t Cg = C / groups, Kg = K / groups;
  if (Cg % cb == 0 && Kg % kb == 0) return groups;
  if (cb == kb && Cg == Kg && kb % Kg == 0) return channel_blocks(K, kb);
  return 0;
}

int64_t nchwc_conv_groups(const Workload& w) {
  return w.op == "group_conv2d_nchwc" ? w.get_int("groups") : 1;
}

te::Tensor conv2d_nchwc(const te::Tensor& input, const te::Tensor& weight, const Window2d& window,
                        const std::string& name, int64_t block_groups, int64_t channels) {
  const std::string op = "conv2d_nchwc";
  bool plain_input = input.ndim() == 4;
  if (!plain_input) check_rank(input, 5, op, "the input ([N, C/cb, H, W, cb], or NCHW when cb = 1)");
  check_rank(weight, 6, op, "the weight ([K/kb, C/cb, R, S, cb, kb])");
  check_same_dtype(input, weight, op);
  check_window(window, op);
  Shape x = static_shape(input, op);
  Shape w = static_shape(weight, op);
  int64_t in_blocks = x[1];  // C itself when cb = 1
  int64_t cb = plain_input ? 1 : x[4];
  TEMPER_CHECK(block_groups >= 1, op, ": block_groups ", block_groups);
  if (w[1] * block_groups != in_blocks || w[0] % block_groups != 0 || w[4] != cb) {
    throw UserError(str(op, ": the weight ", shape_str(w), " does not read the input ", shape_str(x),
                        " (its C/cb x cb ", "must be ", in_blocks / block_groups, " x ", cb,
                        block_groups > 1 ? " per block group" : "", ")"));
  }
  int64_t kb = w[5];
  int64_t out_blocks_per_group = w[0] / block_groups;
  std::array<int64_t, 2> pq = output_extents(x[2], x[3], w[2], w[3], window, op);
  te::Tensor padded = pad_spatial(input, Layout::NCHW, window.padding, 0.0, name + "_pad");
  IterVar rco = te::reduce_axis({0, index_const(w[1])}, "rco");
  IterVar ry = te::reduce_axis({0, index_const(w[2])}, "ry");
  IterVar rx = te::reduce_axis({0, index_const(w[3])}, "rx");
  IterVar rci = te::reduce_axis({0, index_const(cb)}, "rci");
  auto row = [&](const Expr& p) { return times(p, window.stride[0]) + times(ry, window.dilation[0]); };
  auto col = [&](const Expr& q) { return times(q, window.stride[1]) + times(rx, window.dilation[1]); };
  // The input block: rco of the output block's group.
  auto in_block = [&](const Var& ko) -> Expr {
    if (block_groups == 1) return rco;
    Expr group = out_blocks_per_group == 1 ? Expr(ko) : floordiv(ko, index_const(out_blocks_per_group));
    return times(group, w[1]) + rco;
  };
  std::vector<IterVar> axes = {rco, ry, rx};
  if (!plain_input) axes.push_back(rci);
  if (channels != 0 && (channels > in_blocks * cb || channels <= (in_blocks - 1) * cb)) {
    throw UserError(str(op, ": ", channels, " channels do not fill the input ", shape_str(x),
                        "'s last block (between ", (in_blocks - 1) * cb + 1, " and ", in_blocks * cb, ")"));
  }
  // The lanes past C in the last input block are not reduced over: with C = 24 in blocks
  // of 16 a third of the multiply-adds would meet the packed weight's zeros. A guard per
  // tap, which guard_padded_taps and partition_loops turn into a shorter last block.
  bool tail = !plain_input && block_groups == 1 && channels != 0 && channels % cb != 0;
  return te::compute(
      shape_exprs({x[0], w[0], pq[0], pq[1], kb}, op),
      [&](Var n, Var ko, Var p, Var q, Var ki) {
        Expr c = in_block(ko);
        Expr in = plain_input ? padded(n, c, row(p), col(q)) : padded(n, c, row(p), col(q), rci);
        if (tail) in = select(times(rco, cb) + rci < index_const(channels), in, make_const(in.dtype(), 0.0));
        Expr ci = plain_input ? index_const(0) : Expr(rci);
        return te::sum(in * weight(ko, rco, ry, rx, ci, ki), axes);
      },
      name);
}

te::Tensor depthwise_conv2d_nchwc(const te::Tensor& input, const te::Tensor& weight, const Window2d& window,
                                  const std::string& name) {
  const std::string op = "depthwise_conv2d_nchwc";
  check_rank(input, 5, op, "the input ([N, C/b, H, W, b])");
  check_rank(weight, 4, op, "the weight ([C/b, R, S, b])");
  check_same_dtype(input, weight, op);
  check_window(window, op);
  Shape x = static_shape(input, op);
  Shape w = static_shape(weight, op);
  if (w[0] != x[1] || w[3] != x[4]) {
    throw UserError(str(op, ": the weight ", shape_str(w), " does not fit the input ", shape_str(x),
                        " (one R x S filter per channel: [", x[1], ", R, S, ", x[4], "])"));
  }
  std::array<int64_t, 2> pq = output_extents(x[2], x[3], w[1], w[2], window, op);
  te::Tensor padded = pad_spatial(input, Layout::NCHW, window.padding, 0.0, name + "_pad");
  IterVar ry = te::reduce_axis({0, index_const(w[1])}, "ry");
  IterVar rx = te::reduce_axis({0, index_const(w[2])}, "rx");
  return te::compute(
      shape_exprs({x[0], x[1], pq[0], pq[1], x[4]}, op),
      [&](Var n, Var c, Var p, Var q, Var ci) {
        Expr row = times(p, window.stride[0]) + times(ry, window.dilation[0]);
        Expr col = times(q, window.stride[1]) + times(rx, window.dilation[1]);
        return te::sum(padded(n, c, row, col, ci) * weight(c, ry, rx, ci), {ry, rx});
      },
      name);
}

te::Tensor depthwise_pointwise_nchwc(const te::Tensor& input, const te::Tensor& dw_weight, const te::Tensor& dw_bias,
                                     const te::Tensor& pw_weight, const Window2d& window,
                                     std::optional<UnaryOp> activation, int64_t channels, const std::string& name) {
  const std::string op = "depthwise_pointwise_nchwc";
  check_rank(dw_bias, 2, op, "the depthwise bias ([C/b, b])");
  te::Tensor dw = depthwise_conv2d_nchwc(input, dw_weight, window, name + "_dw");
  Shape d = static_shape(dw, op);
  Shape b = static_shape(dw_bias, op);
  if (b[0] != d[1] || b[1] != d[4]) {
    throw UserError(str(op, ": the depthwise bias ", shape_str(b), " does not fit its ", d[1], " blocks of ", d[4]));
  }
  Shape pw = static_shape(pw_weight, op);
  if (pw.size() != 6 || pw[2] != 1 || pw[3] != 1 || pw[4] != d[4]) {
    throw UserError(str(op, ": the pointwise weight ", shape_str(pw), " is not a 1x1 weight over blocks of ", d[4],
                        " ([K/kb, ", d[1], ", 1, 1, ", d[4], ", kb])"));
  }
  te::Tensor act = te::compute(
      shape_exprs(d, op),
      [&](Var n, Var c, Var p, Var q, Var ci) {
        Expr v = dw(n, c, p, q, ci) + dw_bias(c, ci);
        return activation ? unary_expr(*activation, v) : v;
      },
      name + "_dw_act");
  return conv2d_nchwc(act, pw_weight, Window2d{}, name, 1, channels);
}

void block_channels(const float* plain, float* blocked, int64_t N, int64_t C, int64_t plane, int64_t block) {
  int64_t blocks = channel_blocks(C, block);
  std::memset(blocked, 0, sizeof(float) * N * blocks * plane * block);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      const float* src = plain + (n * C + c) * plane;
      float* dst = blocked + ((n * blocks + c / block) * plane) * block + c % block;
      for (int64_t i = 0; i < plane; ++i) dst[i * block] = src[i];
    }
  }
}

void unblock_channels(const float* blocked, float* plain, int64_t N, int64_t C, int64_t plane, int64_t block) {
  int64_t blocks = channel_blocks(C, block);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      const float* src = blocked + ((n * blocks + c / block) * plane) * block + c % block;
      float* dst = plain + (n * C + c) * plane;
      for (int64_t i = 0; i < plane; ++i) dst[i] = src[i * block];
    }
  }
}

NDArray block_channels(const NDArray& plain, int64_t block) {
  check_float32(plain, "the array to block");
  const Shape& s = plain.shape();
  if (s.size() < 2) throw UserError(str("an array of shape ", shape_str(s), " has no channel dimension to block"));
  int64_t plane = 1;
  for (size_t d = 2; d < s.size(); ++d) plane *= s[d];
  Shape blocked_shape = {s[0], channel_blocks(s[1], block)};
  blocked_shape.insert(blocked_shape.end(), s.begin() + 2, s.end());
  blocked_shape.push_back(block);
  NDArray out = NDArray::empty(blocked_shape, DataType::float32());
  block_channels(plain.data_as<float>(), out.data_as<float>(), s[0], s[1], plane, block);
  return out;
}

NDArray unblock_channels(const NDArray& blocked, int64_t channels) {
  check_float32(blocked, "the blocked array");
  const Shape& s = blocked.shape();
  int64_t block = s.back();
  if (s.size() < 3 || channel_blocks(channels, block) != s[1]) {
    throw UserError(str("the blocked array ", shape_str(s), " does not hold ", channels, " channels"));
  }
  int64_t plane = 1;
  for (size_t d = 2; d + 1 < s.size(); ++d) plane *= s[d];
  Shape plain_shape = {s[0], channels};
  plain_shape.insert(plain_shape.end(), s.begin() + 2, s.end() - 1);
  NDArray out = NDArray::empty(plain_shape, DataType::float32());
  unblock_channels(blocked.data_as<float>(), out.data_as<float>(), s[0], channels, plane, block);
  return out;
}

NDArray pack_conv_weight_nchwc(const NDArray& weight, int64_t in_block, int64_t out_block, int64_t groups) {
  check_float32(weight, "the conv weight");
  const Shape& s = weight.shape();
  if (s.size() != 4) throw UserError(str("the conv weight ", shape_str(s), " is not [K, C/groups, R, S]"));
  int64_t K = s[0], Cg = s[1], R = s[2], S = s[3], C = Cg * groups;
  int64_t Gb = nchwc_block_groups(C, K, groups, in_block, out_block);
  if (Gb == 0) {
    throw UserError(str("the conv weight ", shape_str(s), " of ", groups, " groups does not line up with blocks of ",
                        in_block, " input and ", out_block, " output channels (see nchwc_block_groups)"));
  }
  int64_t Ko = channel_blocks(K, out_block), Ci = channel_blocks(C, in_block) / Gb;
  int64_t Kg = K / groups, out_blocks_per_group = Ko / Gb;
  NDArray out = NDArray::zeros({Ko, Ci, R, S, in_block, out_block}, DataType::float32());
  const float* src = weight.data_as<float>();
  float* dst = out.data_as<float>();
  for (int64_t k = 0; k < K; ++k) {
    int64_t ko = k / out_block;
    int64_t first = ko / out_blocks_per_group * Ci * in_block;  // the block group's first input channel
    for (int64_t j = 0; j < Cg; ++j) {
      int64_t c = k / Kg * Cg + j - first;  // within the block group's input blocks
      TEMPER_CHECK(c >= 0 && c < Ci * in_block, "pack_conv_weight_nchwc: channel ", c, " outside its block group");
      for (int64_t r = 0; r < R; ++r) {
        for (int64_t t = 0; t < S; ++t) {
          int64_t at =
              ((((ko * Ci + c / in_block) * R + r) * S + t) * in_block + c % in_block) * out_block + k % out_block;
          dst[at] = src[((k * Cg + j) * R + r) * S + t];
        }
      }
    }
  }
  return out;
}

NDArray pack_depthwise_weight_nchwc(const NDArray& weight, int64_t block) {
  check_float32(weight, "the depthwise weight");
  const Shape& s = weight.shape();
  if (s.size() != 4 || s[1] != 1) throw UserError(str("the depthwise weight ", shape_str(s), " is not [C, 1, R, S]"));
  int64_t C = s[0], R = s[2], S = s[3];
  NDArray out = NDArray::zeros({channel_blocks(C, block), R, S, block}, DataType::float32());
  const float* src = weight.data_as<float>();
  float* dst = out.data_as<float>();
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t i = 0; i < R * S; ++i) dst[((c / block) * R * S + i) * block + c % block] = src[c * R * S + i];
  }
  return out;
}

NDArray block_vector(const NDArray& vector, int64_t block) {
  check_float32(vector, "the per-channel vector");
  if (vector.ndim() != 1) throw UserError(str("the per-channel vector ", shape_str(vector.shape()), " is not 1-D"));
  int64_t C = vector.shape()[0];
  NDArray out = NDArray::zeros({channel_blocks(C, block), block}, DataType::float32());
  std::memcpy(out.data(), vector.data(), sizeof(float) * C);
  return out;
}

}  // namespace temper::ops
