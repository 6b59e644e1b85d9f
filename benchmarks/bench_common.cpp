#include "benchmarks/bench_common.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "compiler/ir/error.h"
#include "compiler/ops/cpu_schedules.h"
#include "tuning_db/schedule_ranking.h"

namespace temper::bench {

double wait_for_idle_cpu(double max_wait_s) {
  double cores = std::thread::hardware_concurrency();
  auto start = std::chrono::steady_clock::now();
  double load = 0;
  while (true) {
    std::ifstream f("/proc/loadavg");
    f >> load;
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!f || load < cores - 0.5 || waited > max_wait_s) return load;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

std::string ensure_openblas_coretype(char** argv) {
  if (const char* v = std::getenv("OPENBLAS_CORETYPE")) return v;
  const char* type = __builtin_cpu_supports("avx512f") ? "SkylakeX" : "Haswell";
  setenv("OPENBLAS_CORETYPE", type, 1);
  std::fprintf(stderr, "note: setting OPENBLAS_CORETYPE=%s (Debian's OpenBLAS 0.3.21 does not recognise this CPU)\n",
               type);
  execv("/proc/self/exe", argv);
  std::perror("re-executing with OPENBLAS_CORETYPE set");  // only reached if execv failed
  return type;
}

measure::RunnerOptions tuning_runner_options() {
  measure::RunnerOptions o;
  o.repeat = 3;
  o.min_repeat_ms = 20;
  return o;
}

std::optional<tuning_db::TuningRecord> best_of_sketches(const std::vector<tuning_db::TuningRecord>& records,
                                                        const ops::OpInstance& op, const Target& target) {
  nlohmann::json default_trace = ops::schedule_cpu_default(op, target).trace().to_json();
  std::vector<tuning_db::TuningRecord> sketches;
  for (const tuning_db::TuningRecord& r : records) {
    if (r.trace != default_trace) sketches.push_back(r);
  }
  std::vector<tuning_db::TuningRecord> best = tuning_db::best_schedules(sketches, 1);
  if (best.empty()) return std::nullopt;
  return best[0];
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

std::vector<std::string> split_list(const std::string& text, char separator) {
  std::vector<std::string> items;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(separator, pos);
    if (end == std::string::npos) end = text.size();
    if (end > pos) items.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return items;
}

}  // namespace temper::bench
