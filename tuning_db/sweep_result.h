// One contender's time in a benchmark sweep (`temper sweep`): an entry of a suite (a
// workload, or an ONNX model) timed as Temper tuned by the log, Temper's defaults, or a
// baseline (oneDNN, OpenBLAS, onnxruntime, ...), side by side in interleaved rounds on one
// machine. Kept in the tuning log with the machine's fingerprint, so that sweeps of
// several machines merged with `db merge` are compared by `temper report`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuning_db/record.h"

namespace temper::tuning_db {

struct SweepResult {
  std::string sweep;       // the suite's name
  std::string entry;       // the workload string, or the model's path as the suite wrote it
  std::string entry_kind;  // "workload" or "model"
  std::string contender;   // "temper-tuned", "temper-default", or a baseline's name
  TargetInfo machine;      // where it ran
  // "ok": timed; "unavailable": the contender cannot run here (why says what to do);
  // "failed": it ran and failed (why says how).
  std::string status;
  std::string why;
  std::string description;             // what ran: "oneDNN 3.0.0 sgemm", "tuned (3 of 3 ops from the log)"
  double seconds = 0;                  // median of the rounds; 0 unless ok
  std::vector<double> round_seconds;   // per round, in round order
  double flops = 0;                    // per call; 0 where unknown
  int threads = 0;
  // JSON text, "" when there is none. A model's temper-tuned result: its tasks as the build
  // ran them and the log's estimate, {"estimated_ms", "tasks": [{"workload", "count",
  // "best_ms"}]} (best_ms null where the log has no record).
  std::string details;
  int64_t timestamp = 0;  // seconds since the Unix epoch: all of one sweep's results share it
  std::string temper_version;

  bool operator==(const SweepResult&) const = default;
};

}  // namespace temper::tuning_db
