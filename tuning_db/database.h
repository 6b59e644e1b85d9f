// The tuning log's interface (after MetaSchedule's database.h): commit what was measured,
// ask for the fastest valid records of a (workload, target). Two implementations:
// SQLiteDatabase (the real, shared, crash-safe file) and MemoryDatabase (for tests).
//
// Records are matched to a target by its target string; the hardware fingerprint is
// stored with each record. A build's choice of record also matches the fingerprint
// (search/apply_history_best.h: best_records), so that the records of another CPU in a
// merged log are not applied as if measured here. Records are never updated or deleted
// through this interface.
#pragma once

#include <cstdint>
#include <vector>

#include "tuning_db/machine_probe.h"
#include "tuning_db/model_choice.h"
#include "tuning_db/record.h"
#include "tuning_db/sweep_result.h"

namespace temper::tuning_db {

class Database {
 public:
  virtual ~Database() = default;

  // Makes the workload known to the log (committing a record does this too). Idempotent.
  virtual void commit_workload(const WorkloadKey& workload) = 0;
  virtual void commit_record(const TuningRecord& record) = 0;
  // All or none: the records land in one transaction.
  virtual void commit_records(const std::vector<TuningRecord>& records) = 0;

  // The at most k fastest schedules of workload on target, each as its median valid
  // record (TuningRecord::is_valid), by rank_schedules (schedule_ranking.h): a schedule
  // measured several times ranks by its median, and one that ever gave a wrong result
  // not at all.
  virtual std::vector<TuningRecord> top_k(const WorkloadKey& workload, const std::string& target, int k) const = 0;
  // Every record of workload on target, failed ones included, in commit order: what a
  // resumed search must not measure again.
  virtual std::vector<TuningRecord> records_for(const WorkloadKey& workload, const std::string& target) const = 0;
  // Every record in the log, in commit order.
  virtual std::vector<TuningRecord> all_records() const = 0;
  // The number of records, failed ones included.
  virtual int64_t size() const = 0;
  // The workloads the log knows, in the order they were first committed.
  virtual std::vector<WorkloadKey> workloads() const = 0;

  // Machine probes (machine_probe.h), kept like records: never replaced, a machine probed
  // again has several and latest_probe_of picks the newest. probes() in commit order.
  virtual void commit_probe(const MachineProbe& probe) = 0;
  virtual std::vector<MachineProbe> probes() const = 0;

  // Benchmark sweep results (sweep_result.h), kept like records; all or none per call.
  virtual void commit_sweep_results(const std::vector<SweepResult>& results) = 0;
  virtual std::vector<SweepResult> sweep_results() const = 0;  // in commit order

  // Schedules chosen inside a model (model_choice.h), kept like records: never replaced;
  // all or none per call. model_choices() in commit order.
  virtual void commit_model_choices(const std::vector<ModelChoice>& choices) = 0;
  virtual std::vector<ModelChoice> model_choices() const = 0;
};

}  // namespace temper::tuning_db
