#include "sweep/baseline_process.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "compiler/ir/error.h"
#include "measure/child_process.h"
#include "sweep/onnxruntime_process.h"

namespace temper::sweep {
namespace {

using measure::ChildProcess;

// How long a runner may take to start (load a model, build a primitive) or to answer past
// its round: far beyond any sane kernel, short of hanging a sweep forever.
constexpr double kReplyTimeoutS = 600;
constexpr double kQuitTimeoutS = 5;

// The last line of what a dead runner wrote to stderr: a Python exception, a glibc abort.
std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  size_t newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

bool is_executable(const std::string& path) {
  std::error_code ignored;
  return std::filesystem::is_regular_file(path, ignored) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

BaselineProcess::BaselineProcess(std::string name, const std::string& program, const std::vector<std::string>& args)
    : name_(std::move(name)), child_(std::make_unique<ChildProcess>(program, args)) {
  std::string ready = read_reply(kReplyTimeoutS);
  if (ready.rfind("ready ", 0) != 0) {
    child_.reset();  // it exits by itself after unsupported:/error:; the rest are killed
    throw UserError(str(name_, ": ", ready));
  }
  size_t space = ready.find(' ', 6);  // after "ready TAG"
  description_ = space == std::string::npos ? "" : ready.substr(space + 1);
}

BaselineProcess::~BaselineProcess() {
  if (!child_ || !child_->write_line("quit")) return;  // ChildProcess's destructor kills and reaps
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kQuitTimeoutS);
  std::string line;
  while (true) {
    double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    ChildProcess::ReadStatus status = left > 0 ? child_->read_line(line, left) : ChildProcess::ReadStatus::TimedOut;
    if (status == ChildProcess::ReadStatus::Closed) {
      child_->wait_and_describe();
      return;
    }
    if (status == ChildProcess::ReadStatus::TimedOut) return;  // killed by ChildProcess's destructor
  }
}

pid_t BaselineProcess::pid() const {
  return child_ ? child_->pid() : -1;
}

void BaselineProcess::fail(const std::string& why) {
  child_.reset();  // kills it if it still runs, and reaps it
  failure_ = str(name_, ": ", why);
  throw UserError(failure_);
}

std::string BaselineProcess::read_reply(double timeout_s) {
  std::string line;
  switch (child_->read_line(line, timeout_s)) {
    case ChildProcess::ReadStatus::Line:
      return line;
    case ChildProcess::ReadStatus::TimedOut:
      fail(str("no reply within ", timeout_s, " s; the process was killed"));
    case ChildProcess::ReadStatus::Closed:
      break;
  }
  std::string stderr_tail = last_line(child_->take_stderr_tail());
  std::string ended = child_->wait_and_describe();
  fail(str("the process ", ended, " without a reply", stderr_tail.empty() ? "" : ": " + stderr_tail));
}

std::string BaselineProcess::request(const std::string& line, double timeout_s) {
  if (!child_) throw UserError(failure_.empty() ? str(name_, ": the process has ended") : failure_);
  child_->write_line(line);  // false if it died: the read below says how
  return read_reply(timeout_s);
}

double BaselineProcess::time_round(double min_round_ms) {
  std::string reply = request(str("round ", min_round_ms), kReplyTimeoutS + min_round_ms / 1e3);
  char* end = nullptr;
  double seconds = reply.rfind("seconds ", 0) == 0 ? std::strtod(reply.c_str() + 8, &end) : 0;
  if (!end || *end != '\0' || !(seconds > 0)) fail(str("answered '", reply, "' to a round, not seconds per call"));
  return seconds;
}

std::string find_baseline_runner() {
  if (const char* env = std::getenv("TEMPER_BASELINE_RUNNER"); env && *env) return is_executable(env) ? env : "";
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error && is_executable(self.parent_path() / "temper-baseline")) return self.parent_path() / "temper-baseline";
  return is_executable(TEMPER_BASELINE_RUNNER_BUILD_PATH) ? TEMPER_BASELINE_RUNNER_BUILD_PATH : "";
}

BaselineStart start_workload_baseline(const std::string& baseline, const std::string& workload, int threads) {
  if (baseline != "onednn" && baseline != "openblas" && baseline != "eigen" && baseline != "cublas") {
    return {nullptr, str("unknown baseline '", baseline, "': onednn, openblas, eigen or cublas")};
  }
  std::string runner = find_baseline_runner();
  if (runner.empty()) {
    const char* env = std::getenv("TEMPER_BASELINE_RUNNER");
    return {nullptr, str("the baseline runner temper-baseline is not built here",
                         env && *env ? str(" ($TEMPER_BASELINE_RUNNER=", env, " is no executable)") : "",
                         ": build the benchmarks (scripts/bench.sh, or cmake -DTEMPER_BUILD_BENCHMARKS=ON with "
                         "libdnnl-dev and libopenblas-dev from scripts/install-deps.sh --bench)")};
  }
  try {
    return {std::make_unique<BaselineProcess>(baseline, runner,
                                              std::vector<std::string>{baseline, workload, std::to_string(threads)}),
            ""};
  } catch (const UserError& e) {
    return {nullptr, e.what()};
  }
}

BaselineStart start_onnxruntime(const std::string& python, const std::string& model_path, int threads,
                                const std::map<std::string, NDArray>& inputs, const std::string& work_dir) {
  if (python.empty()) {
    return {nullptr,
            "no Python with onnxruntime given: pass --onnxruntime-python PY (scripts/bench.sh makes bench_logs/venv)"};
  }
  const char* env = std::getenv("TEMPER_ONNXRUNTIME_RUNNER");
  std::string runner = env && *env ? env : TEMPER_ONNXRUNTIME_RUNNER_PATH;
  std::error_code error;
  if (!std::filesystem::is_regular_file(runner, error)) {
    return {nullptr, str("onnxruntime's runner script ", runner,
                         " is missing: set $TEMPER_ONNXRUNTIME_RUNNER to "
                         "benchmarks/onnxruntime_runner.py of Temper's sources")};
  }
  try {
    std::filesystem::create_directories(work_dir, error);
    return {std::make_unique<OnnxruntimeProcess>(python, runner, model_path, threads, inputs, work_dir), ""};
  } catch (const UserError& e) {
    return {nullptr, e.what()};
  }
}

}  // namespace temper::sweep
