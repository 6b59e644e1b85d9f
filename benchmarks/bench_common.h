// Helpers shared by the benchmarks: a wait for an idle CPU (the machines are shared), the
// choice of OpenBLAS core type, medians and list options. Timing itself is
// compiler/runtime/timer.h's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/ops/workload.h"
#include "compiler/target/target.h"
#include "measure/runner.h"
#include "tuning_db/record.h"

namespace temper::bench {

// Waits (up to max_wait_s) until the 1-minute load average falls below the core count
// minus a half, so another process's burst does not land in the figures. Returns the
// load seen last.
double wait_for_idle_cpu(double max_wait_s = 30);

// Debian's OpenBLAS 0.3.21 does not recognise recent Xeons and silently runs SSE3
// kernels; it reads OPENBLAS_CORETYPE once when loaded. If the variable is unset, sets it
// (SkylakeX on AVX-512 machines, Haswell on AVX2) and re-executes the program, so that
// the figures are OpenBLAS's real ones. Returns the value in force.
std::string ensure_openblas_coretype(char** argv);

// The runner settings of the benchmarks' tuning jobs: 3 timed groups of at least 20 ms.
measure::RunnerOptions tuning_runner_options();

// The best of an auto-scheduler job's records among its sketches' candidates alone
// (leaving out the op's default schedule, which the job measures first), ranked as the
// log ranks them: by each schedule's median, the confirmations' included.
std::optional<tuning_db::TuningRecord> best_of_sketches(const std::vector<tuning_db::TuningRecord>& records,
                                                        const ops::OpInstance& op, const Target& target);

// The median of a benchmark's round times.
double median(std::vector<double> values);

// "a,b,c" -> {"a", "b", "c"} (empty items dropped), for list-valued options.
std::vector<std::string> split_list(const std::string& text, char separator);

}  // namespace temper::bench
