// What `show` and `run` share: a workload string made concrete, and the schedule to apply
// to it — a trace file, or one of Temper's own (naive, default).
#pragma once

#include <optional>
#include <string>

#include <boost/program_options.hpp>

#include "compiler/ops/workload.h"
#include "compiler/schedule/schedule.h"
#include "compiler/target/target.h"

namespace temper::cli {

struct ScheduleChoice {
  std::string trace_file;        // replay this trace, if set
  std::string schedule = "default";  // otherwise: "naive" or "default"
};

// Adds --trace and --schedule to a command's options.
void add_schedule_options(boost::program_options::options_description& desc, ScheduleChoice& choice);

// The scheduled program for the workload on target; UserError for an unreadable or malformed trace
// file, or an unknown schedule name.
Schedule make_schedule(const ops::OpInstance& op, const ScheduleChoice& choice, const Target& target);

// Parses argv-style args against desc with one positional WORKLOAD; prints help and
// returns false when --help was given.
bool parse_command_line(const std::vector<std::string>& args, const std::string& usage,
                        boost::program_options::options_description& desc, std::string& workload);

}  // namespace temper::cli
