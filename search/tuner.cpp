#include "search/tuner.h"

#include "compiler/ir/error.h"
#include "cost_model/cost_model.h"
#include "search/featurize.h"
#include "search/model_tuner.h"
#include "search/tuners.h"

namespace temper::search {

bool Tuner::has_next() const { return num_visited() < space_.size(); }

const std::vector<std::string>& tuner_names() {
  static const std::vector<std::string> names = {"random", "grid", "ga", "xgb"};
  return names;
}

std::unique_ptr<Tuner> make_space_tuner(const std::string& name, const schedule_space::ConfigSpace& space,
                                        uint64_t seed) {
  if (name == "random") return std::make_unique<RandomTuner>(space, seed);
  if (name == "grid") return std::make_unique<GridTuner>(space);
  if (name == "ga") return std::make_unique<GATuner>(space, seed);
  throw UserError(str("unknown tuner '", name, "'; use random, grid or ga"));
}

std::unique_ptr<Tuner> make_tuner(const std::string& name, const schedule_space::Task& task, uint64_t seed) {
  if (name == "xgb") {
    cost_model::ModelOptions options;
    options.seed = seed;
    // A tuning job's model fits hundreds to a few thousand rows: XGBoost's threads then
    // cost more in synchronisation than they save (30x slower on a busy 2-core machine);
    // featurizing, the expensive part, runs in parallel instead.
    options.threads = 1;
    Featurizer featurize = [&task](const schedule_space::Config& c) { return config_features(task, c); };
    return std::make_unique<ModelTuner>(task.space(), std::move(featurize), sample_group(task),
                                        cost_model::make_cost_model("xgb", options), seed);
  }
  if (name != "random" && name != "grid" && name != "ga") {
    throw UserError(str("unknown tuner '", name, "'; use random, grid, ga or xgb"));
  }
  return make_space_tuner(name, task.space(), seed);
}

}  // namespace temper::search
