// The vendor kernels Temper is compared against. GEMMs behind one signature:
// C[M,N] = A[M,K] * B[K,N], fp32, row-major, on all cores. Convolution: oneDNN's
// convolution primitive on plain NCHW data, built once and run many times.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace temper::bench {

void onednn_sgemm(int M, int N, int K, const float* A, const float* B, float* C);
void openblas_sgemm(int M, int N, int K, const float* A, const float* B, float* C);
void eigen_sgemm(int M, int N, int K, const float* A, const float* B, float* C);

// A 2-D convolution: input [N,C,H,W], weight [K,C,R,S] (OIHW), output [N,K,P,Q], fp32,
// no bias, no dilation, no groups.
struct ConvShape {
  int64_t N, C, H, W, K, R, S;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t P() const { return (H + pad_top + pad_bottom - R) / stride_h + 1; }
  int64_t Q() const { return (W + pad_left + pad_right - S) / stride_w + 1; }
};

// oneDNN's direct convolution primitive, forward inference, with every tensor in the
// plain layouts above (nchw, oihw): the same data Temper's conv2d takes, so no reorder
// is left out of the comparison. oneDNN picks its implementation for those layouts.
class OnednnConv2d {
 public:
  explicit OnednnConv2d(const ConvShape& shape);
  ~OnednnConv2d();
  OnednnConv2d(const OnednnConv2d&) = delete;
  OnednnConv2d& operator=(const OnednnConv2d&) = delete;

  void run(const float* input, const float* weight, float* output);
  // The implementation oneDNN chose ("gemm:jit", "jit:avx2", ...).
  std::string implementation() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace temper::bench
