#include "benchmarks/baselines.h"

#include <cblas.h>
#include <dnnl.h>

#include <Eigen/Dense>
#include <stdexcept>
#include <string>

namespace temper::bench {

void onednn_sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
  dnnl_status_t s = dnnl_sgemm('N', 'N', M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
  if (s != dnnl_success) throw std::runtime_error("dnnl_sgemm failed with status " + std::to_string(s));
}

void openblas_sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
}

void eigen_sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const RowMajor> a(A, M, K);
  Eigen::Map<const RowMajor> b(B, K, N);
  Eigen::Map<RowMajor> c(C, M, N);
  c.noalias() = a * b;
}

}  // namespace temper::bench
