// A candidate's recipe (MeasureInput::recipe): what another process needs, beside the
// workload and target, to rebuild the scheduled PrimFuncs a proposal is measured as -- its
// config (null for a search's own trace), its trace, and whether the config packs an input
// ahead of time (Explorer::prepacked). The builder's compile workers rebuild candidates
// from it (measure/compile_pool.h), as a build rebuilds a record's schedule
// (schedule_from_record).
//
//   {"config": {...} | null, "trace": {...}, "prepacked": false}
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "compiler/ir/ir.h"
#include "compiler/ops/workload.h"
#include "compiler/target/target.h"

namespace temper::search {

std::string candidate_recipe(const nlohmann::json& config, const nlohmann::json& trace, bool prepacked);

struct RebuiltCandidate {
  PrimFunc func;                 // MeasureInput::func
  std::optional<PrimFunc> pack;  // MeasureInput::pack, with a prepacked recipe
  int packed_input = -1;
};

// The candidate of recipe for workload on target. UserError (ScheduleError among them) for
// a malformed recipe or one that does not fit the workload.
RebuiltCandidate rebuild_candidate(const ops::Workload& workload, const Target& target, const std::string& recipe);

}  // namespace temper::search
