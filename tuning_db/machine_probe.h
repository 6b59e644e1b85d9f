// What a machine can do at most, measured on it (measure/machine_probe.h) and kept in the
// tuning log beside its records: the fp32 and int8 arithmetic peaks and the memory
// bandwidth. A report places each kernel against them (a roofline) and compares machines
// by the share of their own limits a kernel reaches, which raw times cannot do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuning_db/record.h"

namespace temper::tuning_db {

struct MachineProbe {
  TargetInfo machine;        // the fingerprint of the CPU target it ran for, as its records carry it
  int threads = 0;           // the threads measured together
  double fp32_gflops = 0;    // FMA peak, all threads together
  double int8_gops = 0;      // u8 x s8 dot-product peak (VNNI), 2 ops per product; 0 without VNNI
  double bandwidth_gbs = 0;  // memory read bandwidth over an array far larger than the caches
  int64_t timestamp = 0;     // seconds since the Unix epoch
  std::string temper_version;

  bool operator==(const MachineProbe&) const = default;
};

// The newest probe of the machine `machine` names (same_machine: model and features, so
// a log merged from several machines gives each its own), or nullptr.
const MachineProbe* latest_probe_of(const std::vector<MachineProbe>& probes, const TargetInfo& machine);

}  // namespace temper::tuning_db
