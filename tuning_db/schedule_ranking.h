// How a log ranks its schedules. A schedule may be measured more than once: a tuning job
// re-measures its best few at its end (search/tune.h, confirmation), and merged logs may
// both hold it. Its rank is then its median time, not its luckiest draw: a search that
// keeps the fastest of hundreds of noisy measurements otherwise applies whichever
// candidate was timed at a good moment (the winner's curse). A schedule that once gave
// a wrong result is never ranked, however fast its other records.
#pragma once

#include <string>
#include <vector>

#include "tuning_db/record.h"

namespace temper::tuning_db {

struct RankedSchedule {
  TuningRecord record;   // its median valid record (of an even count, the slower middle one)
  int measurements = 0;  // its valid records
};

// What makes two records measurements of one schedule: the same trace and config.
std::string schedule_identity(const TuningRecord& record);

// The at most k fastest schedules among records (one workload on one target, in commit
// order), by their median record; ties in the commit order of those records.
std::vector<RankedSchedule> rank_schedules(const std::vector<TuningRecord>& records, int k);
// rank_schedules' records alone: Database::top_k.
std::vector<TuningRecord> best_schedules(const std::vector<TuningRecord>& records, int k);

}  // namespace temper::tuning_db
