// What tuning jobs that run at once in one process (one per target: `temper tune --target
// llvm --target cuda`) share: the machine. Within one job the runner never times while
// the builder compiles; across jobs, a CPU target's timings need the same quiet, or the
// other jobs' compiles would slow its candidates and skew its search. So each build and
// each timing phase runs through run(): an exclusive phase (a CPU target's timing) waits
// for the phases under way to end and keeps new ones off while it runs; the others
// (builds, a GPU target's timing) run side by side. A waiting exclusive phase goes before
// new shared ones, so busy GPU jobs cannot starve a CPU job.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>

namespace temper::measure {

class MachineShare {
 public:
  // Runs work (on this thread) once its turn has come; an exception from work passes
  // through, and the turn ends with it.
  void run(bool exclusive, const std::function<void()>& work);

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int shared_running_ = 0;
  bool exclusive_running_ = false;
  int exclusive_waiting_ = 0;
};

}  // namespace temper::measure
