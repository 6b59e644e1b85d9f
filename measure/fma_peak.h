// This machine's fp32 FMA peak, measured rather than looked up (the machines of this kind
// are not all the same CPU): independent vfmadd231ps chains, enough of them to cover the
// FMA latency on every pipe, on `threads` threads at once, the best of five tries.
// Benchmarks print their figures as a share of it; `db import` holds records of this
// machine to it.
#pragma once

namespace temper::measure {

struct FmaPeak {
  double gflops = 0;   // all threads together
  int threads = 0;
  int vector_bits = 0;  // 512 (AVX-512), 256 (AVX2 + FMA) or 0 (neither: gflops is 0)
};

FmaPeak measure_fma_peak(int threads);

}  // namespace temper::measure
