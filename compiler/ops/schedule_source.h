// Where a build gets each workload's schedule. The compiler core knows nothing of tuning:
// it asks a ScheduleSource, and the tuning stack's ApplyHistoryBest (search/) answers from
// the log, falling back to the template's default.
#pragma once

#include <string>

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
};

}  // namespace temper::ops
