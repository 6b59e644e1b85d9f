#include "tuning_db/merge.h"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "compiler/ir/error.h"
#include "tuning_db/record_check.h"

namespace temper::tuning_db {

namespace {

// The fields that make a measurement, as one string: equal strings, same measurement.
// Costs print exactly (nlohmann::json writes the shortest round-trip form).
std::string measurement_key(const TuningRecord& r) {
  const TargetInfo& t = r.target;
  return nlohmann::json::array({r.workload.workload, t.target, t.cpu_model, t.cpu_features, t.cores, t.compiler,
                                t.device, r.trace, r.timestamp, r.costs})
      .dump();
}

}  // namespace

bool same_measurement(const TuningRecord& a, const TuningRecord& b) {
  return measurement_key(a) == measurement_key(b);
}

MergeResult add_new_records(Database& into, const std::vector<TuningRecord>& records, const RecordCheck& also) {
  std::unordered_set<std::string> present;
  for (const TuningRecord& record : into.all_records()) present.insert(measurement_key(record));
  MergeResult result;
  std::vector<TuningRecord> fresh;
  for (size_t i = 0; i < records.size(); ++i) {
    const TuningRecord& record = records[i];
    std::string key = measurement_key(record);
    if (present.count(key)) {
      ++result.skipped;
      continue;
    }
    std::string why = implausible_record(record);
    if (why.empty() && also) why = also(record);
    if (!why.empty()) {
      result.refused.push_back(str("record ", i + 1, ": ", why));
      continue;
    }
    present.insert(std::move(key));
    fresh.push_back(record);
  }
  into.commit_records(fresh);
  result.added = static_cast<int64_t>(fresh.size());
  return result;
}

int64_t add_new_probes(Database& into, const std::vector<MachineProbe>& probes) {
  std::vector<MachineProbe> present = into.probes();
  int64_t added = 0;
  for (const MachineProbe& probe : probes) {
    if (std::find(present.begin(), present.end(), probe) != present.end()) continue;
    into.commit_probe(probe);
    present.push_back(probe);
    ++added;
  }
  return added;
}

int64_t add_new_sweep_results(Database& into, const std::vector<SweepResult>& results) {
  std::vector<SweepResult> present = into.sweep_results();
  std::vector<SweepResult> fresh;
  for (const SweepResult& r : results) {
    if (std::find(present.begin(), present.end(), r) != present.end()) continue;
    if (std::find(fresh.begin(), fresh.end(), r) != fresh.end()) continue;
    fresh.push_back(r);
  }
  if (!fresh.empty()) into.commit_sweep_results(fresh);
  return static_cast<int64_t>(fresh.size());
}

}  // namespace temper::tuning_db
