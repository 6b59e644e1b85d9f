// The value types of the tuning log: what was tuned (WorkloadKey), where (TargetInfo),
// and what one measurement found (TuningRecord). They carry no behaviour beyond
// validity and JSON conversion, so that every Database implementation, the JSON-lines
// files and the tuners pass the same plain data around.
//
// A record stores a replayable schedule trace (and the knob config that produced it),
// never generated code, so a log stays meaningful across compiler versions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/target/target.h"

namespace temper::ops {
struct Workload;
}

namespace temper::tuning_db {

// A workload as the log keys it: its op and its canonical string (ops::Workload::to_string()),
// so that two spellings of one workload share their records.
struct WorkloadKey {
  std::string op;
  std::string workload;

  static WorkloadKey from(const ops::Workload& workload);
  bool operator==(const WorkloadKey&) const = default;
};

// A target as the log keys it: the target string (Target::to_string()) is what the
// best-record query matches; the hardware fingerprint beside it says on which machine,
// device and with which compiler the times were taken, so a reader can tell logs apart.
struct TargetInfo {
  std::string target;
  std::string cpu_model;     // /proc/cpuinfo "model name"
  std::string cpu_features;  // /proc/cpuinfo "flags", as listed there
  int cores = 0;             // online logical CPUs
  std::string compiler;      // "LLVM 19.1.7" for the LLVM target, `cc --version`'s first line for C, "" for GPUs
  // GPU targets: the device the times were taken on, GpuDeviceInfo::fingerprint() ("NVIDIA
  // H200 | 13.0 | sm_90": name, driver, compute capability or OpenCL version). "" for CPU
  // targets, and in records of logs older than the field.
  std::string device;

  bool operator==(const TargetInfo&) const = default;
};

// The fingerprint of this machine for `target`; for a GPU target, of the device it names
// too (opened once per target string and process). Fields that cannot be read (no
// /proc/cpuinfo, no `cc`, no device) are left empty rather than failing: the fingerprint
// informs, it does not gate.
TargetInfo host_target_info(const Target& target);

// Whether two fingerprints are of one kind of machine: the same CPU model and features,
// and the same GPU device (name, driver, compute capability). Core counts and compiler
// versions may differ. A build applies the records of this machine (search's best_records).
bool same_machine(const TargetInfo& a, const TargetInfo& b);

// A fingerprint in words: device, CPU model, cores, compiler, and the SIMD features among
// its /proc/cpuinfo flags (what decides which code a target's schedules make).
std::string describe_machine(const TargetInfo& target);

// Why a measurement produced no time. Stored by name, so the order here may change.
enum class ErrorKind { None, CompileError, CompileTimeout, RuntimeError, RunTimeout, WrongResult, InstantiationError };

const char* error_kind_name(ErrorKind kind);
// Inverse of error_kind_name; UserError for an unknown name.
ErrorKind parse_error_kind(const std::string& name);

struct TuningRecord {
  WorkloadKey workload;
  TargetInfo target;
  nlohmann::json trace;       // the schedule trace (schedule/trace.h JSON)
  nlohmann::json config;      // the knob config the trace came from; null when a search made the trace directly
  // The search that proposed it: a template's tuner (random, grid, ga, xgb) for a config,
  // the cost model guiding the auto-scheduler (xgb, random) for a trace; "" in a log of
  // a Temper before schema 6 and in an export without the field.
  std::string tuner;
  std::vector<double> costs;  // seconds per run, one per repeat
  double mean = 0;            // seconds; meaningless unless error == None
  ErrorKind error = ErrorKind::None;
  std::string error_message;
  int64_t timestamp = 0;  // seconds since the Unix epoch
  std::string temper_version;

  // Measured without error and with a finite, positive mean: a record a build may apply.
  bool is_valid() const;
  bool operator==(const TuningRecord&) const = default;
};

// The Temper version records are stamped with ("0.1.0").
const char* temper_version();
// Seconds since the Unix epoch, for TuningRecord::timestamp.
int64_t now_timestamp();

// One record as a JSON object (a non-finite mean becomes null), and back; from_json
// throws UserError naming the missing or mistyped field. A target without "device" (an
// export of an older Temper) reads as a CPU target's, with device ""; a record without
// "tuner", as one whose tuner is not known ("").
nlohmann::json record_to_json(const TuningRecord& record);
TuningRecord record_from_json(const nlohmann::json& json);

}  // namespace temper::tuning_db
