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

class ScheduleSource {
 public:
  virtual ~ScheduleSource() = default;
  // The scheduled program for op (the instance of workload) on target. Its PrimFunc takes
  // op's parameters in order.
  virtual Schedule schedule_for(const Workload& workload, const OpInstance& op, const Target& target) = 0;
  // The template config (its JSON) the last schedule_for applied; null when it applied
  // none (a replayed trace, a hand-written schedule). A model build re-applies it to pack
  // a constant weight once (schedule_space::Task::apply_prepacked).
  virtual nlohmann::json last_config() const { return nullptr; }
};

}  // namespace temper::ops
