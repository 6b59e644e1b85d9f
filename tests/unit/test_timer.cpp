// time_function: every group lasts at least min_repeat_ms even when the call it sized
// the groups by was slow (a call that waited for a sleeping thread).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "compiler/runtime/timer.h"

namespace temper {
namespace {

// Busy for about `us` microseconds.
void spin_for(double us) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

TEST(TimeFunction, GroupsLastTheMinimumWhenTheSizingCallWasSlow) {
  int calls = 0;
  // The warm-up call and then the one the groups are sized by: slow; every later call: 20 us.
  auto fn = [&] { spin_for(++calls <= 2 ? 5000 : 20); };
  TimingOptions options;
  options.repeat = 3;
  options.min_repeat_ms = 4;
  TimingResult r = time_function(fn, options);
  ASSERT_EQ(r.group_s.size(), 3u);
  for (double per_call : r.group_s) EXPECT_GE(per_call * r.calls_per_group, 4e-3);
  EXPECT_LT(r.median_s, 1e-3);  // the slow calls are in no group
}

TEST(TimeFunction, NumberIsAFloorOnTheCallsPerGroup) {
  TimingOptions options;
  options.number = 50;
  options.repeat = 2;
  options.min_repeat_ms = 0;
  TimingResult r = time_function([] { spin_for(1); }, options);
  EXPECT_EQ(r.calls_per_group, 50);
  EXPECT_EQ(r.group_s.size(), 2u);
}

}  // namespace
}  // namespace temper
