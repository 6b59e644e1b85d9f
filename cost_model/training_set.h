// The rows a model fits on, built from measured samples: validated, sorted by group and
// labelled as cost_model.h says (best successful cost of the group / cost, 0 for a
// failure; groups without a success left out).
#pragma once

#include <cstdint>
#include <vector>

#include "cost_model/cost_model.h"

namespace temper::cost_model {

// UserError for a sample whose width is not `width` or with a NaN or infinite feature.
void check_samples(const std::vector<Sample>& samples, int width);
// UserError for a row whose width is not `width`.
void check_rows(const std::vector<std::vector<float>>& rows, int width);

struct TrainingSet {
  std::vector<float> features;        // row-major, rows of one group together
  std::vector<float> labels;          // one per row, in (0, 1], 0 for a failure
  std::vector<unsigned> group_sizes;  // rows per group, in row order
  int64_t num_rows() const { return static_cast<int64_t>(labels.size()); }
};

// Groups in name order, samples in their given order within a group.
TrainingSet make_training_set(const std::vector<Sample>& samples, int width);

}  // namespace temper::cost_model
