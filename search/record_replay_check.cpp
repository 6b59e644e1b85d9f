#include "search/record_replay_check.h"

#include <optional>

#include "compiler/ir/error.h"
#include "compiler/ir/text.h"
#include "compiler/lower/lower.h"
#include "compiler/ops/workload.h"
#include "compiler/schedule/trace.h"
#include "compiler/target/target.h"
#include "schedule_space/template.h"

namespace temper::search {

RecordReplayCheck::RecordReplayCheck() = default;
RecordReplayCheck::~RecordReplayCheck() = default;

std::string RecordReplayCheck::operator()(const tuning_db::TuningRecord& record) {
  if (!record.is_valid()) return "";
  std::optional<ops::Workload> workload;
  std::optional<ops::OpInstance> op;
  try {
    workload.emplace(ops::Workload::parse(record.workload.workload));
    op.emplace(ops::instantiate(*workload));
  } catch (const UserError&) {
    return "";  // an op of another Temper version
  }
  std::optional<Target> target;
  try {
    target.emplace(Target::parse(record.target.target));
  } catch (const UserError& e) {
    return str("its target '", record.target.target, "' is not a target (", e.what(), ")");
  }
  bool templated = !record.config.is_null() && schedule_space::find_template(workload->op, *target);
  try {
    std::optional<Schedule> schedule;
    if (templated) {
      std::shared_ptr<schedule_space::Task>& task = tasks_[workload->to_string() + "\n" + target->to_string()];
      if (!task) task = schedule_space::Task::create(*workload, *target);
      schedule.emplace(task->apply(task->space().from_json(record.config)));
    } else {
      schedule.emplace(Trace::from_json(record.trace).replay(op->func));
    }
    lower(schedule->func());
  } catch (const std::exception& e) {
    return str("its ", templated ? "config" : "trace", " does not give a schedule of ", record.workload.workload,
               " for ", record.target.target, " that lowers (", e.what(), ")");
  }
  return "";
}

}  // namespace temper::search
