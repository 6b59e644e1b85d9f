#include "search/transfer.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include "compiler/ir/error.h"
#include "compiler/ir/text.h"
#include "compiler/ops/workload.h"
#include "search/featurize.h"

namespace temper::search {
namespace {

// Fewer samples than this teach a model less than its first measured batch would.
constexpr int kMinTransferSamples = 16;

// One record chosen for transfer, by where it sits in the log.
struct Pick {
  size_t workload;  // index into the workloads searched
  size_t record;    // index into that workload's records (commit order)
  int64_t timestamp;
};

}  // namespace

TransferSet collect_samples(const tuning_db::Database& db, const std::string& op, const Target& target,
                            const tuning_db::WorkloadKey* exclude, int max_records) {
  const std::string target_key = target.to_string();
  std::vector<tuning_db::WorkloadKey> keys;
  std::vector<std::vector<tuning_db::TuningRecord>> records;
  std::vector<Pick> picks;
  for (const tuning_db::WorkloadKey& key : db.workloads()) {
    if (key.op != op || (exclude && key == *exclude)) continue;
    std::vector<tuning_db::TuningRecord> of_key = db.records_for(key, target_key);
    if (of_key.empty()) continue;
    for (size_t r = 0; r < of_key.size(); ++r) picks.push_back({keys.size(), r, of_key[r].timestamp});
    keys.push_back(key);
    records.push_back(std::move(of_key));
  }
  // The newest records, when there are more than max_records; a later commit of the same
  // second counts as newer.
  if (static_cast<int64_t>(picks.size()) > max_records) {
    std::stable_sort(picks.begin(), picks.end(), [](const Pick& a, const Pick& b) {
      if (a.timestamp != b.timestamp) return a.timestamp > b.timestamp;
      return a.workload != b.workload ? a.workload > b.workload : a.record > b.record;
    });
    picks.resize(std::max(0, max_records));
  }
  std::map<size_t, std::vector<size_t>> chosen;  // workload -> its picked records, in commit order
  for (const Pick& pick : picks) chosen[pick.workload].push_back(pick.record);

  TransferSet out;
  for (auto& [w, indices] : chosen) {
    std::sort(indices.begin(), indices.end());
    std::optional<ops::OpInstance> op;
    std::unique_ptr<schedule_space::Task> task;
    try {
      ops::Workload workload = ops::Workload::parse(keys[w].workload);
      op = ops::instantiate(workload);
      // An op without a template has only trace records (the auto-scheduler's).
      if (schedule_space::find_template(workload.op, target)) task = schedule_space::Task::create(workload, target);
    } catch (const UserError&) {
      // A workload of another Temper.
      out.records_skipped += static_cast<int>(indices.size());
      continue;
    }
    std::vector<const tuning_db::TuningRecord*> sources;
    for (size_t r : indices) sources.push_back(&records[w][r]);
    std::vector<std::vector<float>> features = record_features(*op, task.get(), sources);
    const std::string group = sample_group(keys[w], target_key);
    int usable = 0;
    for (size_t i = 0; i < sources.size(); ++i) {
      if (features[i].empty()) {
        ++out.records_skipped;  // its config or trace no longer applies
        continue;
      }
      const tuning_db::TuningRecord& record = *sources[i];
      double cost = record.is_valid() ? record.mean : std::numeric_limits<double>::infinity();
      if (!record.is_valid()) ++out.failed;
      out.samples.push_back({std::move(features[i]), cost, group});
      ++usable;
    }
    if (usable > 0) ++out.workloads;
  }
  return out;
}

std::unique_ptr<cost_model::CostModel> pretrain_from_log(const tuning_db::Database& db,
                                                         const schedule_space::Task& task,
                                                         const cost_model::ModelOptions& options, std::string* why,
                                                         TransferSet* used) {
  const tuning_db::WorkloadKey own = tuning_db::WorkloadKey::from(task.workload());
  TransferSet set = collect_samples(db, own.op, task.target(), &own);
  const std::string what = str(own.op, " on '", task.target().to_string(), "' for other workloads");

  // Successful samples per group: a group needs two to rank anything but failures.
  std::map<std::string, int> successes;
  for (const cost_model::Sample& s : set.samples) {
    if (!cost_model::is_failed_cost(s.cost)) ++successes[s.group];
  }
  int rankable_groups = 0;
  for (const auto& [group, count] : successes) rankable_groups += count >= 2 ? 1 : 0;

  std::string reason;
  const int n = static_cast<int>(set.samples.size());
  if (n < kMinTransferSamples) {
    reason = str("the log has ", plural(n, "usable record"), " of ", what,
                 set.records_skipped > 0 ? str(" (", set.records_skipped, " more no longer fit the template)") : "",
                 "; transfer needs at least ", kMinTransferSamples);
  } else if (successes.empty()) {
    reason = str("all ", n, " records of ", what, " failed: nothing to learn from");
  } else if (rankable_groups == 0) {
    reason = str("no other workload of ", own.op, " on '", task.target().to_string(),
                 "' has two successful records: nothing to rank");
  }
  std::unique_ptr<cost_model::CostModel> model;
  if (reason.empty()) {
    model = cost_model::make_cost_model("xgb", options);
    model->update(set.samples);
  } else if (why) {
    *why = reason;
  }
  if (used) *used = std::move(set);
  return model;
}

}  // namespace temper::search
