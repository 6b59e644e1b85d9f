// Contenders timed side by side, as every Temper benchmark times them: in each round each
// contender runs for at least min_round_ms, and each round starts one contender later
// than the last, so that a slow spell of a shared machine falls on all of them alike;
// before each contender's round the threads of the contenders' processes must have gone
// quiet (quiet_threads.h). A contender's time is the median of its rounds.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace temper::sweep {

struct Contender {
  std::string name;
  int pid = 0;  // its process, when it runs in one of its own (0: this one)
  // Seconds per call over a round of at least min_round_ms; throws when it cannot run.
  std::function<double(double min_round_ms)> time_round;
};

struct ContenderTimes {
  std::vector<double> rounds;  // seconds per call, in round order
  double median = 0;           // 0 when it failed
  std::string failure;         // what its time_round threw, when it did: it then sits out the later rounds
};

// settled_ms, when given: the milliseconds waited for quiet threads in all.
std::vector<ContenderTimes> time_interleaved(const std::vector<Contender>& contenders, int rounds,
                                             double min_round_ms, double* settled_ms = nullptr);

}  // namespace temper::sweep
