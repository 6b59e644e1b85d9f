// The runner's side of the worker protocol (worker_protocol.h). One worker process at a
// time, started on the first candidate that needs it and again after one was lost: a
// candidate that kills the worker or outlives the time-out costs that candidate and one
// restart, never the batch.
#include "measure/runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "compiler/ir/error.h"
#include "measure/child_process.h"
#include "measure/worker_protocol.h"

namespace temper::measure {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kWorkerName = "temper-measure-worker";

// How long the worker may take to prepare a workload's test data (the reference outputs
// of a big op on one core take seconds to minutes) before the candidate's clock starts.
constexpr double kPrepareTimeoutSeconds = 600;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string with_stderr(std::string message, const std::string& tail) {
  if (!tail.empty()) message += "; its last output: " + tail;
  return message;
}

}  // namespace

struct Runner::Worker {
  explicit Worker(const std::string& path) : process(path, {}) {}
  ChildProcess process;
};

Runner::Runner(RunnerOptions options) : options_(std::move(options)) {
  if (options_.number < 1) throw UserError(str("RunnerOptions::number must be at least 1, got ", options_.number));
  if (options_.repeat < 1) throw UserError(str("RunnerOptions::repeat must be at least 1, got ", options_.repeat));
  if (!(options_.timeout_s > 0)) {
    throw UserError(str("RunnerOptions::timeout_s must be positive, got ", options_.timeout_s));
  }
  if (options_.threads < 0) throw UserError(str("RunnerOptions::threads must be 0 or more, got ", options_.threads));
  if (options_.memory_limit_mb < 0) {
    throw UserError(str("RunnerOptions::memory_limit_mb must be 0 (half the memory) or more, got ",
                        options_.memory_limit_mb));
  }
  if (options_.memory_limit_mb == 0) {
    options_.memory_limit_mb = sysconf(_SC_PHYS_PAGES) / 2 * (sysconf(_SC_PAGESIZE) / 1024) / 1024;
  }
  if (options_.cpu_time_limit_s < 0) {
    throw UserError(str("RunnerOptions::cpu_time_limit_s must be 0 (timeout_s on every thread) or more, got ",
                        options_.cpu_time_limit_s));
  }
  if (options_.cpu_time_limit_s == 0) {
    int threads = options_.threads > 0 ? options_.threads : static_cast<int>(std::thread::hardware_concurrency());
    options_.cpu_time_limit_s = options_.timeout_s * std::max(threads, 1) + 1;
  }
  options_.worker_path = find_worker_program(kWorkerName, options_.worker_path, "RunnerOptions::worker_path",
                                             "TEMPER_MEASURE_WORKER", TEMPER_MEASURE_WORKER_BUILD_PATH);
}

Runner::~Runner() = default;

pid_t Runner::worker_pid() const {
  return worker_ ? worker_->process.pid() : 0;
}

std::vector<MeasureResult> Runner::run(const std::vector<MeasureInput>& inputs,
                                       const std::vector<BuildArtifact>& artifacts) {
  if (inputs.size() != artifacts.size()) {
    throw UserError(str("Runner::run takes one artifact per input, got ", inputs.size(), " inputs and ",
                        artifacts.size(), " artifacts"));
  }
  std::vector<MeasureResult> results;
  results.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) results.push_back(run_one(inputs[i], artifacts[i]));
  return results;
}

MeasureResult Runner::run_one(const MeasureInput& input, const BuildArtifact& artifact) {
  MeasureResult result;
  result.compile_seconds = artifact.compile_seconds;
  if (artifact.error != MeasureError::None) {
    result.error = artifact.error;
    result.message = artifact.message;
    return result;
  }
  Clock::time_point start = Clock::now();
  WorkerRequest request;
  request.workload = input.workload.to_string();
  request.target = input.target.to_string();
  request.library = artifact.library_path;
  request.function = artifact.function_name;
  if (!artifact.pack_function.empty()) {
    request.pack_function = artifact.pack_function;
    request.packed_input = input.packed_input;
    const Buffer& packed = input.func.params[input.packed_input];
    for (const Expr& e : packed->shape) {
      const int64_t* c = as_const_int(e);
      TEMPER_CHECK(c, "the packed input ", packed->name, " has a non-constant extent");
      request.packed_shape.push_back(*c);
    }
  }
  request.number = options_.number;
  request.repeat = options_.repeat;
  request.min_repeat_ms = options_.min_repeat_ms;
  request.cooldown_ms = options_.cooldown_ms;
  request.flush_cache = options_.flush_cache;
  request.cold_caches = options_.cold_caches;
  request.threads = options_.threads;
  request.memory_limit_mb = options_.memory_limit_mb;
  request.cpu_time_limit_s = options_.cpu_time_limit_s;
  char token[17];
  std::snprintf(token, sizeof token, "%016llx", static_cast<unsigned long long>(tokens_()));
  request.token = token;
  std::string what = str(artifact.function_name, " (", artifact.library_path, ")");

  if (!worker_) worker_ = std::make_unique<Worker>(options_.worker_path);
  ChildProcess& process = worker_->process;
  std::string line;
  ChildProcess::ReadStatus status = ChildProcess::ReadStatus::Closed;
  bool candidate_started = false;  // the worker said ready: the candidate's clock runs
  if (process.write_line(encode_request(request))) {
    status = process.read_line(line, kPrepareTimeoutSeconds);
    if (status == ChildProcess::ReadStatus::Line && is_ready(line, request.token)) {
      candidate_started = true;
      status = process.read_line(line, options_.timeout_s);
    }
  }

  switch (status) {
    case ChildProcess::ReadStatus::Line:
      try {
        WorkerReply reply = decode_reply(line);
        if (reply.token != request.token) {
          // The candidate wrote into the reply channel (a forged time, or anything): the
          // worker's own reply comes later, so the worker is out of step and replaced.
          throw UserError(str("a line without this request's token, so written by the candidate into the "
                              "worker's reply channel: ", line.substr(0, 200)));
        }
        result.costs = std::move(reply.costs);
        result.error = reply.error;
        result.message = std::move(reply.message);
        if (reply.restart) worker_.reset();
      } catch (const UserError& e) {
        // Out of step with the worker: start a fresh one for the next candidate.
        result.error = MeasureError::RuntimeError;
        result.message = with_stderr(str("the measure worker answered nonsense for ", what, ": ", e.what()),
                                     process.take_stderr_tail());
        worker_.reset();
      }
      break;
    case ChildProcess::ReadStatus::TimedOut:
      result.error = MeasureError::RunTimeout;
      result.message = candidate_started ? str("timed out after ", options_.timeout_s, " s running ", what,
                                               "; the measure worker was killed")
                                         : str("preparing the test data of ", request.workload, " took longer than ",
                                               kPrepareTimeoutSeconds, " s; the measure worker was killed");
      process.kill();
      worker_.reset();
      break;
    case ChildProcess::ReadStatus::Closed: {
      std::string how = process.wait_and_describe();
      if (how.find("SIGXCPU") != std::string::npos) {
        how += str(": the candidate used more than its CPU-time limit of ", options_.cpu_time_limit_s, " s");
      }
      result.error = MeasureError::RuntimeError;
      result.message = with_stderr(str("the measure worker ", how, " running ", what), process.take_stderr_tail());
      worker_.reset();
      break;
    }
  }
  // A GPU candidate that failed while running may have left the device's context unusable
  // for every later launch (CUDA's sticky errors, such as an illegal address): the next
  // candidate gets a fresh worker and context.
  if (worker_ && candidate_started && input.target.is_gpu() && result.error == MeasureError::RuntimeError) {
    worker_.reset();
  }
  if (worker_) worker_->process.take_stderr_tail();  // start the next candidate's with nothing
  if (result.error == MeasureError::None) {
    if (result.costs.empty()) {
      result.error = MeasureError::RuntimeError;
      result.message = str("the measure worker returned no times for ", what);
    } else {
      double sum = 0;
      for (double c : result.costs) sum += c;
      result.mean = sum / static_cast<double>(result.costs.size());
    }
  } else {
    result.costs.clear();
  }
  result.run_seconds = seconds_since(start);
  return result;
}

}  // namespace temper::measure
