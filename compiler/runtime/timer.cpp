#include "compiler/runtime/timer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "compiler/ir/error.h"

namespace temper {
namespace {

// Writing 64 MiB evicts the timed function's data from every cache level of today's
// CPUs (the largest last-level caches of one socket are below that).
void flush_caches() {
  static std::vector<char> buffer(64 << 20);
  static char value = 0;
  std::memset(buffer.data(), ++value, buffer.size());
}

}  // namespace

TimingResult time_groups(const std::function<double(int calls)>& run_group, const std::function<void()>& flush,
                         const TimingOptions& options) {
  if (options.repeat < 1) throw UserError(str("repeat must be at least 1, got ", options.repeat));
  if (options.number < 1) throw UserError(str("number must be at least 1, got ", options.number));
  run_group(1);  // warm-up: page faults, caches, lazy binding, a kernel's first launch
  double once = run_group(1);
  TimingResult r;
  constexpr double kMaxCalls = 1e9;
  const double min_s = options.min_repeat_ms / 1000.0;
  double calls = std::max<double>(options.number, std::min(std::ceil(min_s / std::max(once, 1e-9)), kMaxCalls));
  for (int g = 0; g < options.repeat; ++g) {
    if (g > 0 && options.cooldown_ms > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(options.cooldown_ms));
    }
    if (options.flush_cache) flush();
    double group = run_group(static_cast<int>(calls));
    // One call's time misled the count (that call waited for a sleeping thread, say):
    // more calls, 20% over the minimum, and the groups start again.
    if (group < min_s && calls < kMaxCalls) {
      calls = std::min(kMaxCalls, std::max(calls * 2, std::ceil(calls * 1.2 * min_s / std::max(group, 1e-9))));
      r.group_s.clear();
      g = -1;
      continue;
    }
    r.group_s.push_back(group / calls);
  }
  r.calls_per_group = static_cast<int>(calls);
  std::vector<double> sorted = r.group_s;
  std::sort(sorted.begin(), sorted.end());
  r.median_s = sorted[sorted.size() / 2];
  r.min_s = sorted.front();
  return r;
}

TimingResult time_function(const std::function<void()>& fn, const TimingOptions& options) {
  using clock = std::chrono::steady_clock;
  auto run_group = [&](int calls) {
    auto start = clock::now();
    for (int i = 0; i < calls; ++i) fn();
    return std::chrono::duration<double>(clock::now() - start).count();
  };
  return time_groups(run_group, flush_caches, options);
}

TimingResult time_function(const std::function<void()>& fn, const std::function<void()>& before,
                           const TimingOptions& options) {
  using clock = std::chrono::steady_clock;
  auto run_group = [&](int calls) {
    double seconds = 0;
    for (int i = 0; i < calls; ++i) {
      before();
      auto start = clock::now();
      fn();
      seconds += std::chrono::duration<double>(clock::now() - start).count();
    }
    return seconds;
  };
  return time_groups(run_group, flush_caches, options);
}

TimingResult time_function(const std::function<void()>& fn, int repeat, double min_repeat_ms) {
  TimingOptions options;
  options.repeat = repeat;
  options.min_repeat_ms = min_repeat_ms;
  return time_function(fn, options);
}

}  // namespace temper
