// The vendor kernels Temper is compared against. GEMMs behind one signature:
// C[M,N] = A[M,K] * B[K,N], fp32, row-major, on all cores. Convolution: oneDNN's
// convolution primitive on plain NCHW data, or on its preferred blocked layouts.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace temper::bench {

void onednn_sgemm(int M, int N, int K, const float* A, const float* B, float* C);
void openblas_sgemm(int M, int N, int K, const float* A, const float* B, float* C);
void eigen_sgemm(int M, int N, int K, const float* A, const float* B, float* C);

// A 2-D convolution: input [N,C,H,W], weight [K,C/groups,R,S] (OIHW; with groups, the
// same bytes as oneDNN's goihw), output [N,K,P,Q], fp32, no bias, no dilation.
struct ConvShape {
  int64_t N, C, H, W, K, R, S;
  int64_t groups = 1;  // C for a depthwise convolution
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t P() const { return (H + pad_top + pad_bottom - R) / stride_h + 1; }
  int64_t Q() const { return (W + pad_left + pad_right - S) / stride_w + 1; }
};

// Which layouts OnednnConv2d runs oneDNN's convolution on.
enum class OnednnConvLayout {
  // The plain layouts above (nchw, oihw): the same data Temper's conv2d takes, so no
  // reorder is left out of the comparison. For these oneDNN picks im2col + GEMM.
  Plain,
  // The layouts oneDNN prefers (format_tag_any: nChw8c, OIhw8i8o, ... on AVX2) and its
  // direct convolution for them: its best case, as in a framework that pre-packs the
  // weights and keeps activations blocked from layer to layer. The reorders into and out
  // of those layouts happen in bind() and fetch_output(), outside run().
  Blocked,
};

// oneDNN's convolution primitive, forward inference, built once and run many times:
//   bind(input, weight, output);  run(); ... run();  fetch_output();
class OnednnConv2d {
 public:
  explicit OnednnConv2d(const ConvShape& shape, OnednnConvLayout layout = OnednnConvLayout::Plain);
  ~OnednnConv2d();
  OnednnConv2d(const OnednnConv2d&) = delete;
  OnednnConv2d& operator=(const OnednnConv2d&) = delete;

  // The plain nchw input, oihw weight and nchw output the convolution reads and writes.
  // Plain uses them in place. Blocked reorders input and weight into its own buffers here,
  // so later changes to them are seen only after the next bind().
  void bind(const float* input, const float* weight, float* output);
  // The convolution alone, on the bound data: what a benchmark times.
  void run();
  // Leaves the result of the last run() in the bound output (nchw): a reorder for Blocked,
  // nothing to do for Plain, which writes there directly.
  void fetch_output();
  // What oneDNN chose: the implementation ("gemm:jit", "jit:avx2", ...) and, for Blocked,
  // the layouts ("jit:avx2 src=nChw8c weights=OIhw8i8o dst=nChw8c").
  std::string implementation() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// oneDNN's softmax (over the last axis) or layer normalization (over the last axis, with
// scale and shift) on a plain row-major [rows, row_length] fp32 array, forward inference,
// built once and run many times on the arrays given to the constructor.
class OnednnRowOp {
 public:
  enum class Kind { Softmax, LayerNorm };
  // gamma and beta: the layer norm's scale and shift (row_length each), unused for softmax.
  OnednnRowOp(Kind kind, int64_t rows, int64_t row_length, const float* input, float* output,
              const float* gamma = nullptr, const float* beta = nullptr, float epsilon = 1e-5f);
  ~OnednnRowOp();
  OnednnRowOp(const OnednnRowOp&) = delete;
  OnednnRowOp& operator=(const OnednnRowOp&) = delete;
  void run();
  std::string implementation() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace temper::bench
