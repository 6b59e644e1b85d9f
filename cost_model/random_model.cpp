#include "cost_model/random_model.h"

#include "cost_model/model_file.h"
#include "cost_model/training_set.h"

namespace temper::cost_model {

RandomModel::RandomModel(const ModelOptions& options, int64_t num_samples)
    : options_(options), num_samples_(num_samples), generator_(options.seed) {}

void RandomModel::update(const std::vector<Sample>& samples) {
  check_samples(samples, options_.num_features);
  num_samples_ += static_cast<int64_t>(samples.size());
}

std::vector<double> RandomModel::predict(const std::vector<std::vector<float>>& rows) const {
  check_rows(rows, options_.num_features);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> scores(rows.size());
  std::lock_guard<std::mutex> lock(generator_lock_);
  for (double& score : scores) score = uniform(generator_);
  return scores;
}

void RandomModel::save(const std::string& path) const {
  write_model_file(path, model_file_header(kind(), options_, num_samples_));
}

}  // namespace temper::cost_model
