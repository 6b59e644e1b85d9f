// The vendor GEMMs Temper is compared against, behind one signature:
// C[M,N] = A[M,K] * B[K,N], fp32, row-major, on all cores.
#pragma once

namespace temper::bench {

void onednn_sgemm(int M, int N, int K, const float* A, const float* B, float* C);
void openblas_sgemm(int M, int N, int K, const float* A, const float* B, float* C);
void eigen_sgemm(int M, int N, int K, const float* A, const float* B, float* C);

}  // namespace temper::bench
