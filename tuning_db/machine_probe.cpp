#include "tuning_db/machine_probe.h"

namespace temper::tuning_db {

const MachineProbe* latest_probe_of(const std::vector<MachineProbe>& probes, const TargetInfo& machine) {
  const MachineProbe* latest = nullptr;
  for (const MachineProbe& p : probes) {
    if (same_machine(p.machine, machine) && (!latest || p.timestamp >= latest->timestamp)) latest = &p;
  }
  return latest;
}

}  // namespace temper::tuning_db
