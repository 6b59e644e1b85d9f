// A Database held in memory, for tests and for callers that need no file. Thread-safe;
// gone when destroyed.
#pragma once

#include <mutex>

#include "tuning_db/database.h"

namespace temper::tuning_db {

class MemoryDatabase : public Database {
 public:
  void commit_workload(const WorkloadKey& workload) override;
  void commit_record(const TuningRecord& record) override;
  void commit_records(const std::vector<TuningRecord>& records) override;
  std::vector<TuningRecord> top_k(const WorkloadKey& workload, const std::string& target, int k) const override;
  std::vector<TuningRecord> records_for(const WorkloadKey& workload, const std::string& target) const override;
  std::vector<TuningRecord> all_records() const override;
  int64_t size() const override;
  std::vector<WorkloadKey> workloads() const override;
  void commit_probe(const MachineProbe& probe) override;
  std::vector<MachineProbe> probes() const override;
  void commit_sweep_results(const std::vector<SweepResult>& results) override;
  std::vector<SweepResult> sweep_results() const override;
  void commit_model_choices(const std::vector<ModelChoice>& choices) override;
  std::vector<ModelChoice> model_choices() const override;

 private:
  void add_workload_locked(const WorkloadKey& workload);

  mutable std::mutex mutex_;
  std::vector<WorkloadKey> workloads_;
  std::vector<TuningRecord> records_;
  std::vector<MachineProbe> probes_;
  std::vector<SweepResult> sweep_results_;
  std::vector<ModelChoice> model_choices_;
};

}  // namespace temper::tuning_db
