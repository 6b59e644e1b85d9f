#include "search/apply_history_best.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <optional>

#include "compiler/ir/text.h"
#include "compiler/ops/cpu_schedules.h"
#include "compiler/ops/gpu_schedules.h"
#include "schedule_space/template.h"
#include "tuning_db/schedule_ranking.h"

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

namespace {

// How many of a workload's best records a build tries, best first, before the default.
constexpr int kRecordsTried = 5;

// The parameters that make a convolution the same computation whatever its layout.
const char* const kConvShapeKeys[] = {"N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation"};

bool same_convolution(const ops::Workload& a, const ops::Workload& b) {
  auto value = [](const ops::Workload& w, const std::string& key, const std::string& fallback) {
    for (const auto& [k, v] : w.params) {
      if (k == key) return v;
    }
    // Winograd's workload leaves out what it always is: a 3x3 window of stride 1.
    if (w.op == "conv2d_winograd_nchwc" && (key == "R" || key == "S")) return std::string("3");
    if (w.op == "conv2d_winograd_nchwc" && (key == "stride" || key == "dilation")) return std::string("1");
    return fallback;
  };
  for (const char* key : kConvShapeKeys) {
    if (value(a, key, "") != value(b, key, "")) return false;
  }
  // The blocked convs have one filter per depthwise channel.
  return value(a, "groups", "1") == value(b, "groups", "1") &&
         value(a, "multiplier", "1") == value(b, "multiplier", "1");
}

bool is_conv(const std::string& op) {
  return op == "conv2d" || op == "conv2d_nchwc" || op == "group_conv2d_nchwc" || op == "conv2d_winograd_nchwc" ||
         op == "depthwise_conv2d" || op == "depthwise_conv2d_nchwc";
}

bool is_depthwise(const std::string& op) {
  return op.rfind("depthwise", 0) == 0;
}

}  // namespace

std::vector<std::string> ApplyHistoryBest::other_layouts(const ops::Workload& workload, const Target& target) const {
  std::vector<std::string> found;
  if (!is_conv(workload.op)) return found;
  std::string name = workload.to_string();
  for (const tuning_db::WorkloadKey& key : db_.workloads()) {
    if (!is_conv(key.op) || is_depthwise(key.op) != is_depthwise(workload.op) || key.workload == name) continue;
    ops::Workload other;
    try {
      other = ops::Workload::parse(key.workload);
    } catch (const UserError&) {
      continue;
    }
    if (same_convolution(workload, other) && !db_.top_k(key, target.to_string(), 1).empty()) {
      found.push_back(key.workload);
    }
  }
  return found;
}

namespace {

// The fingerprint of this machine, read once per target string (GPU targets open their device).
tuning_db::TargetInfo host_info(const Target& target) {
  static std::mutex mutex;
  static std::map<std::string, tuning_db::TargetInfo> hosts;
  std::lock_guard lock(mutex);
  auto [it, inserted] = hosts.try_emplace(target.to_string());
  if (inserted) it->second = tuning_db::host_target_info(target);
  return it->second;
}

}  // namespace

MachineRecords best_records(const tuning_db::Database& db, const tuning_db::WorkloadKey& workload, const Target& target,
                            int k, MachineMatch match) {
  tuning_db::TargetInfo host = host_info(target);
  std::vector<tuning_db::TuningRecord> here, elsewhere;
  for (tuning_db::TuningRecord& record : db.records_for(workload, target.to_string())) {
    (tuning_db::same_machine(record.target, host) ? here : elsewhere).push_back(std::move(record));
  }
  MachineRecords out;
  out.best = tuning_db::best_schedules(here, k);
  if (!out.best.empty() || elsewhere.empty()) return out;
  std::vector<tuning_db::TuningRecord> others = tuning_db::best_schedules(elsewhere, k);
  if (others.empty()) return out;
  if (match == MachineMatch::AnyMachine) {
    out.best = std::move(others);
    out.this_machine = false;
  } else {
    out.elsewhere = others[0].target;
  }
  return out;
}

std::optional<tuning_db::ModelChoice> model_choice_for(const tuning_db::Database& db,
                                                       const tuning_db::WorkloadKey& workload, const Target& target) {
  tuning_db::TargetInfo host = host_info(target);
  std::optional<tuning_db::ModelChoice> newest;
  for (tuning_db::ModelChoice& choice : db.model_choices()) {
    if (choice.workload == workload && choice.target.target == target.to_string() &&
        tuning_db::same_machine(choice.target, host) && (!newest || choice.timestamp >= newest->timestamp)) {
      newest = std::move(choice);
    }
  }
  if (!newest) return std::nullopt;
  for (const tuning_db::TuningRecord& record : db.records_for(workload, target.to_string())) {
    if (record.timestamp > newest->timestamp && tuning_db::same_machine(record.target, host)) return std::nullopt;
  }
  return newest;
}

ApplyHistoryBest::ApplyHistoryBest(const tuning_db::Database& db, std::ostream* info, MachineMatch match)
    : db_(db), info_(info), match_(match) {}

void ApplyHistoryBest::report(const std::string& workload, const std::string& line) {
  if (info_ && reported_.insert(workload).second) *info_ << line << "\n";
}

ops::SourcedSchedule ApplyHistoryBest::schedule_for(const ops::Workload& workload, const ops::OpInstance& op,
                                                    const Target& target) {
  std::string name = workload.to_string();
  if (std::optional<tuning_db::ModelChoice> choice =
          model_choice_for(db_, tuning_db::WorkloadKey::from(workload), target)) {
    tuning_db::TuningRecord record;
    record.workload = choice->workload;
    record.target = choice->target;
    record.trace = choice->trace;
    record.config = choice->config;
    record.mean = choice->model_seconds;
    try {
      Schedule s = schedule_from_record(record, workload, op, target);
      last_source_ = "log";
      last_record_ = record;
      char times[96];
      std::snprintf(times, sizeof times, "%.3f ms there against %.3f ms for the log's best",
                    choice->model_seconds * 1e3, choice->log_best_seconds * 1e3);
      report(name, str("info: ", name, ": applying the schedule chosen in model ", choice->model, " (", choice->picked,
                       ", ", times, ")"));
      bool templated = !record.config.is_null() && schedule_space::find_template(workload.op, target);
      return {std::move(s), templated ? record.config : nlohmann::json()};
    } catch (const UserError& e) {
      report(name, str("warning: ", name, ": the schedule chosen in model ", choice->model, " no longer applies (",
                       e.what(), "); taking the log's best instead"));
      reported_.erase(name);  // the line that says what was applied instead follows
    }
  }
  MachineRecords found = best_records(db_, tuning_db::WorkloadKey::from(workload), target, kRecordsTried, match_);
  const std::vector<tuning_db::TuningRecord>& best = found.best;
  std::string why_not;
  if (!best.empty()) {
    // The best record that still applies: one written by another Temper (a template's
    // knobs since changed) gives way to the next, not to the default.
    std::vector<std::string> failed;
    for (size_t rank = 0; rank < best.size(); ++rank) {
      const tuning_db::TuningRecord& record = best[rank];
      std::optional<Schedule> s;
      try {
        s = schedule_from_record(record, workload, op, target);
      } catch (const UserError& e) {
        failed.push_back(str("rank ", rank + 1, ": ", e.what()));
        continue;
      }
      last_source_ = "log";
      last_record_ = record;
      bool templated = !record.config.is_null() && schedule_space::find_template(workload.op, target);
      char mean[32];
      std::snprintf(mean, sizeof mean, "%.3f ms", record.mean * 1e3);
      std::string where = found.this_machine ? "" : str(" on another machine: ", describe_machine(record.target));
      if (rank == 0) {
        report(name, str("info: ", name, ": applying the best of the log (", mean, " when measured", where, ")"));
      } else {
        report(name, str("warning: ", name, ": the log's ",
                         rank == 1 ? "best record no longer applies" : str(rank, " best records no longer apply"), " (",
                         join(failed, "; "), "); applying its next best, rank ", rank + 1, " (", mean, " when measured",
                         where, ")"));
      }
      return {std::move(*s), templated ? record.config : nlohmann::json()};
    }
    why_not = str(best.size() == 1 ? "its only valid record no longer applies"
                                   : str("none of its ", best.size(), " best records applies"),
                  " (", join(failed, "; "), ")");
  } else if (found.elsewhere) {
    why_not = str("the log's records of it were measured on another machine (", describe_machine(*found.elsewhere),
                  "), not this one; --any-machine applies them");
    report(name, str("warning: ", name, ": ", why_not, "; using the template default"));
  } else {
    why_not = "the log has no valid record for it on " + target.to_string();
    // A log tuned before the graph's layout changed (or for another block size) holds the
    // same convolution under another workload: its schedules do not fit this kernel.
    std::vector<std::string> others = other_layouts(workload, target);
    if (!others.empty()) {
      why_not = str("the log has records for this convolution only in another layout, block size or algorithm (",
                    others[0], others.size() > 1 ? str(" and ", others.size() - 1, " more") : std::string(),
                    "), which do not apply to this kernel; tune the model again to tune it",
                    workload.op == "conv2d_winograd_nchwc" ? " (or run with --layout nchwc-direct to apply them)" : "");
      report(name, str("warning: ", name, ": ", why_not, "; using the template default"));
    }
  }
  bool templated = schedule_space::find_template(workload.op, target) != nullptr;
  last_source_ = templated ? "template default" : "default schedule";
  report(name, str("info: ", name, ": ", why_not, "; using the ", last_source_));
  return default_sourced_schedule(workload, op, target);
}

}  // namespace temper::search
