#include "cli/model_executor.h"

#include <cstdio>
#include <iostream>
#include <numeric>

#include "compiler/graph/memory_plan.h"
#include "compiler/ir/error.h"
#include "compiler/ir/text.h"
#include "search/apply_history_best.h"
#include "search/layout_from_log.h"
#include "tuning_db/sqlite_database.h"

namespace temper::cli {
namespace {

// ApplyHistoryBest, counting the ops it served from the log.
class CountingSource : public ops::ScheduleSource {
 public:
  explicit CountingSource(search::ApplyHistoryBest& best) : best_(best) {}
  ops::SourcedSchedule schedule_for(const ops::Workload& workload, const ops::OpInstance& op,
                                    const Target& target) override {
    ops::SourcedSchedule s = best_.schedule_for(workload, op, target);
    if (best_.last_source() == "log") ++from_log_;
    return s;
  }
  int from_log() const { return from_log_; }

 private:
  search::ApplyHistoryBest& best_;
  int from_log_ = 0;
};

}  // namespace

std::string layout_summary(const graph::ExecutionPlan& plan) {
  if (plan.layout == "NCHW") return "NCHW (no conv takes the blocked layout on this target)";
  std::string text = str("activations in ", plan.layout, " between convs; ",
                         plural(static_cast<int64_t>(plan.layout_conversions.size()), "conversion"));
  for (size_t i = 0; i < plan.layout_conversions.size(); ++i) {
    text += (i == 0 ? ": " : ", ") + plan.layout_conversions[i];
  }
  return text;
}

std::string format_bytes(int64_t bytes) {
  char buf[32];
  if (bytes >= (1 << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / (1 << 20));
  } else if (bytes >= (1 << 10)) {
    std::snprintf(buf, sizeof buf, "%.1f KB", static_cast<double>(bytes) / (1 << 10));
  } else {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  }
  return buf;
}

std::unique_ptr<graph::GraphExecutor> compile_model(const graph::Graph& g, const Target& target,
                                                    const std::string& db, graph::LayoutChoice layout,
                                                    search::MachineMatch match, int* ops_from_log) {
  std::unique_ptr<graph::GraphExecutor> executor;
  std::string schedules;
  if (db.empty()) {
    executor = std::make_unique<graph::GraphExecutor>(g, target, graph::ExecutorOptions{.layout = layout});
    schedules = str(executor->plan().tasks, " tunable ops with their template defaults (no --db)");
  } else {
    tuning_db::SQLiteDatabase log(db, tuning_db::OpenMode::ReadOnly);
    search::LayoutFromLog chosen = search::layout_from_log(g, target, layout, log, match);
    if (!chosen.why.empty()) std::printf("%-10s %s\n", "block", chosen.why.c_str());
    layout = chosen.layout;
    std::fflush(stdout);  // before ApplyHistoryBest's lines on stderr
    search::ApplyHistoryBest best(log, &std::cerr, match);
    CountingSource counting(best);
    executor = std::make_unique<graph::GraphExecutor>(g, target, graph::ExecutorOptions{.schedules = &counting, .layout = layout});
    int tasks = executor->plan().tasks;
    if (ops_from_log) *ops_from_log = counting.from_log();
    schedules = str(counting.from_log(), " of ", tasks, " tunable ops tuned from ", db, " (",
                    tasks - counting.from_log(), " with their template defaults)");
    std::string unreadable = tuning_db::unreadable_records_warning(log);
    if (!unreadable.empty()) std::cerr << unreadable << "\n";
  }
  const graph::ExecutionPlan& plan = executor->plan();
  int64_t planned = std::accumulate(plan.storage_bytes.begin(), plan.storage_bytes.end(), int64_t{0});
  std::printf("%-10s %s\n", "schedules", schedules.c_str());
  std::printf("%-10s %d per run; intermediates in %s (%s without sharing)\n", "kernels", executor->num_kernels(),
              format_bytes(planned).c_str(), format_bytes(graph::unplanned_intermediate_bytes(plan)).c_str());
  std::printf("%-10s %s\n", "layout", layout_summary(plan).c_str());
  return executor;
}

}  // namespace temper::cli
