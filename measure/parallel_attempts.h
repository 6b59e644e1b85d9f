// What the machine probes share (fma_peak.cpp, machine_probe.cpp): work run on every
// thread at once, timed as a whole, the best of a few attempts -- a probe measures what
// the machine can do, so the attempt least disturbed by others counts.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace temper::measure {

// Seconds of the fastest of `attempts` runs of work(thread index) on `threads` threads.
template <typename Work>
double best_parallel_seconds(int threads, int attempts, const Work& work) {
  double best = 0;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) workers.emplace_back([&work, t] { work(t); });
    for (std::thread& w : workers) w.join();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (attempt == 0 || seconds < best) best = seconds;
  }
  return best;
}

}  // namespace temper::measure
