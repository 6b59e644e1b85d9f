// onnxruntime as a contender of model_e2e and temper sweep: benchmarks/onnxruntime_runner.py
// started under a Python that has onnxruntime (the venv scripts/bench.sh makes), driven
// over its stdin/stdout line protocol (see that script). A round there is timed by the
// same rule as the callers' own rounds, so the contenders stay interleaved round by round.
#pragma once

#include <map>
#include <string>

#include "compiler/runtime/ndarray.h"
#include "sweep/baseline_process.h"

namespace temper::sweep {

class OnnxruntimeProcess : public BaselineProcess {
 public:
  // Writes the inputs as .npy files into work_dir and starts the runner on model with
  // `threads` intra-op threads. UserError with the runner's own message when it fails.
  // python: a path, or a name looked up on $PATH.
  OnnxruntimeProcess(const std::string& python, const std::string& runner, const std::string& model, int threads,
                     const std::map<std::string, NDArray>& inputs, const std::string& work_dir);

  const std::string& version() const { return version_; }
  // The model's first output.
  NDArray output();

 private:
  std::string work_dir_;
  std::string version_;
};

}  // namespace temper::sweep
