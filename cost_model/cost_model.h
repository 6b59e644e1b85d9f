// The learned cost model: ranks candidate configs by their features so that only the
// promising ones are measured (AutoTVM's XGBoost cost model).
//
// A model learns from measured samples. Each sample is one candidate's feature vector
// (candidate_features(), the layout in features.h) with its measured cost and a group:
// candidates compare only within their group (one workload on one target), because the
// label is relative -- best cost of the group / this cost, in (0, 1], and 0 for a failed
// candidate. A cost that is +infinity, NaN, zero or negative marks a failure: it teaches
// "slow", never a wrong ranking. A group whose samples all failed teaches nothing and is
// left out of training.
//
//   std::unique_ptr<CostModel> m = make_cost_model("xgb", {});
//   m->update(samples);                  // re-fits on everything seen so far
//   std::vector<double> s = m->predict(rows);   // higher = predicted faster
//   m->save("model.json");
//   std::unique_ptr<CostModel> again = load_cost_model("model.json");
//
// Saved files record the model file version, the feature layout version and width and
// the feature names; load_cost_model refuses a file whose layout differs from this
// build's with a UserError that says to retrain (`temper model train`), never loads it
// into garbage predictions.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace temper::cost_model {

inline constexpr int kModelFileVersion = 1;

struct Sample {
  std::vector<float> features;  // ModelOptions::num_features entries
  double cost = 0;              // seconds; a failure as said above
  std::string group;            // e.g. "<workload key> @ <target>"
};

struct ModelOptions {
  // The width of a feature row: 0 means candidate_features()'s (feature_names().size());
  // tests with hand-made features set their own.
  int num_features = 0;
  std::string objective = "rank";  // "rank" (pairwise ranking) or "reg" (regression on the label)
  int rounds = 100;                // boosting rounds per fit
  int max_depth = 6;
  double learning_rate = 0.3;
  // XGBoost's threads (0: as many as OpenMP gives). One by default: a tuning job's few
  // thousand rows fit as fast on one, and on a busy machine more threads stall each
  // other for seconds per fit.
  int threads = 1;
  uint64_t seed = 0;
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  // "xgb" or "random".
  virtual std::string kind() const = 0;
  // Adds the samples to the model's training set and re-fits on the whole set. A sample
  // of the wrong width is a UserError naming the width expected.
  virtual void update(const std::vector<Sample>& samples) = 0;
  // One score per row, higher = predicted faster. Only the order among the rows of one
  // call means anything. Before its first fit the xgb model scores every row 0; the
  // random model always gives random scores.
  virtual std::vector<double> predict(const std::vector<std::vector<float>>& rows) const = 0;
  // True once the model has fitted on at least one group with a successful sample; until
  // then a tuner should not trust predict (the xgb tuner explores at random).
  virtual bool trained() const = 0;
  // The samples the model has learned from so far (valid and failed).
  virtual int64_t num_samples() const = 0;
  // Writes one JSON file (model_file.h describes it), whole or not at all: a temporary
  // file beside it, then renamed. UserError when the file cannot be written.
  virtual void save(const std::string& path) const = 0;
};

// True for a cost that marks a failed candidate: +inf, NaN, zero or negative.
inline bool is_failed_cost(double cost) {
  return !std::isfinite(cost) || cost <= 0;
}

// The options with num_features resolved (0 becomes feature_names().size()). UserError
// for an objective other than "rank" or "reg", rounds, max_depth or learning_rate not
// positive, or negative threads or num_features.
ModelOptions resolve_model_options(const ModelOptions& options);

// "xgb" or "random"; UserError naming both for anything else, or for a bad objective.
std::unique_ptr<CostModel> make_cost_model(const std::string& kind, const ModelOptions& options = {});
// UserError for a missing or unreadable file, another file format or version, or another
// feature layout (naming both layouts and saying to retrain). num_features is the width
// the caller will feed (0: candidate_features()'s); a file of another width is refused.
// A saved model carries its training samples, so update() after loading re-fits on the
// old samples plus the new ones, as if the model had never been saved.
std::unique_ptr<CostModel> load_cost_model(const std::string& path, int num_features = 0);

}  // namespace temper::cost_model
