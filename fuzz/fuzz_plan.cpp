// A built model's plan and weights (`temper run OUT.so` loads OUT.plan.json and
// OUT.weights): the input is the plan's text, a NUL byte, then the weights' bytes, written
// to two files and loaded (compiler/graph/execution_plan.h).
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "compiler/graph/execution_plan.h"
#include "fuzz/fuzz_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = std::filesystem::temp_directory_path() / ("temper_fuzz_plan_" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  std::string bytes = temper::fuzz::as_string(data, size);
  size_t split = bytes.find('\0');
  std::string plan = bytes.substr(0, split);
  std::string weights = split == std::string::npos ? "" : bytes.substr(split + 1);
  std::ofstream(dir / "model.plan.json", std::ios::binary | std::ios::trunc) << plan;
  std::ofstream(dir / "model.weights", std::ios::binary | std::ios::trunc) << weights;
  temper::fuzz::refusal_is_fine(
      [&] { temper::graph::load_execution_plan(dir / "model.plan.json", dir / "model.weights"); });
  return 0;
}
