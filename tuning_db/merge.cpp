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

// What `items` holds that `present` does not, each once, in order: a probe, sweep result
// or model choice is carried as a whole, never repeated.
template <typename T>
std::vector<T> not_present(std::vector<T> present, const std::vector<T>& items) {
  std::vector<T> fresh;
  for (const T& item : items) {
    if (std::find(present.begin(), present.end(), item) != present.end()) continue;
    present.push_back(item);
    fresh.push_back(item);
  }
  return fresh;
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
  std::vector<MachineProbe> fresh = not_present(into.probes(), probes);
  for (const MachineProbe& probe : fresh) into.commit_probe(probe);
  return static_cast<int64_t>(fresh.size());
}

int64_t add_new_sweep_results(Database& into, const std::vector<SweepResult>& results) {
  std::vector<SweepResult> fresh = not_present(into.sweep_results(), results);
  if (!fresh.empty()) into.commit_sweep_results(fresh);
  return static_cast<int64_t>(fresh.size());
}

int64_t add_new_model_choices(Database& into, const std::vector<ModelChoice>& choices) {
  std::vector<ModelChoice> fresh = not_present(into.model_choices(), choices);
  if (!fresh.empty()) into.commit_model_choices(fresh);
  return static_cast<int64_t>(fresh.size());
}

}  // namespace temper::tuning_db
