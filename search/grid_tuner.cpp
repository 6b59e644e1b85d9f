#include "search/tuners.h"

namespace temper::search {

std::vector<schedule_space::Config> GridTuner::next_batch(int n) {
  std::vector<schedule_space::Config> batch;
  while (static_cast<int>(batch.size()) < n && next_ < space_.size()) {
    schedule_space::Config c = space_.get(next_++);
    if (visited(c) || !space_.is_valid(c)) continue;
    mark_visited(c);
    batch.push_back(c);
  }
  return batch;
}

}  // namespace temper::search
