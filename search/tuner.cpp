#include "search/tuner.h"

#include "compiler/ir/error.h"
#include "search/tuners.h"

namespace temper::search {

bool Tuner::has_next() const { return num_visited() < space_.size(); }

const std::vector<std::string>& tuner_names() {
  static const std::vector<std::string> names = {"random", "grid", "ga"};
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
  return make_space_tuner(name, task.space(), seed);
}

}  // namespace temper::search
