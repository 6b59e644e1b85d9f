// The runner: times compiled candidates in a separate worker process (temper-measure-worker),
// so a candidate that crashes, aborts or never returns costs that candidate only: the
// worker is killed if need be, restarted, and the batch goes on.
//
// For each candidate the worker loads the library, runs it once on random inputs and
// checks the outputs against the op's reference (a wrong result has no time), then takes,
// on a copy of the data at page offsets drawn for this candidate (buffer_placement.h),
// `repeat` timings of `number` calls each (more calls when a group is shorter than
// min_repeat_ms), optionally flushing the caches before each group and sleeping
// cooldown_ms between groups. Candidates are timed one at a time, never while the
// builder compiles.
//
// A GPU candidate runs on its target's device, which the worker opens once per target
// string: it is checked through a call on host data (copies in and out), then timed on
// buffers already on the device, by the device's clock (GpuModule::time), so a
// cost is the kernels' time per call without the copies. A device that cannot be opened,
// a failed launch or exhausted device memory is a RuntimeError of that candidate.
#pragma once

#include <sys/types.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "measure/measure_types.h"

namespace temper::measure {

struct RunnerOptions {
  int number = 1;            // calls per timed group (at least)
  int repeat = 3;            // timed groups; costs has one entry per group
  double min_repeat_ms = 0;  // a group lasts at least this long
  double cooldown_ms = 0;    // pause between groups
  bool flush_cache = false;  // write a buffer larger than the last-level cache before each group
  // Evict the op's weight inputs (OpInstance::weight_inputs) and its outputs from the
  // caches before each timed call, as a model's run finds them (CPU targets): the weights
  // of the whole model pass through the caches once per inference, and a kernel writes its
  // output into storage that the kernels since its last use have pushed out (MobileNetV2,
  // Zen 4: each kernel with its output evicted first ran within 0.85-1.6x of its time in
  // the model, left in the caches 1.3-3x faster than there); a blocked activation input
  // is first written back by the threads split by rows, as the model's previous kernel
  // leaves it (cache_eviction.h: write_rows_split). Off: every call after the
  // first finds them where the last call left them, which favours schedules that re-read
  // the weights from the last-level cache and hides the cost of writing a cold output.
  bool cold_caches = true;
  double timeout_s = 10;     // per candidate: checking and all groups
  int threads = 0;           // threads of parallel loops in the worker (0: one per core)
  // How much a CPU candidate may grow the worker's address space (RLIMIT_AS, set around
  // its calls): one that allocates without end fails there instead of taking the
  // machine's memory. 0: half of the machine's memory.
  int64_t memory_limit_mb = 0;
  // The CPU time a candidate's calls may take (RLIMIT_CPU, set around them; the worker
  // dies with SIGXCPU past it): a backstop to timeout_s, which the runner enforces and so
  // cannot while it is stopped. 0: timeout_s on every thread, plus a second.
  double cpu_time_limit_s = 0;
  std::string worker_path;   // "" : $TEMPER_MEASURE_WORKER, else next to this executable, else the build tree's
};

class Runner {
 public:
  explicit Runner(RunnerOptions options = {});
  ~Runner();  // stops the worker
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // One result per input; an artifact with an error is passed through without running.
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildArtifact>& artifacts);

  // The worker's process id; 0 before the first candidate and after a worker was lost
  // (the next candidate starts a new one).
  pid_t worker_pid() const;

 private:
  struct Worker;
  MeasureResult run_one(const MeasureInput& input, const BuildArtifact& artifact);
  RunnerOptions options_;
  std::unique_ptr<Worker> worker_;
  std::mt19937_64 tokens_{std::random_device{}()};  // each request's token (worker_protocol.h)
};

}  // namespace temper::measure
