#include "tuning_db/schedule_ranking.h"

#include <algorithm>
#include <map>

#include "compiler/ir/error.h"

namespace temper::tuning_db {

std::string schedule_identity(const TuningRecord& record) {
  return record.trace.dump() + '\n' + record.config.dump();
}

std::vector<RankedSchedule> rank_schedules(const std::vector<TuningRecord>& records, int k) {
  if (k < 0) throw UserError(str("top_k: k must be at least 0, not ", k));
  struct Group {
    std::vector<size_t> valid;  // indices into records
    bool wrong_result = false;
  };
  std::map<std::string, Group> groups;
  for (size_t i = 0; i < records.size(); ++i) {
    const TuningRecord& r = records[i];
    if (!r.is_valid() && r.error != ErrorKind::WrongResult) continue;
    Group& g = groups[schedule_identity(r)];
    if (r.is_valid()) g.valid.push_back(i);
    g.wrong_result = g.wrong_result || r.error == ErrorKind::WrongResult;
  }
  std::vector<std::pair<size_t, int>> medians;  // (index of the median record, measurements)
  for (auto& [identity, g] : groups) {
    if (g.wrong_result || g.valid.empty()) continue;
    std::stable_sort(g.valid.begin(), g.valid.end(),
                     [&](size_t a, size_t b) { return records[a].mean < records[b].mean; });
    medians.emplace_back(g.valid[g.valid.size() / 2], static_cast<int>(g.valid.size()));
  }
  std::sort(medians.begin(), medians.end(), [&](const auto& a, const auto& b) {
    if (records[a.first].mean != records[b.first].mean) return records[a.first].mean < records[b.first].mean;
    return a.first < b.first;
  });
  if (medians.size() > static_cast<size_t>(k)) medians.resize(k);
  std::vector<RankedSchedule> ranked;
  for (const auto& [index, measurements] : medians) ranked.push_back({records[index], measurements});
  return ranked;
}

std::vector<TuningRecord> best_schedules(const std::vector<TuningRecord>& records, int k) {
  std::vector<TuningRecord> best;
  for (RankedSchedule& r : rank_schedules(records, k)) best.push_back(std::move(r.record));
  return best;
}

}  // namespace temper::tuning_db
