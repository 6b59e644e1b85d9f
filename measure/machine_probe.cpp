#include "measure/machine_probe.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "measure/fma_peak.h"
#include "measure/parallel_attempts.h"

namespace temper::measure {
namespace {

constexpr int kAttempts = 5;

constexpr int kDotChains = 16;  // independent accumulators, as for the FMA peak
constexpr long kDotIterations = 10'000'000;

// kDotChains independent vpdpbusd a step, in assembly so that nothing folds the chains.
__attribute__((target("avx512f,avx512vnni"))) void dot_chains_512(long iterations) {
  __asm__ volatile(
      "vpxord %%zmm16, %%zmm16, %%zmm16\n"
      "vpxord %%zmm17, %%zmm17, %%zmm17\n"
      "1:\n"
      "vpdpbusd %%zmm16, %%zmm17, %%zmm0\n"
      "vpdpbusd %%zmm16, %%zmm17, %%zmm1\n"
      "vpdpbusd %%zmm16, %%zmm17, %%zmm2\n"
      "vpdpbusd %%zmm16, %%zmm17, %%zmm3\n"
      "vpdpbusd %%zmm16, %%zmm17, %%zmm4\n"
      "vpdpbusd %%zmm16, %%zmm17, %%zmm5\n"
      "vpdpbusd %%zmm16, %%zmm17, %%zmm6\n"
      "vpdpbusd %%zmm16, %%zmm17, %%zmm7\n"
      "vpdpbusd %%zmm16, %%zmm17, %%zmm8\n"
      "vpdpbusd %%zmm16, %%zmm17, %%zmm9\n"
      "vpdpbusd %%zmm16, %%zmm17, %%zmm10\n"
      "vpdpbusd %%zmm16, %%zmm17, %%zmm11\n"
      "vpdpbusd %%zmm16, %%zmm17, %%zmm12\n"
      "vpdpbusd %%zmm16, %%zmm17, %%zmm13\n"
      "vpdpbusd %%zmm16, %%zmm17, %%zmm14\n"
      "vpdpbusd %%zmm16, %%zmm17, %%zmm15\n"
      "dec %0\n"
      "jnz 1b\n"
      : "+r"(iterations)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
        "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "cc");
}

// Sums n floats (a multiple of 32) with four vector accumulators: loads, nothing else.
__attribute__((target("avx2"))) float sum_avx2(const float* data, size_t n) {
  __m256 a = _mm256_setzero_ps(), b = a, c = a, d = a;
  for (size_t i = 0; i < n; i += 32) {
    a = _mm256_add_ps(a, _mm256_load_ps(data + i));
    b = _mm256_add_ps(b, _mm256_load_ps(data + i + 8));
    c = _mm256_add_ps(c, _mm256_load_ps(data + i + 16));
    d = _mm256_add_ps(d, _mm256_load_ps(data + i + 24));
  }
  float lanes[8];
  _mm256_storeu_ps(lanes, _mm256_add_ps(_mm256_add_ps(a, b), _mm256_add_ps(c, d)));
  float sum = 0;
  for (float v : lanes) sum += v;
  return sum;
}

float sum_scalar(const float* data, size_t n) {
  float s[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < n; i += 4) {
    for (int k = 0; k < 4; ++k) s[k] += data[i + k];
  }
  return s[0] + s[1] + s[2] + s[3];
}

}  // namespace

double measure_int8_peak(int threads) {
  if (threads < 1 || !__builtin_cpu_supports("avx512vnni")) return 0;
  double seconds = best_parallel_seconds(threads, kAttempts, [](int) { dot_chains_512(kDotIterations); });
  // 16 int32 lanes, 4 byte products each, a multiply and an add per product.
  double ops = 2.0 * 64 * kDotChains * static_cast<double>(kDotIterations) * threads;
  return ops / seconds / 1e9;
}

double measure_memory_bandwidth(int threads) {
  if (threads < 1) return 0;
  // 256 MB: eight times the largest last-level caches of the machines this runs on.
  constexpr size_t kBytes = size_t{256} << 20;
  constexpr size_t kFloats = kBytes / sizeof(float);
  std::unique_ptr<float, decltype(&std::free)> data(static_cast<float*>(std::aligned_alloc(64, kBytes)), &std::free);
  if (!data) return 0;
  const size_t slice = kFloats / threads / 32 * 32;
  // Each thread touches the pages it will read, so they are allocated near it.
  std::vector<std::thread> touch;
  for (int t = 0; t < threads; ++t) {
    touch.emplace_back([&, t] { std::fill_n(data.get() + t * slice, slice, 1.0f); });
  }
  for (std::thread& w : touch) w.join();
  std::vector<float> sums(threads);
  bool avx2 = __builtin_cpu_supports("avx2");
  double seconds = best_parallel_seconds(threads, kAttempts, [&](int t) {
    const float* mine = data.get() + t * slice;
    sums[t] = avx2 ? sum_avx2(mine, slice) : sum_scalar(mine, slice);
  });
  // The sums are read, so the loads cannot be dropped.
  volatile float keep = 0;
  for (float s : sums) keep = keep + s;
  return static_cast<double>(slice) * sizeof(float) * threads / seconds / 1e9;
}

MachineLimits probe_machine(int threads) {
  MachineLimits limits;
  limits.threads = threads;
  limits.fp32_gflops = measure_fma_peak(threads).gflops;
  limits.int8_gops = measure_int8_peak(threads);
  limits.bandwidth_gbs = measure_memory_bandwidth(threads);
  return limits;
}

}  // namespace temper::measure
