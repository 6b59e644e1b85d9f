#include "compiler/ops/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "compiler/ops/winograd.h"

namespace temper::ops::reference {

namespace {

// Sums run in double for floats and int64 for integers.
template <typename T>
using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

// The coordinates of element `flat` of a row-major array of `shape`.
Shape unravel(int64_t flat, const Shape& shape) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

int64_t ravel(const Shape& index, const Shape& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

// A 4-D image addressed as (n, c, h, w) whatever its layout.
struct Image {
  int64_t N, C, H, W;
  Layout layout;

  Image(const Shape& shape, Layout l) : layout(l) {
    N = shape[0];
    C = l == Layout::NCHW ? shape[1] : shape[3];
    H = l == Layout::NCHW ? shape[2] : shape[1];
    W = l == Layout::NCHW ? shape[3] : shape[2];
  }
  int64_t offset(int64_t n, int64_t c, int64_t h, int64_t w) const {
    return layout == Layout::NCHW ? ((n * C + c) * H + h) * W + w : ((n * H + h) * W + w) * C + c;
  }
};

// The element (row, col) of a rows x cols matrix stored transposed or not.
int64_t matrix_offset(int64_t row, int64_t col, int64_t rows, int64_t cols, bool transposed) {
  return transposed ? col * rows + row : row * cols + col;
}

// Sizes of the dimensions before, at and after `axis`: the array is [outer, extent, inner].
struct AxisSplit {
  int64_t outer = 1, extent = 1, inner = 1;
};

AxisSplit split_at(const Shape& shape, int axis) {
  AxisSplit s;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (d < axis) s.outer *= shape[d];
    if (d == axis) s.extent = shape[d];
    if (d > axis) s.inner *= shape[d];
  }
  return s;
}

}  // namespace

// Rows of C are independent, so they are computed in parallel; each row accumulates in
// order of k, walking B's rows contiguously (a 1024^3 product takes a fraction of a
// second rather than the seconds of the j-outer order, which the measurer waits for).
template <typename T>
void matmul(const T* a, const T* b, T* c, int64_t M, int64_t N, int64_t K, bool transpose_a, bool transpose_b) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < M; ++i) {
    std::vector<Acc<T>> acc(N, Acc<T>(0));
    for (int64_t k = 0; k < K; ++k) {
      Acc<T> aik = Acc<T>(a[matrix_offset(i, k, M, K, transpose_a)]);
      for (int64_t j = 0; j < N; ++j) acc[j] += aik * Acc<T>(b[matrix_offset(k, j, K, N, transpose_b)]);
    }
    for (int64_t j = 0; j < N; ++j) c[i * N + j] = static_cast<T>(acc[j]);
  }
}

template <typename T>
void batch_matmul(const T* a, const T* b, T* c, int64_t batch, int64_t M, int64_t N, int64_t K, bool transpose_a,
                  bool transpose_b) {
  for (int64_t n = 0; n < batch; ++n) {
    matmul(a + n * M * K, b + n * K * N, c + n * M * N, M, N, K, transpose_a, transpose_b);
  }
}

template <typename T>
void dense(const T* x, const T* weight, const T* bias, T* y, int64_t M, int64_t N, int64_t K,
           std::optional<UnaryOp> activation) {
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      Acc<T> acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += Acc<T>(x[i * K + k]) * Acc<T>(weight[j * K + k]);
      T value = static_cast<T>(acc);
      if (bias) value += bias[j];
      y[i * N + j] = activation ? unary(*activation, value) : value;
    }
  }
}

template <typename T>
void conv2d(const T* input, const T* weight, T* output, const Shape& input_shape, const Shape& weight_shape,
            const Window2d& window, int64_t groups, Layout layout) {
  Image in(input_shape, layout);
  // The weight as (k, c, r, s): KCRS for NCHW, RSCK for NHWC.
  bool nchw = layout == Layout::NCHW;
  int64_t K = nchw ? weight_shape[0] : weight_shape[3];
  int64_t C_per_group = nchw ? weight_shape[1] : weight_shape[2];
  int64_t R = nchw ? weight_shape[2] : weight_shape[0];
  int64_t S = nchw ? weight_shape[3] : weight_shape[1];
  auto weight_at = [&](int64_t k, int64_t c, int64_t r, int64_t s) {
    return nchw ? weight[((k * C_per_group + c) * R + r) * S + s] : weight[((r * S + s) * C_per_group + c) * K + k];
  };
  const Padding2d& pad = window.padding;
  int64_t P = window_output_extent(in.H, pad.top, pad.bottom, R, window.stride[0], window.dilation[0]);
  int64_t Q = window_output_extent(in.W, pad.left, pad.right, S, window.stride[1], window.dilation[1]);
  Image out(nchw ? Shape{in.N, K, P, Q} : Shape{in.N, P, Q, K}, layout);
  int64_t K_per_group = K / groups;
  for (int64_t n = 0; n < in.N; ++n) {
    for (int64_t k = 0; k < K; ++k) {
      int64_t group = k / K_per_group;
      for (int64_t p = 0; p < P; ++p) {
        for (int64_t q = 0; q < Q; ++q) {
          Acc<T> acc = 0;
          for (int64_t c = 0; c < C_per_group; ++c) {
            for (int64_t r = 0; r < R; ++r) {
              for (int64_t s = 0; s < S; ++s) {
                int64_t h = p * window.stride[0] + r * window.dilation[0] - pad.top;
                int64_t w = q * window.stride[1] + s * window.dilation[1] - pad.left;
                if (h < 0 || h >= in.H || w < 0 || w >= in.W) continue;
                acc += Acc<T>(input[in.offset(n, group * C_per_group + c, h, w)]) * Acc<T>(weight_at(k, c, r, s));
              }
            }
          }
          output[out.offset(n, k, p, q)] = static_cast<T>(acc);
        }
      }
    }
  }
}

template <typename T>
void depthwise_conv2d(const T* input, const T* weight, T* output, const Shape& input_shape, const Shape& weight_shape,
                      const Window2d& window, Layout layout) {
  // Depthwise convolution is grouped convolution with one input channel per group.
  conv2d(input, weight, output, input_shape, weight_shape, window, Image(input_shape, layout).C, layout);
}

namespace {

// The input pixel a window position reads, or false in the padding.
bool window_pixel(const Window2d& window, int64_t H, int64_t W, int64_t p, int64_t q, int64_t r, int64_t s, int64_t& h,
                  int64_t& w) {
  h = p * window.stride[0] + r * window.dilation[0] - window.padding.top;
  w = q * window.stride[1] + s * window.dilation[1] - window.padding.left;
  return h >= 0 && h < H && w >= 0 && w < W;
}

}  // namespace

void conv2d_nchwc(const float* input, const float* weight, float* output, const Shape& input_shape,
                  const Shape& weight_shape, const Window2d& window, int64_t block_groups, int64_t channels) {
  int64_t N = input_shape[0], Ci = input_shape[1], H = input_shape[2], W = input_shape[3];
  int64_t Ko = weight_shape[0], Cw = weight_shape[1], R = weight_shape[2], S = weight_shape[3];
  int64_t cb = weight_shape[4], kb = weight_shape[5], out_blocks_per_group = Ko / block_groups;
  const Padding2d& pad = window.padding;
  int64_t P = window_output_extent(H, pad.top, pad.bottom, R, window.stride[0], window.dilation[0]);
  int64_t Q = window_output_extent(W, pad.left, pad.right, S, window.stride[1], window.dilation[1]);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ko = 0; ko < Ko; ++ko)
      for (int64_t p = 0; p < P; ++p)
        for (int64_t q = 0; q < Q; ++q)
          for (int64_t ki = 0; ki < kb; ++ki) {
            double acc = 0;
            for (int64_t co = 0; co < Cw; ++co)
              for (int64_t r = 0; r < R; ++r)
                for (int64_t s = 0; s < S; ++s) {
                  int64_t h, w;
                  if (!window_pixel(window, H, W, p, q, r, s, h, w)) continue;
                  int64_t c = ko / out_blocks_per_group * Cw + co;  // the input block
                  int64_t lanes = channels > 0 && block_groups == 1 ? std::min(cb, channels - c * cb) : cb;
                  for (int64_t ci = 0; ci < lanes; ++ci) {
                    acc += double(input[(((n * Ci + c) * H + h) * W + w) * cb + ci]) *
                           weight[((((ko * Cw + co) * R + r) * S + s) * cb + ci) * kb + ki];
                  }
                }
            output[(((n * Ko + ko) * P + p) * Q + q) * kb + ki] = static_cast<float>(acc);
          }
}

void depthwise_conv2d_nchwc(const float* input, const float* weight, float* output, const Shape& input_shape,
                            const Shape& weight_shape, const Window2d& window) {
  // One filter per lane: each output lane reads its own input lane.
  int64_t N = input_shape[0], Cb = input_shape[1], H = input_shape[2], W = input_shape[3], b = input_shape[4];
  int64_t R = weight_shape[1], S = weight_shape[2];
  const Padding2d& pad = window.padding;
  int64_t P = window_output_extent(H, pad.top, pad.bottom, R, window.stride[0], window.dilation[0]);
  int64_t Q = window_output_extent(W, pad.left, pad.right, S, window.stride[1], window.dilation[1]);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < Cb; ++c)
      for (int64_t p = 0; p < P; ++p)
        for (int64_t q = 0; q < Q; ++q)
          for (int64_t lane = 0; lane < b; ++lane) {
            double acc = 0;
            for (int64_t r = 0; r < R; ++r)
              for (int64_t s = 0; s < S; ++s) {
                int64_t h, w;
                if (!window_pixel(window, H, W, p, q, r, s, h, w)) continue;
                acc += double(input[(((n * Cb + c) * H + h) * W + w) * b + lane]) *
                       weight[((c * R + r) * S + s) * b + lane];
              }
            output[(((n * Cb + c) * P + p) * Q + q) * b + lane] = static_cast<float>(acc);
          }
}

void conv2d_winograd_nchwc(const float* input, const float* weight, float* output, const Shape& input_shape,
                           const Shape& weight_shape, const Padding2d& padding, int64_t m) {
  const WinogradMatrices& mat = winograd_matrices(m);
  int64_t a = mat.alpha;
  int64_t N = input_shape[0], Cb = input_shape[1], H = input_shape[2], W = input_shape[3], cb = input_shape[4];
  int64_t Kb = weight_shape[2], kb = weight_shape[5], C = Cb * cb, K = Kb * kb;
  int64_t P = H + padding.top + padding.bottom - 2, Q = W + padding.left + padding.right - 2;
  auto pixel = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    if (h < 0 || h >= H || w < 0 || w >= W) return 0.0;
    return double(input[(((n * Cb + c / cb) * H + h) * W + w) * cb + c % cb]);
  };
  std::vector<double> v(a * a * C), acc(a * a), tmp(a * a);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ty = 0; ty < winograd_tiles(P, m); ++ty)
      for (int64_t tx = 0; tx < winograd_tiles(Q, m); ++tx) {
        // V = Bt d B per input channel.
        for (int64_t c = 0; c < C; ++c) {
          for (int64_t e = 0; e < a; ++e)
            for (int64_t j = 0; j < a; ++j) {
              double s = 0;
              for (int64_t i = 0; i < a; ++i) {
                s += mat.Bt[e * a + i] * pixel(n, c, ty * m + i - padding.top, tx * m + j - padding.left);
              }
              tmp[e * a + j] = s;
            }
          for (int64_t e = 0; e < a; ++e)
            for (int64_t f = 0; f < a; ++f) {
              double s = 0;
              for (int64_t j = 0; j < a; ++j) s += tmp[e * a + j] * mat.Bt[f * a + j];
              v[(e * a + f) * C + c] = s;
            }
        }
        for (int64_t k = 0; k < K; ++k) {
          // M = sum over c of U (.) V, then Y = At M A.
          for (int64_t ef = 0; ef < a * a; ++ef) {
            double s = 0;
            for (int64_t c = 0; c < C; ++c) {
              s += double(weight[(((ef * Kb + k / kb) * Cb + c / cb) * cb + c % cb) * kb + k % kb]) * v[ef * C + c];
            }
            acc[ef] = s;
          }
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < m; ++j) {
              int64_t p = ty * m + i, q = tx * m + j;
              if (p >= P || q >= Q) continue;
              double s = 0;
              for (int64_t e = 0; e < a; ++e)
                for (int64_t f = 0; f < a; ++f) s += mat.At[i * a + e] * acc[e * a + f] * mat.At[j * a + f];
              output[(((n * Kb + k / kb) * P + p) * Q + q) * kb + k % kb] = static_cast<float>(s);
            }
        }
      }
}

namespace {

// The output of pooling `in` with a kernel of this size over this window (no dilation).
Image pooled_image(const Image& in, std::array<int64_t, 2> kernel, const Window2d& window) {
  const Padding2d& pad = window.padding;
  int64_t P = window_output_extent(in.H, pad.top, pad.bottom, kernel[0], window.stride[0], 1);
  int64_t Q = window_output_extent(in.W, pad.left, pad.right, kernel[1], window.stride[1], 1);
  return Image(in.layout == Layout::NCHW ? Shape{in.N, in.C, P, Q} : Shape{in.N, P, Q, in.C}, in.layout);
}

}  // namespace

template <typename T>
void max_pool2d(const T* x, T* y, const Shape& shape, std::array<int64_t, 2> kernel, const Window2d& window,
                Layout layout) {
  Image in(shape, layout);
  const Padding2d& pad = window.padding;
  Image out = pooled_image(in, kernel, window);
  for (int64_t n = 0; n < in.N; ++n) {
    for (int64_t c = 0; c < in.C; ++c) {
      for (int64_t p = 0; p < out.H; ++p) {
        for (int64_t q = 0; q < out.W; ++q) {
          T best = std::numeric_limits<T>::lowest();
          for (int64_t r = 0; r < kernel[0]; ++r) {
            for (int64_t s = 0; s < kernel[1]; ++s) {
              int64_t h = p * window.stride[0] + r - pad.top;
              int64_t w = q * window.stride[1] + s - pad.left;
              if (h >= 0 && h < in.H && w >= 0 && w < in.W) best = std::max(best, x[in.offset(n, c, h, w)]);
            }
          }
          y[out.offset(n, c, p, q)] = best;
        }
      }
    }
  }
}

template <typename T>
void avg_pool2d(const T* x, T* y, const Shape& shape, std::array<int64_t, 2> kernel, const Window2d& window,
                Layout layout, bool count_include_pad) {
  Image in(shape, layout);
  const Padding2d& pad = window.padding;
  Image out = pooled_image(in, kernel, window);
  for (int64_t n = 0; n < in.N; ++n) {
    for (int64_t c = 0; c < in.C; ++c) {
      for (int64_t p = 0; p < out.H; ++p) {
        for (int64_t q = 0; q < out.W; ++q) {
          double sum = 0;
          int64_t count = 0;
          for (int64_t r = 0; r < kernel[0]; ++r) {
            for (int64_t s = 0; s < kernel[1]; ++s) {
              int64_t h = p * window.stride[0] + r - pad.top;
              int64_t w = q * window.stride[1] + s - pad.left;
              if (h >= 0 && h < in.H && w >= 0 && w < in.W) {
                sum += x[in.offset(n, c, h, w)];
                ++count;
              }
            }
          }
          if (count_include_pad) count = kernel[0] * kernel[1];
          y[out.offset(n, c, p, q)] = static_cast<T>(sum / static_cast<double>(count));
        }
      }
    }
  }
}

template <typename T>
void global_avg_pool2d(const T* x, T* y, const Shape& shape, Layout layout) {
  Image in(shape, layout);
  for (int64_t n = 0; n < in.N; ++n) {
    for (int64_t c = 0; c < in.C; ++c) {
      double sum = 0;
      for (int64_t h = 0; h < in.H; ++h) {
        for (int64_t w = 0; w < in.W; ++w) sum += x[in.offset(n, c, h, w)];
      }
      // The output keeps H and W as extent 1, so (n, c) lands at n * C + c in both layouts.
      y[n * in.C + c] = static_cast<T>(sum / static_cast<double>(in.H * in.W));
    }
  }
}

template <typename T>
void binary(BinaryOp op, const T* a, const Shape& a_shape, const T* b, const Shape& b_shape, T* out) {
  Shape out_shape = broadcast_shapes(a_shape, b_shape, binary_op_name(op));
  // The flat offset in `shape` of output coordinates `index`, reading stretched dimensions at 0.
  auto broadcast_offset = [&](const Shape& index, const Shape& shape) {
    size_t lead = out_shape.size() - shape.size();
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + (shape[d] == 1 ? 0 : index[d + lead]);
    return flat;
  };
  for (int64_t e = 0; e < num_elements(out_shape); ++e) {
    Shape index = unravel(e, out_shape);
    T x = a[broadcast_offset(index, a_shape)];
    T y = b[broadcast_offset(index, b_shape)];
    switch (op) {
      case BinaryOp::Add:
        out[e] = x + y;
        break;
      case BinaryOp::Sub:
        out[e] = x - y;
        break;
      case BinaryOp::Mul:
        out[e] = x * y;
        break;
      case BinaryOp::Div:
        out[e] = x / y;
        break;
      case BinaryOp::Maximum:
        out[e] = std::max(x, y);
        break;
      case BinaryOp::Minimum:
        out[e] = std::min(x, y);
        break;
    }
  }
}

template <typename T>
T unary(UnaryOp op, T x) {
  double v = static_cast<double>(x);
  switch (op) {
    case UnaryOp::Relu:
      return x > T(0) ? x : T(0);
    case UnaryOp::Relu6:
      return std::min(x > T(0) ? x : T(0), T(6));
    case UnaryOp::Sigmoid:
      return static_cast<T>(1.0 / (1.0 + std::exp(-v)));
    case UnaryOp::Tanh:
      return static_cast<T>(std::tanh(v));
    case UnaryOp::Gelu:
      return static_cast<T>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
    case UnaryOp::Exp:
      return static_cast<T>(std::exp(v));
    case UnaryOp::Sqrt:
      return static_cast<T>(std::sqrt(v));
  }
  return x;
}

template <typename T>
void unary(UnaryOp op, const T* x, T* y, int64_t count) {
  for (int64_t e = 0; e < count; ++e) y[e] = unary(op, x[e]);
}

template <typename T>
void scale_bias(const T* x, const T* scale, const T* bias, T* y, const Shape& shape, int axis) {
  AxisSplit s = split_at(shape, axis);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t c = 0; c < s.extent; ++c) {
      for (int64_t i = 0; i < s.inner; ++i) {
        int64_t e = (o * s.extent + c) * s.inner + i;
        y[e] = x[e] * scale[c] + bias[c];
      }
    }
  }
}

template <typename T>
void softmax(const T* x, T* y, const Shape& shape, int axis) {
  AxisSplit s = split_at(shape, axis);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      auto at = [&](int64_t c) { return (o * s.extent + c) * s.inner + i; };
      double largest = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < s.extent; ++c) largest = std::max(largest, static_cast<double>(x[at(c)]));
      double sum = 0;
      for (int64_t c = 0; c < s.extent; ++c) sum += std::exp(x[at(c)] - largest);
      for (int64_t c = 0; c < s.extent; ++c) y[at(c)] = static_cast<T>(std::exp(x[at(c)] - largest) / sum);
    }
  }
}

template <typename T>
void attention(const T* q, const T* k, const T* v, const T* mask, T* out, int64_t B, int64_t S, int64_t T_, int64_t D,
               int64_t E, int64_t rows_per_mask_row, double scale, int64_t heads) {
  // Offsets of head b's (row, column) in q, k, v and out, as the layout stores them.
  int64_t H = heads > 0 ? heads : 1;
  auto at = [&](int64_t b, int64_t row, int64_t rows, int64_t column, int64_t columns) {
    return ((b / H * rows + row) * H + b % H) * columns + column;
  };
  auto k_at = [&](int64_t b, int64_t j, int64_t c) { return heads > 0 ? at(b, j, T_, c, D) : (b * D + c) * T_ + j; };
  std::vector<double> logits(T_);
  std::vector<double> acc(E);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t i = 0; i < S; ++i) {
      double largest = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < T_; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < D; ++c) dot += double(q[at(b, i, S, c, D)]) * k[k_at(b, j, c)];
        logits[j] = dot * scale + (mask ? double(mask[(b / rows_per_mask_row) * T_ + j]) : 0.0);
        largest = std::max(largest, logits[j]);
      }
      double sum = 0;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j < T_; ++j) {
        double e = std::exp(logits[j] - largest);
        sum += e;
        for (int64_t d = 0; d < E; ++d) acc[d] += e * v[at(b, j, T_, d, E)];
      }
      for (int64_t d = 0; d < E; ++d) out[at(b, i, S, d, E)] = static_cast<T>(acc[d] / sum);
    }
  }
}

template <typename T>
void layer_norm(const T* x, const T* gamma, const T* beta, T* y, const Shape& shape, int axis, double eps) {
  int64_t rows = 1;
  for (int d = 0; d < axis; ++d) rows *= shape[d];
  int64_t count = num_elements(shape) / rows;
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * count;
    double mean = 0;
    for (int64_t e = 0; e < count; ++e) mean += row[e];
    mean /= static_cast<double>(count);
    double var = 0;
    for (int64_t e = 0; e < count; ++e) var += (row[e] - mean) * (row[e] - mean);
    var /= static_cast<double>(count);
    for (int64_t e = 0; e < count; ++e) {
      y[r * count + e] = static_cast<T>((row[e] - mean) / std::sqrt(var + eps) * gamma[e] + beta[e]);
    }
  }
}

template <typename T>
void batch_norm(const T* x, const T* mean, const T* var, const T* gamma, const T* beta, T* y, const Shape& shape,
                int axis, double eps) {
  AxisSplit s = split_at(shape, axis);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t c = 0; c < s.extent; ++c) {
      for (int64_t i = 0; i < s.inner; ++i) {
        int64_t e = (o * s.extent + c) * s.inner + i;
        y[e] = static_cast<T>((x[e] - mean[c]) / std::sqrt(double(var[c]) + eps) * gamma[c] + beta[c]);
      }
    }
  }
}

template <typename T>
void transpose(const T* x, T* y, const Shape& shape, const std::vector<int64_t>& perm) {
  Shape out_shape(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) out_shape[d] = shape[perm[d]];
  for (int64_t e = 0; e < num_elements(out_shape); ++e) {
    Shape out_index = unravel(e, out_shape);
    Shape in_index(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) in_index[perm[d]] = out_index[d];
    y[e] = x[ravel(in_index, shape)];
  }
}

template <typename T>
void reshape(const T* x, T* y, int64_t count) {
  std::copy(x, x + count, y);
}

template <typename T>
void pad(const T* x, T* y, const Shape& shape, const std::vector<int64_t>& before, const std::vector<int64_t>& after,
         double value) {
  Shape out_shape(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) out_shape[d] = shape[d] + before[d] + after[d];
  for (int64_t e = 0; e < num_elements(out_shape); ++e) {
    Shape index = unravel(e, out_shape);
    bool inside = true;
    for (size_t d = 0; d < shape.size(); ++d) {
      index[d] -= before[d];
      inside = inside && index[d] >= 0 && index[d] < shape[d];
    }
    y[e] = inside ? x[ravel(index, shape)] : static_cast<T>(value);
  }
}

template <typename T>
void concat(const std::vector<const T*>& inputs, const std::vector<Shape>& shapes, int axis, T* y) {
  // Row-major order: for each outer index, each input's [extent x inner] slab in turn.
  int64_t outer = split_at(shapes[0], axis).outer;
  T* dst = y;
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t t = 0; t < inputs.size(); ++t) {
      AxisSplit s = split_at(shapes[t], axis);
      dst = std::copy(inputs[t] + o * s.extent * s.inner, inputs[t] + (o + 1) * s.extent * s.inner, dst);
    }
  }
}

// Every operator for float; the integer-capable ones for int32_t.
template void matmul(const float*, const float*, float*, int64_t, int64_t, int64_t, bool, bool);
template void matmul(const int32_t*, const int32_t*, int32_t*, int64_t, int64_t, int64_t, bool, bool);
template void batch_matmul(const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t, bool, bool);
template void batch_matmul(const int32_t*, const int32_t*, int32_t*, int64_t, int64_t, int64_t, int64_t, bool, bool);
template void dense(const float*, const float*, const float*, float*, int64_t, int64_t, int64_t,
                    std::optional<UnaryOp>);
template void conv2d(const float*, const float*, float*, const Shape&, const Shape&, const Window2d&, int64_t, Layout);
template void conv2d(const int32_t*, const int32_t*, int32_t*, const Shape&, const Shape&, const Window2d&, int64_t,
                     Layout);
template void depthwise_conv2d(const float*, const float*, float*, const Shape&, const Shape&, const Window2d&, Layout);
template void depthwise_conv2d(const int32_t*, const int32_t*, int32_t*, const Shape&, const Shape&, const Window2d&,
                               Layout);
template void max_pool2d(const float*, float*, const Shape&, std::array<int64_t, 2>, const Window2d&, Layout);
template void max_pool2d(const int32_t*, int32_t*, const Shape&, std::array<int64_t, 2>, const Window2d&, Layout);
template void avg_pool2d(const float*, float*, const Shape&, std::array<int64_t, 2>, const Window2d&, Layout, bool);
template void global_avg_pool2d(const float*, float*, const Shape&, Layout);
template void binary(BinaryOp, const float*, const Shape&, const float*, const Shape&, float*);
template void binary(BinaryOp, const int32_t*, const Shape&, const int32_t*, const Shape&, int32_t*);
template float unary(UnaryOp, float);
template int32_t unary(UnaryOp, int32_t);
template void unary(UnaryOp, const float*, float*, int64_t);
template void unary(UnaryOp, const int32_t*, int32_t*, int64_t);
template void scale_bias(const float*, const float*, const float*, float*, const Shape&, int);
template void softmax(const float*, float*, const Shape&, int);
template void layer_norm(const float*, const float*, const float*, float*, const Shape&, int, double);
template void attention(const float*, const float*, const float*, const float*, float*, int64_t, int64_t, int64_t,
                        int64_t, int64_t, int64_t, double, int64_t);
template void batch_norm(const float*, const float*, const float*, const float*, const float*, float*, const Shape&,
                         int, double);
template void transpose(const float*, float*, const Shape&, const std::vector<int64_t>&);
template void transpose(const int32_t*, int32_t*, const Shape&, const std::vector<int64_t>&);
template void reshape(const float*, float*, int64_t);
template void reshape(const int32_t*, int32_t*, int64_t);
template void pad(const float*, float*, const Shape&, const std::vector<int64_t>&, const std::vector<int64_t>&, double);
template void pad(const int32_t*, int32_t*, const Shape&, const std::vector<int64_t>&, const std::vector<int64_t>&,
                  double);
template void concat(const std::vector<const float*>&, const std::vector<Shape>&, int, float*);
template void concat(const std::vector<const int32_t*>&, const std::vector<Shape>&, int, int32_t*);

}  // namespace temper::ops::reference
