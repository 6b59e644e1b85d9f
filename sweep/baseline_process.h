// Baseline contenders of `temper sweep` (and model_e2e), each in a process of its own: the
// vendor libraries (oneDNN, OpenBLAS, onnxruntime) are benchmark-only dependencies that
// temper must not link. A baseline that cannot start here (runner not built, library or
// Python missing, workload it does not run) is no error: the start says why, and the sweep
// records that and goes on.
//
// The runners (benchmarks/baseline_runner.cpp, benchmarks/onnxruntime_runner.py) speak one
// line protocol on stdin/stdout: a first line "ready NAME DESCRIPTION" (or "unsupported:
// WHY", "error: WHY"), then "round MS" -> "seconds PER_CALL", and "quit".
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/runtime/ndarray.h"

namespace temper::measure {
class ChildProcess;
}

namespace temper::sweep {

// A baseline contender in a process of its own.
class BaselineProcess {
 public:
  // Starts program with args and reads its first line. "ready TAG REST..." is success
  // (description(): REST); anything else, or an exit without a word, is a UserError
  // "NAME: LINE" ("onednn: unsupported: ...", "onnxruntime on m.onnx: error: ...").
  BaselineProcess(std::string name, const std::string& program, const std::vector<std::string>& args);
  virtual ~BaselineProcess();  // sends quit and waits; kills it after 5 s
  BaselineProcess(const BaselineProcess&) = delete;
  BaselineProcess& operator=(const BaselineProcess&) = delete;

  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  pid_t pid() const;
  // Seconds per call over one round of at least min_round_ms. UserError if the process
  // died, answered garbage or took more than 10 minutes past the round (it is then killed).
  double time_round(double min_round_ms);

 protected:
  // Sends line; the reply line. UserError (the process killed) as time_round says.
  std::string request(const std::string& line, double timeout_s);
  std::string description_;

 private:
  std::string read_reply(double timeout_s);
  [[noreturn]] void fail(const std::string& why);

  std::string name_;
  std::unique_ptr<measure::ChildProcess> child_;  // null once it ended or was killed
  std::string failure_;                           // why it ended, for later calls
};

struct BaselineStart {
  std::unique_ptr<BaselineProcess> process;  // null when it cannot run here
  std::string why;                           // then: why, one line a user can act on
};

// The temper-baseline program: $TEMPER_BASELINE_RUNNER if set, else beside this
// executable, else where this build tree puts it; "" when none of them is there.
std::string find_baseline_runner();

// baseline: onednn | openblas | eigen (on the CPU, with `threads` threads, 0: one per
// core) | cublas (on the first CUDA device), on a workload ("matmul:M=64,N=64,K=64").
BaselineStart start_workload_baseline(const std::string& baseline, const std::string& workload, int threads);

// onnxruntime on a model: python is a Python with onnxruntime (a path, or a name found on
// $PATH); inputs (name -> array) are written as .npy files into work_dir (made if missing).
// The runner script: $TEMPER_ONNXRUNTIME_RUNNER, else benchmarks/onnxruntime_runner.py of
// this source tree.
BaselineStart start_onnxruntime(const std::string& python, const std::string& model_path, int threads,
                                const std::map<std::string, NDArray>& inputs, const std::string& work_dir);

}  // namespace temper::sweep
