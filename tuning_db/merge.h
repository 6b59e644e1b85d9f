// Adding records to a log without adding them twice: what `temper db merge` and
// `temper db import` do, so that merging a log again, or importing a file twice,
// leaves the log as it was.
//
// Two records are the same measurement when they have the same workload, the same target
// (its string and its whole hardware fingerprint), the same trace, the same time stamp and
// the same costs: a search that measures a schedule again makes a new record, a copy of a
// log repeats the old one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tuning_db/database.h"

namespace temper::tuning_db {

struct MergeResult {
  int64_t added = 0;
  int64_t skipped = 0;  // already in the log, or repeated within the records given
  // Records not added because they are not plausible measurements (record_check.h):
  // "record N: why", N counting the records given from 1.
  std::vector<std::string> refused;
};

bool same_measurement(const TuningRecord& a, const TuningRecord& b);

// Why a record should not be added (a check this library cannot make itself, such as
// replaying its schedule: search/record_replay_check.h), or "".
using RecordCheck = std::function<std::string(const TuningRecord&)>;

// Commits, in one transaction and in the order given, the records that are plausible
// measurements (implausible_record), pass also (when given), and are not the same
// measurement as one already in `into` or one before them in `records`. Records already
// there are skipped before they are checked.
MergeResult add_new_records(Database& into, const std::vector<TuningRecord>& records, const RecordCheck& also = {});

// Commits the probes `into` does not hold already (an equal MachineProbe); returns how many.
int64_t add_new_probes(Database& into, const std::vector<MachineProbe>& probes);
// The same for sweep results.
int64_t add_new_sweep_results(Database& into, const std::vector<SweepResult>& results);
// The same for model choices.
int64_t add_new_model_choices(Database& into, const std::vector<ModelChoice>& choices);

}  // namespace temper::tuning_db
