#include "tuning_db/memory_database.h"

#include <algorithm>

#include "compiler/ir/error.h"
#include "tuning_db/schedule_ranking.h"

namespace temper::tuning_db {

void MemoryDatabase::add_workload_locked(const WorkloadKey& workload) {
  if (std::find(workloads_.begin(), workloads_.end(), workload) == workloads_.end()) workloads_.push_back(workload);
}

void MemoryDatabase::commit_workload(const WorkloadKey& workload) {
  std::lock_guard lock(mutex_);
  add_workload_locked(workload);
}

void MemoryDatabase::commit_record(const TuningRecord& record) {
  commit_records({record});
}

void MemoryDatabase::commit_records(const std::vector<TuningRecord>& records) {
  std::lock_guard lock(mutex_);
  for (const TuningRecord& record : records) {
    add_workload_locked(record.workload);
    records_.push_back(record);
  }
}

std::vector<TuningRecord> MemoryDatabase::top_k(const WorkloadKey& workload, const std::string& target, int k) const {
  return best_schedules(records_for(workload, target), k);
}

std::vector<TuningRecord> MemoryDatabase::records_for(const WorkloadKey& workload, const std::string& target) const {
  std::lock_guard lock(mutex_);
  std::vector<TuningRecord> matching;
  for (const TuningRecord& record : records_) {
    if (record.workload.workload == workload.workload && record.target.target == target) matching.push_back(record);
  }
  return matching;
}

std::vector<TuningRecord> MemoryDatabase::all_records() const {
  std::lock_guard lock(mutex_);
  return records_;
}

int64_t MemoryDatabase::size() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(records_.size());
}

std::vector<WorkloadKey> MemoryDatabase::workloads() const {
  std::lock_guard lock(mutex_);
  return workloads_;
}

void MemoryDatabase::commit_probe(const MachineProbe& probe) {
  std::lock_guard lock(mutex_);
  probes_.push_back(probe);
}

std::vector<MachineProbe> MemoryDatabase::probes() const {
  std::lock_guard lock(mutex_);
  return probes_;
}

void MemoryDatabase::commit_sweep_results(const std::vector<SweepResult>& results) {
  std::lock_guard lock(mutex_);
  sweep_results_.insert(sweep_results_.end(), results.begin(), results.end());
}

std::vector<SweepResult> MemoryDatabase::sweep_results() const {
  std::lock_guard lock(mutex_);
  return sweep_results_;
}

void MemoryDatabase::commit_model_choices(const std::vector<ModelChoice>& choices) {
  std::lock_guard lock(mutex_);
  model_choices_.insert(model_choices_.end(), choices.begin(), choices.end());
}

std::vector<ModelChoice> MemoryDatabase::model_choices() const {
  std::lock_guard lock(mutex_);
  return model_choices_;
}

}  // namespace temper::tuning_db
