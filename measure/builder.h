// The builder: lowers and compiles a batch of candidates in parallel, each in another
// process -- one of its long-lived compile workers (compile_pool.h), which rebuild a
// candidate from its recipe, or a forked child for a PrimFunc without one
// (compile_process.h) -- into a file the runner's worker process loads: a shared
// library for a CPU target, a DeviceProgram (device code, PTX for CUDA, and the launches)
// for a GPU target. A candidate that fails to compile, crashes or exits its compile
// process, or takes longer than the time-out (its process is killed), gets its error
// (CompileError, CompileTimeout; a GPU candidate over the device's limits,
// InstantiationError); the rest of the batch and the calling process are unaffected.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "measure/measure_types.h"

namespace temper::measure {

class CompileWorker;

struct BuilderOptions {
  int n_parallel = 0;     // compile threads (0: one per core)
  double timeout_s = 30;  // per candidate
  // Where libraries go; "": a fresh directory under $TMPDIR, temper-measure-PID-XXXXXX, removed
  // with the builder (or, after a SIGKILL, by the next builder to start on the machine).
  std::string work_dir;
};

class Builder {
 public:
  explicit Builder(BuilderOptions options = {});
  ~Builder();
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  // One artifact per input, in order. Libraries of an earlier batch may be deleted.
  std::vector<BuildArtifact> build(const std::vector<MeasureInput>& inputs);

  // How many candidates so far compiled in a forked child rather than a compile worker:
  // those without a recipe, or whose recipe did not rebuild their PrimFuncs.
  int forked_compiles() const { return forked_compiles_; }

 private:
  void remove_libraries();

  BuilderOptions options_;
  std::string work_dir_;
  bool own_work_dir_ = false;
  int batch_ = 0;
  std::string prefix_;                                   // of this Builder's library names
  std::vector<std::string> libraries_;                   // the last batch's
  std::vector<std::unique_ptr<CompileWorker>> workers_;  // one per compile thread
  std::atomic<int> forked_compiles_{0};
};

}  // namespace temper::measure
