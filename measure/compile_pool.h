// The builder's compile workers, the pool of TVM's LocalBuilder: each a long-lived process,
// temper-compile-worker, exec'd once and kept across batches, that rebuilds a candidate from
// its workload and recipe (MeasureInput::recipe) and compiles it into the path it is given
// (worker_protocol.h, CompileRequest). Each compile thread of the builder owns one.
//
// Against a fork per candidate (compile_process.h) a worker copies none of the tuning
// process's page tables, whose cost grows with its resident memory over a long job, and
// shares none of its locks. Whatever a compile does to its worker -- a crash LLVM's
// recovery does not catch, exit(), a loop past the time-out (the worker is killed) -- costs
// that candidate a CompileError or CompileTimeout, and the worker a restart at the next
// candidate; its CPU time per candidate is capped at the time-out too.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "measure/measure_types.h"

namespace temper::measure {

class ChildProcess;

class CompileWorker {
 public:
  explicit CompileWorker(std::string program);  // find_compile_worker()
  ~CompileWorker();
  CompileWorker(const CompileWorker&) = delete;
  CompileWorker& operator=(const CompileWorker&) = delete;

  // input (with a recipe) compiled into path by the worker, waited for at most timeout_s;
  // a failure is the artifact's error, never an exception. nullopt when the worker rebuilt
  // other PrimFuncs than input's (a recipe that does not reproduce them): nothing was
  // compiled, and the caller compiles input's own another way.
  std::optional<BuildArtifact> compile(const MeasureInput& input, const std::string& path, double timeout_s);

  // The worker process, 0 while none runs (it starts at the first compile).
  pid_t pid() const;

 private:
  std::string program_;
  std::unique_ptr<ChildProcess> process_;
  uint64_t requests_ = 0;
};

// The compile worker's executable (find_worker_program): $TEMPER_COMPILE_WORKER, beside
// this program, or where the build put it; UserError naming where it looked.
std::string find_compile_worker();

}  // namespace temper::measure
