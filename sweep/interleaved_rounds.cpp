#include "sweep/interleaved_rounds.h"

#include <algorithm>
#include <exception>

#include <unistd.h>

#include "sweep/quiet_threads.h"

namespace temper::sweep {

std::vector<ContenderTimes> time_interleaved(const std::vector<Contender>& contenders, int rounds,
                                             double min_round_ms, double* settled_ms) {
  std::vector<ContenderTimes> times(contenders.size());
  const size_t n = contenders.size();
  std::vector<int> pids = {static_cast<int>(getpid())};
  for (const Contender& c : contenders) {
    if (c.pid > 0) pids.push_back(c.pid);
  }
  double settled = 0;
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < n; ++k) {
      size_t c = (k + static_cast<size_t>(r)) % n;
      if (!times[c].failure.empty()) continue;
      settled += wait_until_quiet(pids);
      try {
        times[c].rounds.push_back(contenders[c].time_round(min_round_ms));
      } catch (const std::exception& e) {
        times[c].failure = e.what();
      }
    }
  }
  if (settled_ms) *settled_ms = settled;
  for (ContenderTimes& t : times) {
    if (!t.failure.empty() || t.rounds.empty()) continue;
    std::vector<double> sorted = t.rounds;
    std::sort(sorted.begin(), sorted.end());
    size_t mid = sorted.size() / 2;
    t.median = sorted.size() % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }
  return times;
}

}  // namespace temper::sweep
