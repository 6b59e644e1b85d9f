#include "sweep/onnxruntime_process.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

#include "compiler/ir/error.h"
#include "compiler/runtime/npy.h"

namespace temper::sweep {
namespace {

// The process is exec'd without a $PATH search: a bare "python3" is looked up here.
std::string resolve_program(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), X_OK) == 0) return program;
    throw UserError(str("no Python at '", program,
                        "': give a Python with onnxruntime (scripts/bench.sh makes "
                        "bench_logs/venv)"));
  }
  std::stringstream path(std::getenv("PATH") ? std::getenv("PATH") : "");
  for (std::string dir; std::getline(path, dir, ':');) {
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  throw UserError(str("no Python '", program, "' on $PATH: give the path of a Python with onnxruntime"));
}

std::vector<std::string> runner_args(const std::string& runner, const std::string& model, int threads,
                                     const std::map<std::string, NDArray>& inputs, const std::string& work_dir) {
  std::vector<std::string> args = {runner, model, std::to_string(threads)};
  int index = 0;
  for (const auto& [name, array] : inputs) {
    std::string path = str(work_dir, "/input_", index++, ".npy");
    write_npy(path, array);
    args.push_back(name + "=" + path);
  }
  return args;
}

}  // namespace

OnnxruntimeProcess::OnnxruntimeProcess(const std::string& python, const std::string& runner, const std::string& model,
                                       int threads, const std::map<std::string, NDArray>& inputs,
                                       const std::string& work_dir)
    : BaselineProcess("onnxruntime on " + model, resolve_program(python),
                      runner_args(runner, model, threads, inputs, work_dir)),
      work_dir_(work_dir),
      version_(description_) {
  description_ = "onnxruntime " + version_ + " CPU provider";
}

NDArray OnnxruntimeProcess::output() {
  std::string path = work_dir_ + "/onnxruntime_output.npy";
  std::string reply = request("output " + path, 600);
  if (reply != "saved") throw UserError(str(name(), ": ", reply));
  return read_npy(path);
}

}  // namespace temper::sweep
