#include "cost_model/training_set.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "compiler/ir/error.h"

namespace temper::cost_model {

void check_samples(const std::vector<Sample>& samples, int width) {
  for (size_t i = 0; i < samples.size(); ++i) {
    const Sample& s = samples[i];
    if (static_cast<int>(s.features.size()) != width) {
      throw UserError(str("cost model sample ", i, " (group '", s.group, "') has ", s.features.size(),
                          " features; the model expects ", width));
    }
    auto bad = std::find_if(s.features.begin(), s.features.end(), [](float f) { return !std::isfinite(f); });
    if (bad != s.features.end()) {
      throw UserError(str("cost model sample ", i, " (group '", s.group, "') has a non-finite feature (", *bad,
                          " at index ", bad - s.features.begin(), "); features must be finite numbers"));
    }
  }
}

void check_rows(const std::vector<std::vector<float>>& rows, int width) {
  for (size_t i = 0; i < rows.size(); ++i) {
    if (static_cast<int>(rows[i].size()) != width) {
      throw UserError(str("cost model row ", i, " has ", rows[i].size(), " features; the model expects ", width));
    }
  }
}

TrainingSet make_training_set(const std::vector<Sample>& samples, int width) {
  std::map<std::string, std::vector<const Sample*>> groups;
  for (const Sample& s : samples) groups[s.group].push_back(&s);

  TrainingSet set;
  for (const auto& [name, members] : groups) {
    double best = INFINITY;
    for (const Sample* s : members) {
      if (!is_failed_cost(s->cost)) best = std::min(best, s->cost);
    }
    if (std::isinf(best)) continue;  // only failures: nothing to rank against
    for (const Sample* s : members) {
      set.features.insert(set.features.end(), s->features.begin(), s->features.end());
      set.labels.push_back(is_failed_cost(s->cost) ? 0.0f : static_cast<float>(best / s->cost));
    }
    set.group_sizes.push_back(static_cast<unsigned>(members.size()));
  }
  TEMPER_CHECK(set.features.size() == set.labels.size() * static_cast<size_t>(width), "training rows of width ", width,
               " expected");
  return set;
}

}  // namespace temper::cost_model
