// Transfer learning from the log: the records of other workloads of the same op on the
// same target teach a cost model before the first measurement of a new workload (AutoTVM's
// load_history for XGBTuner).
#pragma once

#include <string>
#include <vector>

#include "cost_model/cost_model.h"
#include "schedule_space/template.h"
#include "tuning_db/database.h"

namespace temper::search {

struct TransferSet {
  std::vector<cost_model::Sample> samples;  // one group per workload
  int workloads = 0;                        // workloads that gave at least one usable sample
  int records_skipped = 0;  // records whose config or trace no longer applies
  int failed = 0;           // failed records among the samples
};

// Samples from the records of db for `op` on `target` (target string as the log keys it),
// except those of `exclude` (the workload being tuned, if any), at most max_records of them
// (the newest). Each record is featurized (featurize.h: a template's config re-applied, an
// auto-scheduler's trace replayed); a record that no longer applies is skipped and counted.
TransferSet collect_samples(const tuning_db::Database& db, const std::string& op, const Target& target,
                            const tuning_db::WorkloadKey* exclude = nullptr, int max_records = 20000);

// What tune --transfer needs: "xgb" model trained on collect_samples for the task's op,
// or nullptr with *why set when the log has nothing usable (too few records, or only
// failures): the caller then tunes with an untrained model and says why.
std::unique_ptr<cost_model::CostModel> pretrain_from_log(const tuning_db::Database& db,
                                                         const schedule_space::Task& task,
                                                         const cost_model::ModelOptions& options, std::string* why,
                                                         TransferSet* used = nullptr);

}  // namespace temper::search
