// What `show` and `run` share: a workload string made concrete, and the schedule to apply
// to it — the best record of a tuning log, a trace file, or one of Temper's own (naive,
// default).
#pragma once

#include <string>

#include <boost/program_options.hpp>

#include "compiler/ops/schedule_source.h"
#include "compiler/ops/workload.h"
#include "compiler/schedule/schedule.h"
#include "compiler/target/target.h"

namespace temper::cli {

struct ScheduleChoice {
  std::string db;                    // apply the best record of this tuning log, if set
  std::string trace_file;            // replay this trace, if set
  std::string schedule = "default";  // otherwise: "naive" or "default"
};

// Adds --db, --trace and --schedule to a command's options.
void add_schedule_options(boost::program_options::options_description& desc, ScheduleChoice& choice);

// The scheduled program for the workload (op is its instance) on target, with the template
// config it applies (null for a trace or the naive schedule); UserError for a missing or
// unreadable log, an unreadable or malformed trace file, or an unknown schedule name. With
// a log, one info line on stderr says whether a record or the default was used.
ops::SourcedSchedule make_schedule(const ops::Workload& workload, const ops::OpInstance& op,
                                   const ScheduleChoice& choice, const Target& target);
// What make_schedule applies, in words: "tuned (log F)", "trace F", "default", "naive".
std::string schedule_label(const ScheduleChoice& choice);

}  // namespace temper::cli
