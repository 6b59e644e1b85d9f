#include "search/model_tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>

#include "compiler/ir/error.h"

namespace temper::search {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

constexpr double kLowest = -std::numeric_limits<double>::infinity();
// Draws in a row that found only visited configs before the unvisited ones are listed
// instead (in a space small enough to list) or the space counts as done.
constexpr int kMaxMisses = 256;
constexpr int64_t kEnumerateLimit = 1 << 20;
// Tries at a valid neighbour before a chain stays where it is for a step.
constexpr int kNeighbourTries = 8;

int knob_distance(const schedule_space::Config& a, const schedule_space::Config& b) {
  int d = 0;
  for (size_t k = 0; k < a.choices().size(); ++k) d += a.choices()[k] != b.choices()[k];
  return d;
}

}  // namespace

ModelTuner::ModelTuner(const schedule_space::ConfigSpace& space, Featurizer featurize, std::string group,
                       std::unique_ptr<cost_model::CostModel> model, uint64_t seed, const ModelTunerOptions& options)
    : Tuner(space),
      featurize_(std::move(featurize)),
      group_(std::move(group)),
      model_(std::move(model)),
      options_(options),
      rng_(seed) {
  TEMPER_CHECK(model_ != nullptr, "ModelTuner needs a cost model");
  if (options_.num_chains < 1 || options_.max_steps < 0 || options_.early_stop_steps < 1) {
    throw UserError(str("ModelTuner: num_chains and early_stop_steps must be at least 1 and max_steps at least 0, got ",
                        options_.num_chains, ", ", options_.early_stop_steps, " and ", options_.max_steps));
  }
  if (!(options_.epsilon >= 0 && options_.epsilon <= 1)) {
    throw UserError(str("ModelTuner: epsilon is a share of the batch, in [0, 1], got ", options_.epsilon));
  }
}

bool ModelTuner::has_next() const { return !exhausted_ && Tuner::has_next(); }

void ModelTuner::featurize_missing(const std::vector<int64_t>& indices) {
  std::vector<int64_t> todo;
  std::unordered_set<int64_t> queued;
  for (int64_t i : indices) {
    if (!features_.count(i) && queued.insert(i).second) todo.push_back(i);
  }
  if (todo.empty()) return;
  Clock::time_point start = Clock::now();
  std::vector<schedule_space::Config> configs;
  for (int64_t i : todo) configs.push_back(space_.get(i));
  std::vector<std::vector<float>> rows(todo.size());
  std::vector<std::string> errors(todo.size());
  const int64_t n = static_cast<int64_t>(todo.size());
#pragma omp parallel for schedule(dynamic) if (n > 1)
  for (int64_t i = 0; i < n; ++i) {
    // A featurizer bug must not end the tuning job: the config scores lowest, and the
    // tune loop reports the error if the random share ever measures it.
    try {
      rows[i] = featurize_(configs[i]);
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  }
  for (size_t i = 0; i < todo.size(); ++i) {
    if (!errors[i].empty()) warn(str("xgb tuner: cannot featurize ", configs[i].to_string(), ": ", errors[i]));
    features_[todo[i]] = std::move(rows[i]);
  }
  featurize_s_ += seconds_since(start);
}

std::vector<double> ModelTuner::score(const std::vector<int64_t>& indices) {
  featurize_missing(indices);
  std::vector<std::vector<float>> rows;
  std::vector<size_t> which;
  for (size_t i = 0; i < indices.size(); ++i) {
    const std::vector<float>& f = features_.at(indices[i]);
    if (f.empty()) continue;
    rows.push_back(f);
    which.push_back(i);
  }
  std::vector<double> scores(indices.size(), kLowest);
  if (rows.empty()) return scores;
  std::vector<double> predicted = model_->predict(rows);
  for (size_t k = 0; k < which.size(); ++k) {
    if (!std::isnan(predicted[k])) scores[which[k]] = predicted[k];
  }
  return scores;
}

std::vector<int64_t> ModelTuner::random_unvisited(int count, const std::unordered_set<int64_t>& taken) {
  std::vector<int64_t> out;
  std::unordered_set<int64_t> chosen;
  auto fresh = [&](int64_t i) { return !visited_.count(i) && !taken.count(i) && !chosen.count(i); };
  int misses = 0;
  while (static_cast<int>(out.size()) < count && misses < kMaxMisses) {
    int64_t i = space_.sample(rng_).index();
    if (!fresh(i)) {
      ++misses;
      continue;
    }
    misses = 0;
    chosen.insert(i);
    out.push_back(i);
  }
  if (static_cast<int>(out.size()) < count && space_.size() <= kEnumerateLimit) {
    // Nearly every config is visited: list the few that are not.
    std::vector<int64_t> rest;
    for (int64_t i = 0; i < space_.size(); ++i) {
      if (fresh(i) && space_.is_valid(space_.get(i))) rest.push_back(i);
    }
    std::shuffle(rest.begin(), rest.end(), rng_);
    for (size_t k = 0; k < rest.size() && static_cast<int>(out.size()) < count; ++k) out.push_back(rest[k]);
  }
  return out;
}

int64_t ModelTuner::random_neighbour(int64_t index) {
  const std::vector<schedule_space::Knob>& knobs = space_.knobs();
  if (knobs.empty()) return index;
  std::vector<int64_t> choices = space_.get(index).choices();
  std::uniform_int_distribution<size_t> pick_knob(0, knobs.size() - 1);
  for (int attempt = 0; attempt < kNeighbourTries; ++attempt) {
    size_t k = pick_knob(rng_);
    int64_t count = static_cast<int64_t>(knobs[k].choices.size());
    if (count < 2) continue;
    // Another choice of knob k, uniformly: draw among count - 1 and skip the current.
    int64_t c = std::uniform_int_distribution<int64_t>(0, count - 2)(rng_);
    if (c >= choices[k]) ++c;
    std::vector<int64_t> moved = choices;
    moved[k] = c;
    schedule_space::Config n(&space_, std::move(moved));
    if (space_.is_valid(n)) return n.index();
  }
  return index;
}

std::vector<std::pair<double, int64_t>> ModelTuner::anneal(int keep) {
  const int chains = options_.num_chains;
  std::vector<int64_t> points;
  std::vector<std::pair<double, int64_t>> best_measured = measured_;
  std::sort(best_measured.begin(), best_measured.end());
  std::unordered_set<int64_t> started;
  for (const auto& [cost, index] : best_measured) {
    if (static_cast<int>(points.size()) >= chains / 2) break;
    if (started.insert(index).second) points.push_back(index);
  }
  while (static_cast<int>(points.size()) < chains) points.push_back(space_.sample(rng_).index());
  std::vector<double> scores = score(points);

  // The best-scored unvisited configs seen, ordered by (score, index).
  std::set<std::pair<double, int64_t>> best;
  std::unordered_set<int64_t> in_best;
  auto offer = [&](int64_t index, double s) {
    if (s == kLowest || visited_.count(index) || in_best.count(index)) return false;
    if (static_cast<int>(best.size()) >= keep) {
      if (s <= best.begin()->first) return false;
      in_best.erase(best.begin()->second);
      best.erase(best.begin());
    }
    best.emplace(s, index);
    in_best.insert(index);
    return true;
  };
  for (int i = 0; i < chains; ++i) offer(points[i], scores[i]);

  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  int unchanged = 0;
  for (int step = 0; step < options_.max_steps && unchanged < options_.early_stop_steps; ++step) {
    double temperature = options_.start_temperature * (1.0 - static_cast<double>(step) / options_.max_steps);
    std::vector<int64_t> moved(chains);
    for (int i = 0; i < chains; ++i) moved[i] = random_neighbour(points[i]);
    std::vector<double> moved_scores = score(moved);

    double lo = std::numeric_limits<double>::infinity();
    double hi = -lo;
    for (const std::vector<double>* v : {&scores, &moved_scores}) {
      for (double s : *v) {
        if (s == kLowest) continue;
        lo = std::min(lo, s);
        hi = std::max(hi, s);
      }
    }
    double range = hi > lo ? hi - lo : 1.0;

    bool changed = false;
    for (int i = 0; i < chains; ++i) {
      changed |= offer(moved[i], moved_scores[i]);
      if (moved_scores[i] == kLowest) continue;
      bool accept = scores[i] == kLowest || moved_scores[i] >= scores[i];
      if (!accept && temperature > 0) {
        accept = uniform(rng_) < std::exp((moved_scores[i] - scores[i]) / range / temperature);
      }
      if (accept) {
        points[i] = moved[i];
        scores[i] = moved_scores[i];
      }
    }
    unchanged = changed ? 0 : unchanged + 1;
  }
  return {best.rbegin(), best.rend()};
}

std::vector<std::pair<double, int64_t>> ModelTuner::score_all_unvisited(int keep) {
  std::vector<int64_t> candidates;
  for (int64_t i = 0; i < space_.size(); ++i) {
    if (!visited_.count(i) && space_.is_valid(space_.get(i))) candidates.push_back(i);
  }
  std::vector<double> scores = score(candidates);
  std::vector<std::pair<double, int64_t>> ranked;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (scores[i] != kLowest) ranked.emplace_back(scores[i], candidates[i]);
  }
  std::sort(ranked.begin(), ranked.end(), std::greater<>());
  if (static_cast<int>(ranked.size()) > keep) ranked.resize(keep);
  return ranked;
}

std::vector<schedule_space::Config> ModelTuner::next_batch(int n) {
  if (n <= 0 || exhausted_) return {};
  Clock::time_point start = Clock::now();
  double featurize_before = featurize_s_;

  std::vector<int64_t> picked;
  if (model_->trained()) {
    double share = options_.epsilon * n;
    int num_random = static_cast<int>(std::floor(share));
    if (std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < share - num_random) ++num_random;
    const int from_model = n - num_random;
    const int keep = std::max(4 * n, 32);
    std::vector<std::pair<double, int64_t>> ranked =
        space_.size() <= 8 * static_cast<int64_t>(options_.num_chains) ? score_all_unvisited(keep) : anneal(keep);

    // Diversity: a config within diversity_distance knobs of one picked waits; the
    // waiting ones fill the batch, best first, when too few are far enough apart.
    std::vector<schedule_space::Config> picked_configs;
    std::vector<int64_t> waiting;
    for (const auto& [s, index] : ranked) {
      if (static_cast<int>(picked.size()) >= from_model) break;
      schedule_space::Config c = space_.get(index);
      bool close = std::any_of(picked_configs.begin(), picked_configs.end(), [&](const schedule_space::Config& p) {
        return knob_distance(c, p) <= options_.diversity_distance;
      });
      if (close) {
        waiting.push_back(index);
        continue;
      }
      picked.push_back(index);
      picked_configs.push_back(c);
    }
    for (size_t k = 0; k < waiting.size() && static_cast<int>(picked.size()) < from_model; ++k) {
      picked.push_back(waiting[k]);
    }
  }
  // The random share, and whatever the model could not fill.
  std::unordered_set<int64_t> taken(picked.begin(), picked.end());
  for (int64_t i : random_unvisited(n - static_cast<int>(picked.size()), taken)) picked.push_back(i);
  if (static_cast<int>(picked.size()) < n) exhausted_ = true;

  std::vector<schedule_space::Config> batch;
  for (int64_t i : picked) {
    batch.push_back(space_.get(i));
    mark_visited(batch.back());
  }
  search_s_ += seconds_since(start) - (featurize_s_ - featurize_before);
  return batch;
}

void ModelTuner::update(const std::vector<schedule_space::Config>& configs, const std::vector<double>& costs) {
  TEMPER_CHECK(configs.size() == costs.size(), "ModelTuner::update: ", configs.size(), " configs but ", costs.size(),
               " costs");
  std::vector<int64_t> indices;
  for (const schedule_space::Config& c : configs) indices.push_back(c.index());
  featurize_missing(indices);

  std::vector<cost_model::Sample> samples;
  for (size_t i = 0; i < configs.size(); ++i) {
    mark_visited(configs[i]);
    if (std::isfinite(costs[i]) && costs[i] > 0) measured_.emplace_back(costs[i], indices[i]);
    const std::vector<float>& f = features_.at(indices[i]);
    if (f.empty()) continue;  // cannot be featurized: nothing to learn from it
    samples.push_back({f, costs[i], group_});
  }
  if (samples.empty()) return;
  Clock::time_point start = Clock::now();
  model_->update(samples);
  fit_s_ += seconds_since(start);
}

}  // namespace temper::search
