#include <algorithm>

#include "search/tuners.h"

namespace temper::search {
namespace {
// Spaces up to this size are enumerated (shuffled); larger ones sampled with rejection.
constexpr int64_t kEnumerateLimit = 1 << 20;
// Draws in a row that only found visited configs before a large space counts as done.
constexpr int kMaxMisses = 2000;
}  // namespace

RandomTuner::RandomTuner(const schedule_space::ConfigSpace& space, uint64_t seed) : Tuner(space), rng_(seed) {
  if (space.size() <= kEnumerateLimit) {
    order_.resize(space.size());
    for (int64_t i = 0; i < space.size(); ++i) order_[i] = i;
    std::shuffle(order_.begin(), order_.end(), rng_);
  }
}

std::vector<schedule_space::Config> RandomTuner::next_batch(int n) {
  std::vector<schedule_space::Config> batch;
  if (space_.size() <= kEnumerateLimit) {
    while (static_cast<int>(batch.size()) < n && next_ < order_.size()) {
      schedule_space::Config c = space_.get(order_[next_++]);
      if (visited(c) || !space_.is_valid(c)) continue;
      mark_visited(c);
      batch.push_back(c);
    }
    exhausted_ = next_ >= order_.size();
    return batch;
  }
  int misses = 0;
  while (static_cast<int>(batch.size()) < n && misses < kMaxMisses) {
    schedule_space::Config c = space_.sample(rng_);
    if (visited(c)) {
      ++misses;
      continue;
    }
    misses = 0;
    mark_visited(c);
    batch.push_back(c);
  }
  exhausted_ = misses >= kMaxMisses;
  return batch;
}

}  // namespace temper::search
