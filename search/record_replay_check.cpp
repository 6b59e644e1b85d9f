#include "search/record_replay_check.h"

#include <optional>

#include "compiler/ir/error.h"
#include "compiler/ir/text.h"
#include "compiler/lower/lower.h"
#include "compiler/ops/workload.h"
#include "compiler/target/target.h"
#include "schedule_space/template.h"
#include "search/apply_history_best.h"

namespace temper::search {

std::string record_does_not_replay(const tuning_db::TuningRecord& record) {
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
  try {
    lower(schedule_from_record(record, *workload, *op, *target).func());
  } catch (const std::exception& e) {
    bool templated = !record.config.is_null() && schedule_space::find_template(workload->op, *target);
    return str("its ", templated ? "config" : "trace", " does not give a schedule of ", record.workload.workload,
               " for ", record.target.target, " that lowers (", e.what(), ")");
  }
  return "";
}

}  // namespace temper::search
