#include "compiler/runtime/ukernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TEMPER_UKERNELS_X86 1
#endif

namespace temper {
namespace {

template <int MR, int NR>
int32_t sgemm_scalar(float* c, const float* a, const float* b, int32_t k, int32_t lda, int32_t ldb, int32_t ldc) {
  float acc[MR][NR];
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) acc[i][j] = c[i * ldc + j];
  }
  for (int32_t p = 0; p < k; ++p) {
    const float* b_row = b + static_cast<int64_t>(p) * ldb;
    for (int i = 0; i < MR; ++i) {
      float a_ip = a[static_cast<int64_t>(i) * lda + p];
      for (int j = 0; j < NR; ++j) acc[i][j] += a_ip * b_row[j];
    }
  }
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) c[i * ldc + j] = acc[i][j];
  }
  return 0;
}

#ifdef TEMPER_UKERNELS_X86
// MR x (NR / 16) zmm accumulators stay in registers for the whole k loop: 12 for 6x32,
// plus NR / 16 rows of B and one broadcast of A, within the 32 zmm registers.
template <int MR, int NR>
__attribute__((target("avx512f,fma"))) int32_t sgemm_avx512(float* c, const float* a, const float* b, int32_t k,
                                                            int32_t lda, int32_t ldb, int32_t ldc) {
  static_assert(NR % 16 == 0, "NR must be a multiple of the 16 lanes of a zmm register");
  constexpr int kVecs = NR / 16;
  __m512 acc[MR][kVecs];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) acc[i][v] = _mm512_loadu_ps(c + i * ldc + 16 * v);
  }
  for (int32_t p = 0; p < k; ++p) {
    const float* b_row = b + static_cast<int64_t>(p) * ldb;
    __m512 b_vec[kVecs];
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) b_vec[v] = _mm512_loadu_ps(b_row + 16 * v);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      __m512 a_ip = _mm512_set1_ps(a[static_cast<int64_t>(i) * lda + p]);
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) acc[i][v] = _mm512_fmadd_ps(a_ip, b_vec[v], acc[i][v]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) _mm512_storeu_ps(c + i * ldc + 16 * v, acc[i][v]);
  }
  return 0;
}

bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  return has;
}
#else
bool cpu_has_avx512() {
  return false;
}
#endif

template <int MR, int NR>
SgemmUKernel pick(UKernelIsa isa) {
#ifdef TEMPER_UKERNELS_X86
  if (isa == UKernelIsa::Avx512) return cpu_has_avx512() ? &sgemm_avx512<MR, NR> : nullptr;
#else
  if (isa == UKernelIsa::Avx512) return nullptr;
#endif
  return &sgemm_scalar<MR, NR>;
}

}  // namespace

UKernelIsa ukernel_isa() {
  return cpu_has_avx512() ? UKernelIsa::Avx512 : UKernelIsa::Scalar;
}

SgemmUKernel sgemm_ukernel(int mr, int nr, UKernelIsa isa) {
  if (mr == 6 && nr == 32) return pick<6, 32>(isa);
  if (mr == 6 && nr == 16) return pick<6, 16>(isa);
  return nullptr;
}

std::vector<std::pair<std::string, void*>> ukernel_symbols() {
  return {
      {"temper_ukernel_sgemm_6x32", reinterpret_cast<void*>(&temper_ukernel_sgemm_6x32)},
      {"temper_ukernel_sgemm_6x16", reinterpret_cast<void*>(&temper_ukernel_sgemm_6x16)},
  };
}

}  // namespace temper

extern "C" int32_t temper_ukernel_sgemm_6x32(float* c, const float* a, const float* b, int32_t k, int32_t lda,
                                             int32_t ldb, int32_t ldc) {
  static const temper::SgemmUKernel kernel = temper::sgemm_ukernel(6, 32, temper::ukernel_isa());
  return kernel(c, a, b, k, lda, ldb, ldc);
}

extern "C" int32_t temper_ukernel_sgemm_6x16(float* c, const float* a, const float* b, int32_t k, int32_t lda,
                                             int32_t ldb, int32_t ldc) {
  static const temper::SgemmUKernel kernel = temper::sgemm_ukernel(6, 16, temper::ukernel_isa());
  return kernel(c, a, b, k, lda, ldb, ldc);
}
