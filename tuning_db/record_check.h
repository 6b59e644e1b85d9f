// Whether a record from elsewhere (a JSON-lines file, another log) can be trusted as a
// measurement before `temper db import` or `merge` adds it to a log: a build applies the
// fastest record of a workload, so one made-up or damaged fast record would decide what
// every later build runs.
//
// What is checked, none of it needing the machine the record names:
//  - the workload parses, as the op the record says (an op this Temper does not know is
//    taken as it is: a log of a newer or older Temper may hold one);
//  - the trace is a schedule trace (Trace::from_json);
//  - a valid record's costs are finite and positive, with its mean among them (the runner
//    stores the mean of its timed groups), and a failed one has no mean;
//  - a valid record's speed is below what its machine could reach: the workload's FLOPs
//    per second under its fingerprint's cores times a bound no CPU core exceeds (two
//    512-bit FMA pipes at 6 GHz), times four for algorithms that do fewer FLOPs than they
//    are credited (Winograd); for a GPU fingerprint, 2 PFLOP/s.
#pragma once

#include <functional>
#include <string>

#include "tuning_db/record.h"

namespace temper::tuning_db {

// The FLOP/s no core of a CPU reaches, and no GPU, as the checks above count them.
double cpu_core_flops_bound();
double gpu_flops_bound();

// Why record is not a plausible measurement, or "" when it is.
std::string implausible_record(const TuningRecord& record);

// For a valid record measured on this machine (same_machine with here): why its speed is
// beyond this machine's measured fp32 FMA peak (FLOP/s, all cores; peak_flops is asked
// for it only for such a record), times four for FLOPs credited but not done, or "". The
// bound of implausible_record holds for any CPU; this one is the roofline of the machine
// the record says it was measured on.
std::string faster_than_this_machine(const TuningRecord& record, const TargetInfo& here,
                                     const std::function<double()>& peak_flops);

}  // namespace temper::tuning_db
