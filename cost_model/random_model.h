// A cost model that knows nothing: random scores, for comparing the xgb model against
// random choice in benchmarks and tests. Its scores come from one generator seeded by
// ModelOptions::seed, so a run is repeatable: the same seed and the same sequence of
// predict() calls give the same scores. update() only counts the samples (after the
// same checks as the xgb model's); a loaded model starts its generator afresh.
#pragma once

#include <mutex>
#include <random>

#include "cost_model/cost_model.h"

namespace temper::cost_model {

class RandomModel final : public CostModel {
 public:
  // options as resolve_model_options leaves them.
  explicit RandomModel(const ModelOptions& options, int64_t num_samples = 0);

  std::string kind() const override { return "random"; }
  void update(const std::vector<Sample>& samples) override;
  // Uniform in [0, 1); safe to call from several threads (the generator is locked).
  std::vector<double> predict(const std::vector<std::vector<float>>& rows) const override;
  bool trained() const override { return true; }
  int64_t num_samples() const override { return num_samples_; }
  void save(const std::string& path) const override;

 private:
  ModelOptions options_;
  int64_t num_samples_;
  mutable std::mutex generator_lock_;
  mutable std::mt19937_64 generator_;  // predict() is const but draws from it
};

}  // namespace temper::cost_model
