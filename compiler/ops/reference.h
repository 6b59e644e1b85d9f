// Reference implementations of the operator library, for checking compiled code.
//
// Plain loops over dense row-major arrays, written to be obviously right rather than
// fast, and independent of te: each takes raw pointers and the integer shapes and
// attributes of the operator of the same name in matmul.h, conv.h, pool.h,
// elementwise.h, nn.h and transform.h, with the same layout conventions. Sums are
// accumulated in double (int64 for integers) and rounded once at the end, so a
// reference result is at least as accurate as any compiled schedule's.
//
// Instantiated for float and, for the operators that support integers (matmul,
// batch_matmul, conv2d, depthwise_conv2d, max_pool2d, binary, unary relu/relu6,
// transpose, reshape, pad, concat), for int32_t.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/ops/elementwise.h"
#include "compiler/ops/shape.h"
#include "compiler/ops/window.h"

namespace temper::ops::reference {

template <typename T>
void matmul(const T* a, const T* b, T* c, int64_t M, int64_t N, int64_t K, bool transpose_a, bool transpose_b);

template <typename T>
void batch_matmul(const T* a, const T* b, T* c, int64_t batch, int64_t M, int64_t N, int64_t K, bool transpose_a,
                  bool transpose_b);

// bias may be null.
template <typename T>
void dense(const T* x, const T* weight, const T* bias, T* y, int64_t M, int64_t N, int64_t K,
           std::optional<UnaryOp> activation);

template <typename T>
void conv2d(const T* input, const T* weight, T* output, const Shape& input_shape, const Shape& weight_shape,
            const Window2d& window, int64_t groups, Layout layout);

template <typename T>
void depthwise_conv2d(const T* input, const T* weight, T* output, const Shape& input_shape, const Shape& weight_shape,
                      const Window2d& window, Layout layout);

// The blocked-layout convolutions of nchwc.h, float32: every lane of every block is data
// (the reference reduces over the tail lanes as the kernel does), but for the input lanes
// past `channels` (when not 0) that an ungrouped conv2d_nchwc skips. conv2d_nchwc's input
// shape is [N, Ci, H, W, cb], or [N, C, H, W] with a weight of cb = 1; its weight
// [Ko, Ci/Gb, R, S, cb, kb] for block_groups Gb (nchwc_block_groups; 1 ungrouped).
// depthwise_conv2d_nchwc: input [N, Cb, H, W, b], weight [Cb, R, S, b].
void conv2d_nchwc(const float* input, const float* weight, float* output, const Shape& input_shape,
                  const Shape& weight_shape, const Window2d& window, int64_t block_groups = 1,
                  int64_t channels = 0);
void depthwise_conv2d_nchwc(const float* input, const float* weight, float* output, const Shape& input_shape,
                            const Shape& weight_shape, const Window2d& window);
// conv2d_winograd_nchwc (winograd.h), in double: input [N, Cb, H, W, cb], transformed
// weight [a, a, Kb, Cb, cb, kb], tile m; the output's tiles past [P, Q] are not written.
void conv2d_winograd_nchwc(const float* input, const float* weight, float* output, const Shape& input_shape,
                           const Shape& weight_shape, const Padding2d& padding, int64_t m);

template <typename T>
void max_pool2d(const T* x, T* y, const Shape& shape, std::array<int64_t, 2> kernel, const Window2d& window,
                Layout layout);

template <typename T>
void avg_pool2d(const T* x, T* y, const Shape& shape, std::array<int64_t, 2> kernel, const Window2d& window,
                Layout layout, bool count_include_pad);

template <typename T>
void global_avg_pool2d(const T* x, T* y, const Shape& shape, Layout layout);

// out has the broadcast shape of a_shape and b_shape.
template <typename T>
void binary(BinaryOp op, const T* a, const Shape& a_shape, const T* b, const Shape& b_shape, T* out);

template <typename T>
T unary(UnaryOp op, T x);

template <typename T>
void unary(UnaryOp op, const T* x, T* y, int64_t count);

template <typename T>
void scale_bias(const T* x, const T* scale, const T* bias, T* y, const Shape& shape, int axis);

template <typename T>
void softmax(const T* x, T* y, const Shape& shape, int axis);

template <typename T>
void layer_norm(const T* x, const T* gamma, const T* beta, T* y, const Shape& shape, int axis, double eps);

// ops/attention.h: q [B, S, D], kt [B, D, T], v [B, T, E], out [B, S, E] -- or with
// heads = H > 0 q [N, S, H, D], k [N, T, H, D], v [N, T, H, E], out [N, S, H, E] -- and mask
// [B / rows_per_mask_row, T] or null; each row in double.
template <typename T>
void attention(const T* q, const T* k, const T* v, const T* mask, T* out, int64_t B, int64_t S, int64_t T_, int64_t D,
               int64_t E, int64_t rows_per_mask_row, double scale, int64_t heads);

template <typename T>
void batch_norm(const T* x, const T* mean, const T* var, const T* gamma, const T* beta, T* y, const Shape& shape,
                int axis, double eps);

template <typename T>
void transpose(const T* x, T* y, const Shape& shape, const std::vector<int64_t>& perm);

template <typename T>
void reshape(const T* x, T* y, int64_t count);

template <typename T>
void pad(const T* x, T* y, const Shape& shape, const std::vector<int64_t>& before, const std::vector<int64_t>& after,
         double value);

template <typename T>
void concat(const std::vector<const T*>& inputs, const std::vector<Shape>& shapes, int axis, T* y);

}  // namespace temper::ops::reference
