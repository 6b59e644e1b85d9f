#include "search/mutation.h"

#include <map>

namespace temper::search {
namespace {

using schedule_space::DecisionKind;

// A prime factor of one level moved to another; nullopt when the tile has nothing to move
// or every move would break the innermost bound.
std::optional<std::vector<int64_t>> move_tile_factor(const std::vector<int64_t>& tile, int64_t max_innermost,
                                                     std::mt19937_64& rng) {
  const size_t n = tile.size();
  if (n < 2) return std::nullopt;
  for (int attempt = 0; attempt < 8; ++attempt) {
    size_t from = rng() % n;
    if (tile[from] == 1) continue;
    std::vector<int64_t> primes = prime_factors(tile[from]);
    int64_t p = primes[rng() % primes.size()];
    size_t to = (from + 1 + rng() % (n - 1)) % n;
    std::vector<int64_t> next = tile;
    next[from] /= p;
    next[to] *= p;
    if (next.back() <= max_innermost) return next;
  }
  return std::nullopt;
}

}  // namespace

std::optional<schedule_space::Decisions> mutate(const schedule_space::AutoCandidate& candidate,
                                                const MutationWeights& weights, std::mt19937_64& rng) {
  // The sampling instructions of the trace, by kind.
  std::vector<const Instruction*> sampling;
  for (const Instruction& inst : candidate.schedule.trace().instructions()) {
    if (inst.decision) sampling.push_back(&inst);
  }
  TEMPER_CHECK(sampling.size() == candidate.kinds.size(), "a candidate has ", sampling.size(), " draws and ",
               candidate.kinds.size(), " decision kinds");
  std::map<DecisionKind, std::vector<size_t>> by_kind;
  for (size_t k = 0; k < sampling.size(); ++k) {
    const Instruction& inst = *sampling[k];
    // Only decisions with an alternative.
    bool changeable = inst.kind == InstKind::SamplePerfectTile ? inst.decision->size() > 1
                                                               : inst.attrs[0].size() > 1;
    if (changeable) by_kind[candidate.kinds[k]].push_back(k);
  }
  const std::map<DecisionKind, double> weight = {{DecisionKind::TileSize, weights.tile_size},
                                                 {DecisionKind::ComputeLocation, weights.compute_location},
                                                 {DecisionKind::Parallel, weights.parallel},
                                                 {DecisionKind::Unroll, weights.unroll},
                                                 {DecisionKind::ThreadExtent, weights.thread_extent}};
  schedule_space::Decisions decisions = candidate.decisions();
  for (int attempt = 0; attempt < 8 && !by_kind.empty(); ++attempt) {
    double total = 0;
    for (const auto& [kind, indices] : by_kind) total += weight.at(kind);
    if (total <= 0) return std::nullopt;
    double u = std::uniform_real_distribution<double>(0, total)(rng);
    auto it = by_kind.begin();
    for (; std::next(it) != by_kind.end() && u >= weight.at(it->first); ++it) u -= weight.at(it->first);
    size_t k = it->second[rng() % it->second.size()];
    const Instruction& inst = *sampling[k];
    if (inst.kind == InstKind::SamplePerfectTile) {
      std::optional<std::vector<int64_t>> tile = move_tile_factor(*inst.decision, inst.attrs[1].get<int64_t>(), rng);
      if (!tile) continue;
      decisions[k] = *tile;
    } else {
      int64_t n = static_cast<int64_t>(inst.attrs[0].size());
      int64_t now = inst.decision->at(0);
      decisions[k] = std::vector<int64_t>{(now + 1 + static_cast<int64_t>(rng() % (n - 1))) % n};
    }
    return decisions;
  }
  return std::nullopt;
}

}  // namespace temper::search
