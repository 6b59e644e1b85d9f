// The model-guided tuner ("xgb"; AutoTVM's XGBTuner with its simulated-annealing
// optimizer). A cost model scores configs from their features; simulated annealing over
// the ConfigSpace, with many chains advanced together (their new configs featurized in
// parallel with OpenMP, scored in one batched predict), looks for the configs the
// model rates best; each batch is the best-scored distinct configs not measured before,
// with a diversity filter (a config too close to one already picked, in knob distance,
// waits) and an epsilon-greedy share of uniformly random configs, so that a wrong model
// cannot keep the search away from a region for ever. The model re-fits on every batch
// the tune loop reports through update().
//
// Until the model has fitted on a successful measurement (the first batch, or a log of
// failures only), batches are random. A model pre-trained by transfer (transfer.h) is
// used from the first batch.
//
// One annealing run per next_batch(n): the chains start from the best measured configs
// (at most half of them) and random valid ones; each step moves every chain to a random
// neighbour (one knob changed to another of its choices; an invalid one is redrawn, a
// few times, else the chain stays), scores all moved chains in one predict call, and
// accepts a move by the Metropolis rule at a temperature cooling linearly from
// start_temperature to 0 (score differences normalised by the range of the step's
// scores). Every scored config that is neither measured nor proposed competes for a list
// of the best max(4n, 32); the run ends after max_steps, or once that list has not changed
// in early_stop_steps steps. A space of at most 8 * num_chains points is not annealed:
// every unvisited valid config is scored directly (max_steps moves of every chain would
// visit each point many times over).
// The batch is then the list in score order through the diversity filter, with
// floor(epsilon * n) random configs, plus one more with probability of the remainder
// (AutoTVM draws each slot at random with probability epsilon; this has the same mean
// and less spread). A config the featurizer cannot apply scores lowest and is never
// picked by the model; the random share may still pick it, and the tune loop records it
// as an instantiation error.
//
// Deterministic: the same seed, space, model and results give the same batches (random
// draws are serial; only featurizing, which is a pure function, runs in parallel).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cost_model/cost_model.h"
#include "search/tuner.h"

namespace temper::search {

struct ModelTunerOptions {
  int num_chains = 128;            // annealing chains, advanced together
  int max_steps = 200;             // annealing steps per chain and batch
  int early_stop_steps = 50;       // a chain set stops when its best list has not changed in this many steps
  double start_temperature = 1.0;  // on scores normalised to [0, 1]; cools linearly to 0
  double epsilon = 0.05;           // share of each batch drawn at random
  int diversity_distance = 1;      // picked configs differ from each other in more than this many knobs
                                   // (relaxed when too few configs pass)
};

// The features of a config (the tuner caches them by index); empty when the config
// cannot be applied. Called from several threads at once.
using Featurizer = std::function<std::vector<float>(const schedule_space::Config&)>;

class ModelTuner : public Tuner {
 public:
  // group: the cost_model::Sample group of this job's measurements (workload @ target).
  ModelTuner(const schedule_space::ConfigSpace& space, Featurizer featurize, std::string group,
             std::unique_ptr<cost_model::CostModel> model, uint64_t seed, const ModelTunerOptions& options = {});
  // Its cost model's kind: "xgb", loaded, pre-trained by transfer or not.
  std::string name() const override { return model_->kind(); }
  bool has_next() const override;
  std::vector<schedule_space::Config> next_batch(int n) override;
  void update(const std::vector<schedule_space::Config>& configs, const std::vector<double>& costs) override;

  const cost_model::CostModel& model() const { return *model_; }
  // Wall seconds spent so far in featurizing, fitting and annealing (for reports).
  double featurize_s() const { return featurize_s_; }
  double fit_s() const { return fit_s_; }
  double search_s() const { return search_s_; }

 private:
  Featurizer featurize_;
  std::string group_;
  std::unique_ptr<cost_model::CostModel> model_;
  ModelTunerOptions options_;
  std::mt19937_64 rng_;
  // Features by config index; empty for a config the template cannot apply.
  std::unordered_map<int64_t, std::vector<float>> features_;
  // Measured configs that succeeded, as (seconds, index): the chains start from the best.
  std::vector<std::pair<double, int64_t>> measured_;
  bool exhausted_ = false;
  double featurize_s_ = 0, fit_s_ = 0, search_s_ = 0;

  // Fills features_ for the indices it lacks, in parallel.
  void featurize_missing(const std::vector<int64_t>& indices);
  // Model scores of the configs; lowest() for one without features.
  std::vector<double> score(const std::vector<int64_t>& indices);
  // Up to `count` valid configs drawn uniformly among those not visited and not in `taken`.
  std::vector<int64_t> random_unvisited(int count, const std::unordered_set<int64_t>& taken);
  // The best-scored unvisited configs, best first, at most `keep`.
  std::vector<std::pair<double, int64_t>> anneal(int keep);
  std::vector<std::pair<double, int64_t>> score_all_unvisited(int keep);
  // A valid config one knob away from `index`, or `index` itself when none was found.
  int64_t random_neighbour(int64_t index);
};

}  // namespace temper::search
