// CPU micro-kernels that tensorized code calls (see compiler/schedule/tensor_intrin.h).
//
// temper_ukernel_sgemm_MRxNR(c, a, b, k, lda, ldb, ldc) accumulates an MR x NR tile:
//     C[i, j] += sum over p < k of A[i, p] * B[p, j]      (0 <= i < MR, 0 <= j < NR)
// with row-major operands, C[i, j] at c[i * ldc + j], A[i, p] at a[i * lda + p],
// B[p, j] at b[p * ldb + j]. All integers are int32 (the IR passes int32 values). It
// returns 0. The tile is held in registers: on a CPU with AVX-512 each row is NR/16 zmm
// accumulators updated by FMA, one broadcast of A per row and step; elsewhere a
// portable scalar loop runs. The choice is made once, at the first call.
//
// The JIT and the runtime register ukernel_symbols() so generated code can call them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

extern "C" {
int32_t temper_ukernel_sgemm_6x32(float* c, const float* a, const float* b, int32_t k, int32_t lda, int32_t ldb,
                                  int32_t ldc);
int32_t temper_ukernel_sgemm_6x16(float* c, const float* a, const float* b, int32_t k, int32_t lda, int32_t ldb,
                                  int32_t ldc);
}

namespace temper {

// Every micro-kernel, by symbol name.
std::vector<std::pair<std::string, void*>> ukernel_symbols();

// The code paths of the kernels, so tests can run each one.
enum class UKernelIsa { Scalar, Avx512 };
// The path the kernels take on this CPU.
UKernelIsa ukernel_isa();
using SgemmUKernel = int32_t (*)(float* c, const float* a, const float* b, int32_t k, int32_t lda, int32_t ldb,
                                 int32_t ldc);
// The MR x NR sgemm kernel's code for one path (nullptr if there is no such kernel, or
// Avx512 on a CPU without it).
SgemmUKernel sgemm_ukernel(int mr, int nr, UKernelIsa isa);

}  // namespace temper
