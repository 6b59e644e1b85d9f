// A machine probe for the tuning log (tuning_db/machine_probe.h): what `temper db probe`
// does, and what `temper tune --report` does once per log and machine so that its page
// can draw the roofline.
#pragma once

#include <iosfwd>

#include "compiler/target/target.h"
#include "tuning_db/database.h"

namespace temper::cli {

// UserError unless target is a CPU (llvm) target: the probe measures the CPU.
void check_probe_target(const Target& target);

// Measures this machine's limits on `threads` threads (0: one per core) -- a few seconds
// -- commits them as the probe of target's fingerprint, and says so on `out`.
tuning_db::MachineProbe probe_into_log(tuning_db::Database& log, const Target& target, int threads, std::ostream& out);

// Whether the log holds a probe of this machine (any target string).
bool log_has_probe_of_this_machine(const tuning_db::Database& log, const Target& target);

}  // namespace temper::cli
