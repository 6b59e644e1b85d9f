#include "search/apply_history_best.h"

#include <cstdio>

#include "compiler/ops/cpu_schedules.h"
#include "compiler/ops/gpu_schedules.h"
#include "schedule_space/template.h"

namespace temper::search {

Schedule schedule_from_record(const tuning_db::TuningRecord& record, const ops::Workload& workload,
                              const ops::OpInstance& op, const Target& target) {
  if (!record.config.is_null() && schedule_space::find_template(workload.op, target)) {
    std::unique_ptr<schedule_space::Task> task = schedule_space::Task::create(workload, target);
    return task->apply(task->space().from_json(record.config));
  }
  return Trace::from_json(record.trace).replay(op.func);
}

Schedule default_schedule(const ops::Workload& workload, const ops::OpInstance& op, const Target& target) {
  if (schedule_space::find_template(workload.op, target)) {
    std::unique_ptr<schedule_space::Task> task = schedule_space::Task::create(workload, target);
    return task->apply(task->default_config());
  }
  return target.is_gpu() ? ops::schedule_gpu_default(op) : ops::schedule_cpu_default(op, target);
}

ops::SourcedSchedule default_sourced_schedule(const ops::Workload& workload, const ops::OpInstance& op,
                                              const Target& target) {
  nlohmann::json config;
  if (schedule_space::find_template(workload.op, target)) {
    config = schedule_space::Task::create(workload, target)->default_config().to_json();
  }
  return {default_schedule(workload, op, target), std::move(config)};
}

ApplyHistoryBest::ApplyHistoryBest(const tuning_db::Database& db, std::ostream* info) : db_(db), info_(info) {}

void ApplyHistoryBest::report(const std::string& workload, const std::string& line) {
  if (info_ && reported_.insert(workload).second) *info_ << line << "\n";
}

ops::SourcedSchedule ApplyHistoryBest::schedule_for(const ops::Workload& workload, const ops::OpInstance& op,
                                                    const Target& target) {
  std::string name = workload.to_string();
  std::vector<tuning_db::TuningRecord> best = db_.top_k(tuning_db::WorkloadKey::from(workload), target.to_string(), 1);
  std::string why_not;
  if (!best.empty()) {
    try {
      Schedule s = schedule_from_record(best[0], workload, op, target);
      last_source_ = "log";
      last_record_ = best[0];
      bool templated = !best[0].config.is_null() && schedule_space::find_template(workload.op, target);
      char mean[32];
      std::snprintf(mean, sizeof mean, "%.3f ms", best[0].mean * 1e3);
      report(name, str("info: ", name, ": applying the best of the log (", mean, " when measured)"));
      return {std::move(s), templated ? best[0].config : nlohmann::json()};
    } catch (const UserError& e) {
      why_not = str("its best record no longer applies (", e.what(), ")");
    }
  } else {
    why_not = "the log has no valid record for it on " + target.to_string();
  }
  bool templated = schedule_space::find_template(workload.op, target) != nullptr;
  last_source_ = templated ? "template default" : "default schedule";
  report(name, str("info: ", name, ": ", why_not, "; using the ", last_source_));
  return default_sourced_schedule(workload, op, target);
}

}  // namespace temper::search
