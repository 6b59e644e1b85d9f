// Timing a compiled function the way a measurer does: one warm-up call, then `repeat`
// groups of calls, each group long enough (min_repeat_ms) for the clock's resolution
// not to matter; the figures are per call.
#pragma once

#include <functional>
#include <vector>

namespace temper {

struct TimingResult {
  double median_s = 0;          // median over the groups, seconds per call
  double min_s = 0;             // fastest group, seconds per call
  std::vector<double> group_s;  // every group's seconds per call, in order
  int calls_per_group = 0;
};

TimingResult time_function(const std::function<void()>& fn, int repeat = 7, double min_repeat_ms = 100);

}  // namespace temper
