#include <algorithm>
#include <cmath>
#include <optional>

#include "search/tuners.h"

namespace temper::search {
namespace {
// Children that repeat a visited config are redrawn this many times before a random
// config takes their place.
constexpr int kChildAttempts = 50;
}  // namespace

GATuner::GATuner(const schedule_space::ConfigSpace& space, uint64_t seed, int population, int elites,
                 double mutation_prob)
    : Tuner(space), rng_(seed), population_(population), elites_(elites), mutation_prob_(mutation_prob) {}

std::vector<schedule_space::Config> GATuner::next_batch(int n) {
  std::vector<schedule_space::Config> batch;
  while (static_cast<int>(batch.size()) < n && !exhausted_) {
    if (pending_.empty()) breed();
    if (pending_.empty()) {
      exhausted_ = true;
      break;
    }
    schedule_space::Config c = pending_.back();
    pending_.pop_back();
    if (visited(c)) continue;
    mark_visited(c);
    batch.push_back(c);
  }
  return batch;
}

void GATuner::update(const std::vector<schedule_space::Config>& configs, const std::vector<double>& costs) {
  for (size_t i = 0; i < configs.size(); ++i) {
    double fitness = std::isfinite(costs[i]) && costs[i] > 0 ? 1.0 / costs[i] : 0.0;
    scored_.emplace_back(configs[i].choices(), fitness);
  }
}

std::vector<int64_t> GATuner::child(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> genes(a.size());
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  for (size_t k = 0; k < genes.size(); ++k) {
    genes[k] = coin(rng_) < 0.5 ? a[k] : b[k];
    if (coin(rng_) < mutation_prob_) {
      int64_t choices = static_cast<int64_t>(space_.knobs()[k].choices.size());
      genes[k] = std::uniform_int_distribution<int64_t>(0, choices - 1)(rng_);
    }
  }
  return genes;
}

// The next generation: the first is random; later ones keep nothing of the measured
// configs but their genes -- parents are drawn with probability proportional to fitness
// from the best `population_` so far, the elites among them always breeding.
void GATuner::breed() {
  std::vector<std::pair<std::vector<int64_t>, double>> parents = scored_;
  std::sort(parents.begin(), parents.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  if (static_cast<int>(parents.size()) > population_) parents.resize(population_);
  bool any_fit = !parents.empty() && parents[0].second > 0;

  std::vector<double> weights;
  for (const auto& p : parents) weights.push_back(p.second);
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());

  std::vector<int64_t> queued;
  auto fresh = [&](const schedule_space::Config& c) {
    return !visited(c) && std::find(queued.begin(), queued.end(), c.index()) == queued.end();
  };
  for (int i = 0; i < population_; ++i) {
    std::optional<schedule_space::Config> found;
    for (int attempt = 0; any_fit && attempt < kChildAttempts && !found; ++attempt) {
      const auto& a = i < elites_ && i < static_cast<int>(parents.size()) ? parents[i].first : parents[pick(rng_)].first;
      const auto& b = parents[pick(rng_)].first;
      schedule_space::Config c(&space_, child(a, b));
      if (space_.is_valid(c) && fresh(c)) found = c;
    }
    for (int attempt = 0; attempt < kChildAttempts && !found; ++attempt) {
      schedule_space::Config c = space_.sample(rng_);
      if (fresh(c)) found = c;
    }
    if (!found) break;
    queued.push_back(found->index());
    pending_.push_back(*found);
  }
  // Proposed in breeding order.
  std::reverse(pending_.begin(), pending_.end());
}

}  // namespace temper::search
