#include "measure/compile_pool.h"

#include <chrono>
#include <filesystem>
#include <vector>

#include "compiler/ir/error.h"
#include "compiler/ir/structural_equal.h"
#include "measure/child_process.h"
#include "measure/compile_process.h"
#include "measure/worker_protocol.h"

namespace temper::measure {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

std::string find_compile_worker() {
  return find_worker_program("temper-compile-worker", "", "BuilderOptions", "TEMPER_COMPILE_WORKER",
                             TEMPER_COMPILE_WORKER_BUILD_PATH);
}

CompileWorker::CompileWorker(std::string program) : program_(std::move(program)) {}

CompileWorker::~CompileWorker() = default;

pid_t CompileWorker::pid() const {
  return process_ ? process_->pid() : 0;
}

std::optional<BuildArtifact> CompileWorker::compile(const MeasureInput& input, const std::string& path,
                                                    double timeout_s) {
  BuildArtifact artifact = named_artifact(input);
  Clock::time_point start = Clock::now();
  auto fail = [&](MeasureError error, std::string message) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);  // whatever part of it was written
    artifact.error = error;
    artifact.message = std::move(message);
    artifact.compile_seconds = seconds_since(start);
    return artifact;
  };

  CompileRequest request{++requests_,
                         input.workload.to_string(),
                         input.target.to_string(),
                         input.recipe,
                         structural_hash(input.func),
                         input.pack ? structural_hash(*input.pack) : 0,
                         path,
                         timeout_s};
  std::string line = encode_compile_request(request);
  // A worker that died since its last candidate (killed from outside) is replaced once.
  for (int attempt = 0;; ++attempt) {
    try {
      if (!process_) process_ = std::make_unique<ChildProcess>(program_, std::vector<std::string>{});
    } catch (const UserError& e) {
      return fail(MeasureError::CompileError, e.what());
    }
    if (process_->write_line(line)) break;
    process_.reset();
    if (attempt == 1) {
      return fail(MeasureError::CompileError, str("the compile worker ", program_, " does not take requests"));
    }
  }

  std::string reply_line;
  ChildProcess::ReadStatus status = process_->read_line(reply_line, timeout_s);
  if (status == ChildProcess::ReadStatus::TimedOut) {
    process_->kill();
    process_.reset();
    return fail(MeasureError::CompileTimeout,
                str("compiling took longer than the time-out of ", timeout_s, " s; its compile worker was killed"));
  }
  if (status == ChildProcess::ReadStatus::Closed) {
    std::string how = process_->wait_and_describe();
    std::string tail = process_->take_stderr_tail();
    process_.reset();
    return fail(MeasureError::CompileError,
                str("the compile worker ", how, " compiling ", input.func.name, " before it answered; the job goes on",
                    tail.empty() ? "" : "; its last output: " + tail));
  }
  CompileReply reply;
  try {
    reply = decode_compile_reply(reply_line);
    if (reply.id != request.id) throw UserError(str("a reply to request ", reply.id, ", not ", request.id));
  } catch (const UserError& e) {
    process_->kill();
    process_.reset();
    return fail(MeasureError::CompileError, str("the compile worker answered nonsense: ", e.what()));
  }
  process_->take_stderr_tail();  // the next candidate's starts with nothing
  if (!reply.rebuilt) return std::nullopt;
  if (reply.error != MeasureError::None) return fail(reply.error, reply.message);
  artifact.library_path = path;
  artifact.compile_seconds = seconds_since(start);
  return artifact;
}

}  // namespace temper::measure
