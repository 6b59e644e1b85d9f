// This machine's limits, measured rather than looked up: the fp32 FMA peak (fma_peak.h),
// the int8 dot-product peak and the memory bandwidth, each on `threads` threads at once.
// A report places kernels against them (tuning_db/machine_probe.h keeps them in the log);
// a few seconds' work, so a log measures each machine once.
#pragma once

namespace temper::measure {

// u8 x s8 dot products into int32 (vpdpbusd on AVX512-VNNI): 2 ops per product, in
// GOP/s over all threads; 0 on a CPU without AVX512-VNNI.
double measure_int8_peak(int threads);

// GB/s read from memory by `threads` threads, each summing its slice of an array far
// larger than the last-level cache (vector loads, several accumulators): the best of
// several passes, after the array's pages are touched.
double measure_memory_bandwidth(int threads);

struct MachineLimits {
  int threads = 0;
  double fp32_gflops = 0;
  double int8_gops = 0;
  double bandwidth_gbs = 0;
};

MachineLimits probe_machine(int threads);

}  // namespace temper::measure
