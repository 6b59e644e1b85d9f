#include "tuning_db/memory_database.h"

#include <algorithm>

#include "compiler/ir/error.h"

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
  if (k < 0) throw UserError(str("top_k: k must be at least 0, not ", k));
  std::vector<TuningRecord> valid;
  for (const TuningRecord& record : records_for(workload, target)) {
    if (record.is_valid()) valid.push_back(record);
  }
  std::stable_sort(valid.begin(), valid.end(), [](const auto& a, const auto& b) { return a.mean < b.mean; });
  if (valid.size() > static_cast<size_t>(k)) valid.resize(k);
  return valid;
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

}  // namespace temper::tuning_db
