#include "cli/probe_machine.h"

#include <algorithm>
#include <ostream>

#include "compiler/ir/error.h"
#include "measure/machine_probe.h"

namespace temper::cli {

void check_probe_target(const Target& target) {
  if (target.kind != Target::Kind::LLVM) {
    throw UserError(str("a machine probe measures the CPU, for an llvm target, not ", target.to_string(),
                        ": pass --target llvm (or leave it out)"));
  }
}

tuning_db::MachineProbe probe_into_log(tuning_db::Database& log, const Target& target, int threads, std::ostream& out) {
  check_probe_target(target);
  tuning_db::MachineProbe probe;
  probe.machine = tuning_db::host_target_info(target);
  if (threads <= 0) threads = std::max(1, probe.machine.cores);
  measure::MachineLimits limits = measure::probe_machine(threads);
  probe.threads = limits.threads;
  probe.fp32_gflops = limits.fp32_gflops;
  probe.int8_gops = limits.int8_gops;
  probe.bandwidth_gbs = limits.bandwidth_gbs;
  probe.timestamp = tuning_db::now_timestamp();
  probe.temper_version = tuning_db::temper_version();
  log.commit_probe(probe);
  out << "machine probe, " << threads << (threads == 1 ? " thread" : " threads") << ": fp32 FMA peak "
      << static_cast<int64_t>(probe.fp32_gflops + 0.5) << " GFLOP/s, int8 dot-product peak "
      << (probe.int8_gops > 0 ? str(static_cast<int64_t>(probe.int8_gops + 0.5), " GOP/s") : std::string("- (no VNNI)"))
      << ", memory bandwidth " << static_cast<int64_t>(probe.bandwidth_gbs + 0.5) << " GB/s\n";
  return probe;
}

bool log_has_probe_of_this_machine(const tuning_db::Database& log, const Target& target) {
  return tuning_db::latest_probe_of(log.probes(), tuning_db::host_target_info(target)) != nullptr;
}

}  // namespace temper::cli
