// Timing a compiled function the way a measurer does: one warm-up call, then `repeat`
// groups of calls, each group at least `number` calls and long enough (min_repeat_ms) for
// the clock's resolution not to matter; the figures are per call. Optionally the caches
// are flushed before each group and the machine rests between groups.
#pragma once

#include <functional>
#include <vector>

namespace temper {

struct TimingOptions {
  int number = 1;              // calls per group, at least
  int repeat = 7;              // groups; one figure each
  double min_repeat_ms = 100;  // a group lasts at least this long (more calls when needed)
  double cooldown_ms = 0;      // sleep between groups
  bool flush_cache = false;    // write a buffer larger than the last-level cache before each group
};

struct TimingResult {
  double median_s = 0;          // median over the groups, seconds per call
  double min_s = 0;             // fastest group, seconds per call
  std::vector<double> group_s;  // every group's seconds per call, in order
  int calls_per_group = 0;
};

TimingResult time_function(const std::function<void()>& fn, const TimingOptions& options);
// The same rule over another clock (a GPU's events): run_group(calls) makes `calls` calls
// and returns the seconds they took; flush empties the caches that matter.
TimingResult time_groups(const std::function<double(int calls)>& run_group, const std::function<void()>& flush,
                         const TimingOptions& options);
TimingResult time_function(const std::function<void()>& fn, int repeat = 7, double min_repeat_ms = 100);
// The same rule with `before` run ahead of every call, untimed (each call is timed alone):
// the measurer evicts a candidate's weights so, as a model's run finds them.
TimingResult time_function(const std::function<void()>& fn, const std::function<void()>& before,
                           const TimingOptions& options);

}  // namespace temper
