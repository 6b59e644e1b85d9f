// The model-guided tuner ("xgb"; AutoTVM's XGBTuner with its simulated-annealing
// optimizer). A cost model scores configs from their features; simulated annealing over
// the ConfigSpace, with many chains run in parallel (OpenMP), looks for the configs the
// model rates best; each batch is the best-scored distinct configs not measured before,
// with a diversity filter (a config too close to one already picked, in knob distance,
// waits) and an epsilon-greedy share of uniformly random configs, so that a wrong model
// cannot keep the search away from a region for ever. The model re-fits on every batch
// the tune loop reports through update().
//
// Until the model has fitted on a successful measurement (the first batch, or a log of
// failures only), batches are random. A model pre-trained by transfer (transfer.h) is
// used from the first batch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "cost_model/cost_model.h"
#include "search/tuner.h"

namespace temper::search {

struct ModelTunerOptions {
  int num_chains = 128;      // annealing chains, run in parallel
  int max_steps = 200;       // annealing steps per chain and batch
  int early_stop_steps = 50;  // a chain set stops when its best list has not changed in this many steps
  double start_temperature = 1.0;  // on scores normalised to [0, 1]; cools linearly to 0
  double epsilon = 0.05;     // share of each batch drawn at random
  int diversity_distance = 1;  // picked configs differ from each other in more than this many knobs
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
  double featurize_s_ = 0, fit_s_ = 0, search_s_ = 0;
};

}  // namespace temper::search
