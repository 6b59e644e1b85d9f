// Tuners: what to measure next in a ConfigSpace (AutoTVM's tuner interface). The tune
// loop (tune.h) asks next_batch, measures, and reports back through update; a tuner never
// measures and never proposes a config twice, nor one marked visited (measured by an
// earlier run of the job, found in the log).
//
//   random  valid configs drawn uniformly, without repeats
//   grid    every valid config in index order
//   ga      a genetic search: a population of the best configs so far, children by
//           uniform crossover of two parents picked by fitness, mutated knob by knob
//   xgb     model-guided: an XGBoost cost model ranks configs by the features of their
//           lowered code, simulated annealing finds the best-ranked (model_tuner.h)
//
// Every tuner takes an explicit seed: the same seed, space and results give the same
// proposals.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "schedule_space/config_space.h"
#include "schedule_space/template.h"

namespace temper::search {

class Tuner {
 public:
  explicit Tuner(const schedule_space::ConfigSpace& space) : space_(space) {}
  virtual ~Tuner() = default;

  // Its name as make_tuner takes it; each record it proposes carries it (TuningRecord::tuner).
  virtual std::string name() const = 0;
  // False once nothing is left to propose.
  virtual bool has_next() const;
  // At most n configs, valid, never proposed or visited before.
  virtual std::vector<schedule_space::Config> next_batch(int n) = 0;
  // Costs in seconds of the configs of the last batch; +infinity for a failed one.
  virtual void update(const std::vector<schedule_space::Config>& configs, const std::vector<double>& costs) {}

  // A config measured before this tuner started: never proposed, and known to update.
  void mark_visited(const schedule_space::Config& config) { visited_.insert(config.index()); }
  bool visited(const schedule_space::Config& config) const { return visited_.count(config.index()) > 0; }
  int64_t num_visited() const { return static_cast<int64_t>(visited_.size()); }

 protected:
  const schedule_space::ConfigSpace& space_;
  std::unordered_set<int64_t> visited_;
};

// Any of tuner_names() for the task; UserError naming the known tuners for another name.
// "xgb" starts with an untrained model (ModelTuner takes a pre-trained one).
std::unique_ptr<Tuner> make_tuner(const std::string& name, const schedule_space::Task& task, uint64_t seed);
// The tuners that need only the space (random, grid, ga); UserError for another name.
std::unique_ptr<Tuner> make_space_tuner(const std::string& name, const schedule_space::ConfigSpace& space,
                                        uint64_t seed);
// The names make_tuner accepts.
const std::vector<std::string>& tuner_names();

}  // namespace temper::search
