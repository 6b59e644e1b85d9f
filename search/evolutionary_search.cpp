#include "search/evolutionary_search.h"

#include <algorithm>
#include <exception>
#include <string>
#include <limits>
#include <map>

#include "compiler/ir/printer.h"
#include "compiler/lower/lower.h"
#include "compiler/runtime/file_io.h"
#include "cost_model/features.h"

namespace temper::search {
namespace {

using schedule_space::AutoCandidate;
using schedule_space::Decisions;

// A candidate's identity before lowering: its sketch and decisions.
std::string decisions_key(const AutoCandidate& c) {
  std::string key = std::to_string(c.sketch);
  for (const std::optional<std::vector<int64_t>>& d : c.decisions()) {
    key += '|';
    for (int64_t x : *d) key += std::to_string(x) + ',';
  }
  return key;
}

// Runs fn(i) for i in [0, n) in parallel; the first exception is rethrown after all finish.
template <typename Fn>
void parallel_for(int64_t n, Fn&& fn) {
  std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic)
  for (int64_t i = 0; i < n; ++i) {
    try {
      fn(i);
    } catch (...) {
#pragma omp critical(temper_evolution_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

// Share of random draws without a register tile that fills the registers that are
// dropped: the rest keep the population from losing such programs altogether (a
// workload whose tiles cannot fill them, an elementwise op).
constexpr double kRandomTilePrior = 0.9;

// The shape of a candidate's register tile: its elements and its vectorized extent.
std::pair<int64_t, int64_t> tile_shape(const AutoCandidate& c) {
  RegisterTile t = largest_register_tile(c.schedule.func());
  return {t.elements, t.innermost};
}

bool by_score(const ScoredCandidate& a, const ScoredCandidate& b) {
  return a.score > b.score;
}

}  // namespace

std::optional<ScoredCandidate> evaluate(AutoCandidate candidate, const CandidateLimits& limits) {
  if (!fits_registers(candidate.schedule.func(), limits)) return std::nullopt;
  PrimFunc lowered;
  try {
    lowered = lower(candidate.schedule.func());
  } catch (const UserError&) {
    return std::nullopt;  // ScheduleError included
  }
  if (!fits_device(lowered, limits)) return std::nullopt;
  ScoredCandidate c{std::move(candidate), fnv1a(to_string(lowered)), cost_model::candidate_features(lowered), 0};
  return c;
}

EvolutionarySearch::EvolutionarySearch(const schedule_space::AutoSpace& space,
                                       std::unique_ptr<cost_model::CostModel> model, std::string group, uint64_t seed,
                                       EvolutionOptions options)
    : space_(space), model_(std::move(model)), group_(std::move(group)), options_(options), rng_(seed) {
  limits_ = candidate_limits(space.target());
}

void EvolutionarySearch::add_measured(const std::vector<AutoCandidate>& candidates, const std::vector<double>& costs) {
  TEMPER_CHECK(candidates.size() == costs.size(), "add_measured: ", candidates.size(), " candidates and ",
               costs.size(), " costs");
  std::vector<cost_model::Sample> samples;
  for (size_t i = 0; i < candidates.size(); ++i) {
    // This search's own candidates were lowered when scored; the log's are lowered here.
    auto known = memo_.find(decisions_key(candidates[i]));
    if (known == memo_.end()) {
      std::optional<ScoredCandidate> c = evaluate(candidates[i], limits_);
      Evaluation e;
      if (c) e = {true, c->hash, std::move(c->features)};
      known = memo_.emplace(decisions_key(candidates[i]), std::move(e)).first;
    }
    ++measured_per_sketch_[candidates[i].sketch];
    ++measured_per_tile_[tile_shape(candidates[i])];
    if (!known->second.lowers) continue;
    seen_.insert(known->second.hash);
    samples.push_back({known->second.features, costs[i], group_});
    if (!cost_model::is_failed_cost(costs[i])) measured_.emplace_back(costs[i], candidates[i]);
  }
  std::stable_sort(measured_.begin(), measured_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (!samples.empty()) model_->update(samples);
}

void EvolutionarySearch::score(std::vector<ScoredCandidate>& candidates) const {
  if (candidates.empty()) return;
  if (!model_->trained()) {
    for (ScoredCandidate& c : candidates) c.score = 0;
    return;
  }
  std::vector<std::vector<float>> rows;
  for (const ScoredCandidate& c : candidates) rows.push_back(c.features);
  std::vector<double> scores = model_->predict(rows);
  for (size_t i = 0; i < candidates.size(); ++i) candidates[i].score = scores[i];
}

std::vector<ScoredCandidate> EvolutionarySearch::evaluate_all(const std::vector<Spec>& specs, bool random_draws) {
  // Instantiating is cheap; lowering is most of the search's time, and mutations often
  // arrive at a program met before: those come from the memo.
  std::vector<std::optional<AutoCandidate>> candidates(specs.size());
  parallel_for(static_cast<int64_t>(specs.size()), [&](int64_t i) {
    try {
      candidates[i] = space_.instantiate(specs[i].sketch, specs[i].decisions, specs[i].seed);
    } catch (const ScheduleError&) {
      // an illegal schedule: not a candidate
    }
  });
  if (random_draws) {
    // The register-tile prior: most random draws of a tiled sketch whose tile would leave
    // the FMA units waiting are dropped before lowering (kRandomTilePrior of them).
    for (size_t i = 0; i < specs.size(); ++i) {
      bool tiled = candidates[i] && !space_.sketches()[candidates[i]->sketch].tiled.empty();
      if (tiled && !fills_registers(candidates[i]->schedule.func(), limits_) &&
          std::uniform_real_distribution<double>(0, 1)(rng_) < kRandomTilePrior) {
        candidates[i].reset();
      }
    }
  }
  std::vector<std::string> keys(specs.size());
  std::vector<int64_t> missing;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!candidates[i]) continue;
    keys[i] = decisions_key(*candidates[i]);
    if (!memo_.count(keys[i])) missing.push_back(static_cast<int64_t>(i));
  }
  std::vector<std::optional<ScoredCandidate>> evaluated(missing.size());
  parallel_for(static_cast<int64_t>(missing.size()),
               [&](int64_t k) { evaluated[k] = evaluate(*candidates[missing[k]], limits_); });
  if (memo_.size() > 50000) memo_.clear();  // bounds the memory of a long job
  for (size_t k = 0; k < missing.size(); ++k) {
    Evaluation e;
    if (evaluated[k]) e = {true, evaluated[k]->hash, std::move(evaluated[k]->features)};
    memo_[keys[missing[k]]] = std::move(e);
  }
  std::vector<ScoredCandidate> valid;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!candidates[i]) continue;
    auto it = memo_.find(keys[i]);
    if (it == memo_.end() || !it->second.lowers) continue;
    valid.push_back({std::move(*candidates[i]), it->second.hash, it->second.features, 0});
  }
  return valid;
}

std::vector<ScoredCandidate> EvolutionarySearch::initial_population(std::vector<ScoredCandidate>& random) {
  std::vector<Spec> seeds;
  for (size_t i = 0; i < measured_.size() && static_cast<int>(i) < options_.seeds_from_measured; ++i) {
    seeds.push_back({measured_[i].second.sketch, measured_[i].second.decisions(), rng_()});
  }
  std::vector<ScoredCandidate> population = evaluate_all(seeds);
  // Random candidates, in rounds, until the population is full or the draws run out.
  const int want = options_.population - static_cast<int>(population.size());
  const int max_draws = std::max(64, 16 * options_.population);
  int draws = 0;
  std::uniform_int_distribution<int> sketch(0, static_cast<int>(space_.sketches().size()) - 1);
  while (static_cast<int>(random.size()) < want && draws < max_draws) {
    std::vector<Spec> specs;
    for (int i = static_cast<int>(random.size()); i < want && draws < max_draws; ++i, ++draws) {
      specs.push_back({sketch(rng_), {}, rng_()});
    }
    for (ScoredCandidate& c : evaluate_all(specs, /*random_draws=*/true)) random.push_back(std::move(c));
  }
  if (random.empty() && population.empty()) {
    throw UserError(str("the auto-scheduler found no valid candidate for ", space_.workload().to_string(), " on ",
                        space_.target().to_string(), " in ", draws, " random draws from ", space_.sketches().size(),
                        " sketches: none lowered"));
  }
  population.insert(population.end(), random.begin(), random.end());
  return population;
}

std::vector<ScoredCandidate> EvolutionarySearch::evolve(const std::vector<ScoredCandidate>& population) {
  // Parents drawn with probability growing linearly with the score (all equal untrained).
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const ScoredCandidate& c : population) {
    lo = std::min(lo, c.score);
    hi = std::max(hi, c.score);
  }
  std::vector<double> weights;
  for (const ScoredCandidate& c : population) weights.push_back(hi > lo ? 0.1 + (c.score - lo) / (hi - lo) : 1.0);
  std::discrete_distribution<size_t> parent(weights.begin(), weights.end());
  std::vector<Spec> children;
  for (int i = 0; i < options_.population; ++i) {
    const ScoredCandidate& p = population[parent(rng_)];
    std::optional<Decisions> d = mutate(p.candidate, options_.mutation, rng_);
    if (d) children.push_back({p.candidate.sketch, std::move(*d), rng_()});
  }
  std::vector<ScoredCandidate> next = evaluate_all(children);
  // The best of this round survive.
  std::vector<ScoredCandidate> ranked = population;
  std::stable_sort(ranked.begin(), ranked.end(), by_score);
  size_t keep = std::min(ranked.size(), static_cast<size_t>(options_.survivors * options_.population) + 1);
  next.insert(next.end(), ranked.begin(), ranked.begin() + keep);
  return next;
}

std::vector<AutoCandidate> EvolutionarySearch::next_batch(int n) {
  if (n <= 0) return {};
  std::vector<ScoredCandidate> random;
  std::vector<ScoredCandidate> population = initial_population(random);
  // Every unseen candidate met on the way competes for the batch, once.
  std::vector<ScoredCandidate> met;
  std::unordered_set<uint64_t> in_met;
  auto meet = [&](const std::vector<ScoredCandidate>& cs) {
    for (const ScoredCandidate& c : cs) {
      if (!seen_.count(c.hash) && in_met.insert(c.hash).second) met.push_back(c);
    }
  };
  score(population);
  meet(population);
  for (int g = 0; g < options_.generations; ++g) {
    population = evolve(population);
    score(population);
    meet(population);
  }
  score(met);
  std::stable_sort(met.begin(), met.end(), by_score);

  // The epsilon-greedy share: floor(epsilon * n) random picks, one more with the probability
  // of the remainder.
  double share = options_.epsilon * n;
  int n_random = static_cast<int>(share);
  if (std::uniform_real_distribution<double>(0, 1)(rng_) < share - n_random) ++n_random;
  std::vector<AutoCandidate> batch;
  // Adds c unless measured or proposed before; says whether it did.
  auto take = [&](const ScoredCandidate& c) {
    if (!seen_.insert(c.hash).second) return false;
    batch.push_back(c.candidate);
    return true;
  };
  std::shuffle(random.begin(), random.end(), rng_);
  for (size_t i = 0; i < random.size() && static_cast<int>(batch.size()) < n_random; ++i) take(random[i]);
  // Takes the best-scored candidate not taken yet of the class measured least so far;
  // class_count(c): c's class's measurements, -1 where c belongs to none.
  auto take_least_measured = [&](auto&& class_count) {
    if (static_cast<int>(batch.size()) >= n) return;
    const ScoredCandidate* least = nullptr;
    int least_count = 0;
    for (const ScoredCandidate& c : met) {
      if (seen_.count(c.hash)) continue;
      const int count = class_count(c.candidate);
      if (count >= 0 && (!least || count < least_count)) {
        least = &c;
        least_count = count;
      }
    }
    if (least) take(*least);
  };
  // One slot for the sketch measured least, so that a sketch whose first draws were poor
  // is measured again (a conv job stayed 180 trials on one sketch at 0.73x the template's
  // best).
  if (space_.sketches().size() > 1) {
    take_least_measured([&](const AutoCandidate& c) { return measured_per_sketch_[c.sketch]; });
  }
  // One for the register-tile shape measured least, of the tiles that fill the registers:
  // the tile decides a reduction's speed, and a model fitted on one shape rates that
  // shape's mutations above the rest (a matmul job measured 1x32 and 2x16 tiles 60 times
  // and never a 4x16).
  take_least_measured([&](const AutoCandidate& c) {
    return fills_registers(c.schedule.func(), limits_) ? measured_per_tile_[tile_shape(c)] : -1;
  });
  // Best scores first, at most half the batch from one sketch while others have
  // candidates: a model fitted on a few measurements of one sketch rates its mutations
  // above everything else, and the search would stop learning about the other sketches.
  const int per_sketch = std::max(1, n / 2);
  std::map<int, int> from_sketch;
  for (const AutoCandidate& c : batch) ++from_sketch[c.sketch];
  std::vector<const ScoredCandidate*> held_back;
  for (size_t i = 0; i < met.size() && static_cast<int>(batch.size()) < n; ++i) {
    if (from_sketch[met[i].candidate.sketch] >= per_sketch) {
      held_back.push_back(&met[i]);
      continue;
    }
    if (take(met[i])) ++from_sketch[met[i].candidate.sketch];
  }
  for (size_t i = 0; i < held_back.size() && static_cast<int>(batch.size()) < n; ++i) take(*held_back[i]);
  return batch;
}

}  // namespace temper::search
