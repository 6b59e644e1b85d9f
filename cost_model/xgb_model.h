// The XGBoost cost model (AutoTVM's XGBoostCostModel), through XGBoost's C API.
//
// The model keeps every sample it is given. Each update() validates the new samples
// (width, finite features), adds them, and fits a fresh booster on the whole set (rows
// labelled as training_set.h says): objective "rank" is XGBoost's rank:pairwise with one
// query group per sample group, "reg" is reg:squarederror on the same label. Fitting
// from scratch keeps the model a pure function of its samples and options, so two runs
// with the same seed agree. At the sizes a tuning job reaches a fit takes, on one thread
// and 100 rounds of ~125-wide rows: rank ~0.35 s CPU at 500 rows, ~0.55 s at 2000; reg
// about a third of that.
//
// predict() is const and may run on several threads at once (XGBoost's prediction is
// thread-safe), but not during update(). XGBoost's headers stay in xgb_model.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cost_model/cost_model.h"

namespace temper::cost_model {

class XGBModel final : public CostModel {
 public:
  // options as resolve_model_options leaves them.
  explicit XGBModel(const ModelOptions& options);
  // A saved model: the samples it learned from and XGBoost's JSON text of its booster
  // (empty when it was never fitted). UserError naming `source` when the booster does
  // not load.
  XGBModel(const ModelOptions& options, std::vector<Sample> samples, const std::string& booster_json,
           const std::string& source);

  std::string kind() const override { return "xgb"; }
  void update(const std::vector<Sample>& samples) override;
  std::vector<double> predict(const std::vector<std::vector<float>>& rows) const override;
  bool trained() const override { return booster_ != nullptr; }
  int64_t num_samples() const override { return static_cast<int64_t>(samples_.size()); }
  void save(const std::string& path) const override;

 private:
  struct BoosterFree {
    void operator()(void* booster) const;
  };
  using Booster = std::unique_ptr<void, BoosterFree>;

  void fit();
  Booster new_booster(void* const* train_matrices, int count) const;

  ModelOptions options_;
  std::vector<Sample> samples_;
  Booster booster_;  // null until a fit saw a group with a successful sample
};

}  // namespace temper::cost_model
