// onnxruntime as a contender of model_e2e: benchmarks/onnxruntime_runner.py started under
// a Python that has onnxruntime (the venv scripts/bench.sh makes), driven over its
// stdin/stdout line protocol (see that script). A round there is timed by the same rule
// as model_e2e's own rounds, so the contenders stay interleaved round by round.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <sys/types.h>

#include "compiler/runtime/ndarray.h"

namespace temper::bench {

class OnnxruntimeProcess {
 public:
  // Writes the inputs as .npy files into work_dir and starts the runner on model with
  // `threads` intra-op threads. UserError with the runner's own message when it fails.
  OnnxruntimeProcess(const std::string& python, const std::string& runner, const std::string& model, int threads,
                     const std::map<std::string, NDArray>& inputs, const std::string& work_dir);
  ~OnnxruntimeProcess();
  OnnxruntimeProcess(const OnnxruntimeProcess&) = delete;
  OnnxruntimeProcess& operator=(const OnnxruntimeProcess&) = delete;

  const std::string& version() const { return version_; }
  pid_t pid() const { return pid_; }
  // Seconds per call of one round of at least min_round_ms.
  double time_round(double min_round_ms);
  // The model's first output.
  NDArray output();

 private:
  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  std::string work_dir_;
  std::string version_;

  std::string request(const std::string& line);
  std::string read_line();
};

}  // namespace temper::bench
