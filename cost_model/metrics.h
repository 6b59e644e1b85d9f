// How well a model's scores rank measured candidates: what `temper model eval` and the
// cost-model benchmark report.
//
// Both take one score (higher = predicted faster) and one cost (seconds) per candidate,
// and a group per candidate; pairs and top-k are formed within a group only. Failed
// candidates (cost +inf, NaN, <= 0) are slower than every successful one, and pairs of
// two failures or of equal cost are not counted. The three lists must have one entry
// per candidate (UserError otherwise).
#pragma once

#include <string>
#include <vector>

namespace temper::cost_model {

// Share of the counted pairs whose order the scores get right (ties in score count
// half). NaN when no pair is counted.
double pairwise_accuracy(const std::vector<double>& scores, const std::vector<double>& costs,
                         const std::vector<std::string>& groups);

// Per group: of the k truly fastest successful candidates (all of them when fewer), the
// share found among the k best scored ones; averaged over the groups with at least one
// success. Ties in cost or score are broken by the order given. NaN when no group has a
// success; UserError for k < 1.
double top_k_recall(const std::vector<double>& scores, const std::vector<double>& costs,
                    const std::vector<std::string>& groups, int k);

}  // namespace temper::cost_model
