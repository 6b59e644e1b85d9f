#include "measure/fma_peak.h"

#include "measure/parallel_attempts.h"

namespace temper::measure {
namespace {

constexpr int kChains = 16;  // independent accumulators: FMA latency 4 x 2 pipes, with room
constexpr long kIterations = 20'000'000;

// One loop of kChains independent FMAs a step, written in assembly so that no compiler
// keeps an accumulator in memory or folds the chains: registers 0-15 accumulate,
// 16/17 (or 14/15 in the AVX2 form, which has 16 registers) are the operands.
__attribute__((target("avx512f"))) void chains_512(long iterations) {
  __asm__ volatile(
      "vxorps %%xmm16, %%xmm16, %%xmm16\n"
      "vxorps %%xmm17, %%xmm17, %%xmm17\n"
      "1:\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm0\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm1\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm2\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm3\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm4\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm5\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm6\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm7\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm8\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm9\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm10\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm11\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm12\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm13\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm14\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm15\n"
      "dec %0\n"
      "jnz 1b\n"
      : "+r"(iterations)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
        "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "cc");
}

constexpr int kChains256 = 14;

__attribute__((target("avx2,fma"))) void chains_256(long iterations) {
  __asm__ volatile(
      "vxorps %%xmm14, %%xmm14, %%xmm14\n"
      "vxorps %%xmm15, %%xmm15, %%xmm15\n"
      "1:\n"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm0\n"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm1\n"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm2\n"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm3\n"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm4\n"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm5\n"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm6\n"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm7\n"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm8\n"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm9\n"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm10\n"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm11\n"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm12\n"
      "vfmadd231ps %%ymm14, %%ymm15, %%ymm13\n"
      "dec %0\n"
      "jnz 1b\n"
      : "+r"(iterations)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
        "xmm12", "xmm13", "xmm14", "xmm15", "cc");
}

}  // namespace

FmaPeak measure_fma_peak(int threads) {
  FmaPeak peak;
  peak.threads = threads;
  if (__builtin_cpu_supports("avx512f")) {
    peak.vector_bits = 512;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    peak.vector_bits = 256;
  } else {
    return peak;
  }
  const int lanes = peak.vector_bits / 32;
  double seconds = best_parallel_seconds(threads, 5, [&](int) {
    peak.vector_bits == 512 ? chains_512(kIterations) : chains_256(kIterations);
  });
  double flops = 2.0 * lanes * (peak.vector_bits == 512 ? kChains : kChains256) * static_cast<double>(kIterations) * threads;
  peak.gflops = flops / seconds / 1e9;
  return peak;
}

}  // namespace temper::measure
