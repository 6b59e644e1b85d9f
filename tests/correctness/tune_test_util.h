// What the tune-loop correctness tests share (test_tune_loop, test_tune_xgb): the host
// target and runner options that time a small workload quickly. Header-only: each test
// file is an executable of its own.
#pragma once

#include "compiler/target/target.h"
#include "measure/runner.h"

namespace temper::search::tune_testing {

inline Target host() { return Target::parse("llvm -mcpu=native"); }

// Few, short repeats: these tests check what the loop does, not how fast a schedule is.
inline measure::RunnerOptions quick_runner() {
  measure::RunnerOptions o;
  o.repeat = 2;
  o.min_repeat_ms = 1;
  return o;
}

}  // namespace temper::search::tune_testing
