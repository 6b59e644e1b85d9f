#include "compiler/runtime/timer.h"

#include <algorithm>
#include <chrono>

#include "compiler/ir/error.h"

namespace temper {

TimingResult time_function(const std::function<void()>& fn, int repeat, double min_repeat_ms) {
  using clock = std::chrono::steady_clock;
  if (repeat < 1) throw UserError(str("repeat must be at least 1, got ", repeat));
  fn();  // warm-up: page faults, caches, lazy binding
  auto t0 = clock::now();
  fn();
  double once = std::chrono::duration<double>(clock::now() - t0).count();
  TimingResult r;
  r.calls_per_group = std::max(1, static_cast<int>(min_repeat_ms / 1000.0 / std::max(once, 1e-9)));
  for (int g = 0; g < repeat; ++g) {
    auto start = clock::now();
    for (int i = 0; i < r.calls_per_group; ++i) fn();
    r.group_s.push_back(std::chrono::duration<double>(clock::now() - start).count() / r.calls_per_group);
  }
  std::vector<double> sorted = r.group_s;
  std::sort(sorted.begin(), sorted.end());
  r.median_s = sorted[sorted.size() / 2];
  r.min_s = sorted.front();
  return r;
}

}  // namespace temper
