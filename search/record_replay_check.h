// The check of a record against its workload that needs the compiler: a record `temper db
// import` or `merge` adds must stand for a schedule that still exists. A valid record's
// config (through the workload's template) or trace (replayed on the op) must give a
// schedule of its workload for its target (schedule_from_record, as a build applies it),
// and that schedule must lower: a record that does not would only be skipped by every
// build, after crowding out the ones that replay. Failed records are kept as they are
// (they tell the tuners what not to try), and so are records of an op this Temper does
// not know.
#pragma once

#include <string>

#include "tuning_db/record.h"

namespace temper::search {

// Why record's schedule does not replay and lower, or "" when it does (or is not checked).
std::string record_does_not_replay(const tuning_db::TuningRecord& record);

}  // namespace temper::search
