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

namespace {

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
  // The blocked convs are single-group and have one filter per depthwise channel.
  return value(a, "groups", "1") == value(b, "groups", "1") && value(a, "multiplier", "1") == value(b, "multiplier", "1");
}

bool is_conv(const std::string& op) {
  return op == "conv2d" || op == "conv2d_nchwc" || op == "conv2d_winograd_nchwc" || op == "depthwise_conv2d" ||
         op == "depthwise_conv2d_nchwc";
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
