// Where a build gets each workload's schedule. The compiler core knows nothing of tuning:
// it asks a ScheduleSource, and the tuning stack's ApplyHistoryBest (search/) answers from
// the log, falling back to the template's default.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "compiler/ops/workload.h"
#include "compiler/schedule/schedule.h"
#include "compiler/target/target.h"

namespace temper::ops {

// A source's answer: the schedule, and the template config (its JSON) it applies -- null
// when it applies none (a replayed trace, a hand-written schedule). A model build
// re-applies the config to pack a constant weight once (schedule_space::Task::
// apply_prepacked); the two travel together so that no wrapper of a source can drop the
// config and leave the model packing its weights on every run.
struct SourcedSchedule {
  Schedule schedule;
  nlohmann::json config;
};

class ScheduleSource {
 public:
  virtual ~ScheduleSource() = default;
  // The scheduled program for op (the instance of workload) on target. Its PrimFunc takes
  // op's parameters in order.
  virtual SourcedSchedule schedule_for(const Workload& workload, const OpInstance& op, const Target& target) = 0;
};

}  // namespace temper::ops
