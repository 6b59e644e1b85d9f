#include "cost_model/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "compiler/ir/error.h"
#include "cost_model/cost_model.h"

namespace temper::cost_model {

namespace {

// Candidate indices per group, each in the order given.
std::map<std::string, std::vector<size_t>> by_group(const char* metric, const std::vector<double>& scores,
                                                    const std::vector<double>& costs,
                                                    const std::vector<std::string>& groups) {
  if (scores.size() != costs.size() || costs.size() != groups.size()) {
    throw UserError(str(metric, ": ", scores.size(), " scores, ", costs.size(), " costs and ", groups.size(),
                        " groups; give one of each per candidate"));
  }
  std::map<std::string, std::vector<size_t>> members;
  for (size_t i = 0; i < groups.size(); ++i) members[groups[i]].push_back(i);
  return members;
}

}  // namespace

double pairwise_accuracy(const std::vector<double>& scores, const std::vector<double>& costs,
                         const std::vector<std::string>& groups) {
  double right = 0;
  int64_t counted = 0;
  for (const auto& [group, members] : by_group("pairwise_accuracy", scores, costs, groups)) {
    for (size_t a = 0; a < members.size(); ++a) {
      for (size_t b = a + 1; b < members.size(); ++b) {
        size_t i = members[a];
        size_t j = members[b];
        bool i_failed = is_failed_cost(costs[i]);
        bool j_failed = is_failed_cost(costs[j]);
        if (i_failed && j_failed) continue;
        if (!i_failed && !j_failed && costs[i] == costs[j]) continue;
        bool i_faster = j_failed || (!i_failed && costs[i] < costs[j]);
        size_t faster = i_faster ? i : j;
        size_t slower = i_faster ? j : i;
        if (scores[faster] > scores[slower]) right += 1;
        if (scores[faster] == scores[slower]) right += 0.5;
        ++counted;
      }
    }
  }
  return counted == 0 ? NAN : right / static_cast<double>(counted);
}

double top_k_recall(const std::vector<double>& scores, const std::vector<double>& costs,
                    const std::vector<std::string>& groups, int k) {
  if (k < 1) throw UserError(str("top_k_recall: k must be at least 1, not ", k));
  double recall_sum = 0;
  int counted_groups = 0;
  for (auto [group, members] : by_group("top_k_recall", scores, costs, groups)) {
    std::vector<size_t> fastest;
    for (size_t i : members) {
      if (!is_failed_cost(costs[i])) fastest.push_back(i);
    }
    if (fastest.empty()) continue;
    std::stable_sort(fastest.begin(), fastest.end(), [&](size_t a, size_t b) { return costs[a] < costs[b]; });
    fastest.resize(std::min<size_t>(fastest.size(), k));
    std::stable_sort(members.begin(), members.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    members.resize(std::min<size_t>(members.size(), k));
    auto found = std::count_if(fastest.begin(), fastest.end(),
                               [&](size_t i) { return std::find(members.begin(), members.end(), i) != members.end(); });
    recall_sum += static_cast<double>(found) / static_cast<double>(fastest.size());
    ++counted_groups;
  }
  return counted_groups == 0 ? NAN : recall_sum / counted_groups;
}

}  // namespace temper::cost_model
