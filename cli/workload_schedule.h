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
#include "search/apply_history_best.h"

namespace temper::cli {

// --any-machine: a build applies the log's records of other machines too, where this one
// has none (search::MachineMatch); without it, only this machine's.
void add_machine_option(boost::program_options::options_description& desc, bool& any_machine);
search::MachineMatch machine_match(bool any_machine);

struct ScheduleChoice {
  std::string db;                    // apply the best record of this tuning log, if set
  bool any_machine = false;          // with db: records of other machines too
  std::string trace_file;            // replay this trace, if set
  std::string schedule = "default";  // otherwise: "naive" or "default"
};

// Adds --db, --any-machine, --trace and --schedule to a command's options.
void add_schedule_options(boost::program_options::options_description& desc, ScheduleChoice& choice);

// The scheduled program for the workload (op is its instance) on target, with the template
// config it applies (null for a trace or the naive schedule), and what it is in words:
// "tuned (log F)", "template default (log F has no record that applies)", "trace F",
// "default", "naive". UserError for a missing or unreadable log, an unreadable or
// malformed trace file, or an unknown schedule name. With a log, one info line on stderr
// says whether a record or the default was used.
struct ChosenSchedule {
  ops::SourcedSchedule sourced;
  std::string label;
  bool from_log = false;  // a record of the log, not a default in its place
};
ChosenSchedule make_schedule(const ops::Workload& workload, const ops::OpInstance& op, const ScheduleChoice& choice,
                             const Target& target);

}  // namespace temper::cli
