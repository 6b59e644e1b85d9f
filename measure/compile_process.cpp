#include "measure/compile_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <shared_mutex>

#include "compiler/codegen/build.h"
#include "compiler/codegen/gpu/device_program.h"
#include "compiler/codegen/gpu/gpu_limits.h"
#include "compiler/ir/error.h"
#include "compiler/lower/lower.h"
#include "measure/child_process.h"

namespace temper::measure {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Held shared by the builder's threads while they allocate, and exclusive around fork: a
// child must not start with an allocator lock taken by a thread that does not exist in it
// (glibc's malloc guards itself at fork; the allocator of GCC 12's AddressSanitizer does
// not, and its children hung).
std::shared_mutex& fork_mutex() {
  static std::shared_mutex mutex;
  return mutex;
}

}  // namespace

BuildArtifact named_artifact(const MeasureInput& input) {
  BuildArtifact artifact;
  artifact.function_name = input.func.name;
  if (input.pack) artifact.pack_function = input.pack->name;
  return artifact;
}

BuildArtifact compile_in_this_process(const MeasureInput& input, const std::string& path) {
  BuildArtifact artifact = named_artifact(input);
  Clock::time_point start = Clock::now();
  try {
    if (input.target.is_gpu()) {
      build_device_program({lower(input.func)}, input.target).save(path);
    } else {
      std::vector<PrimFunc> funcs = {input.func};
      if (input.pack) funcs.push_back(*input.pack);
      export_library(funcs, input.target, path);
    }
    artifact.library_path = path;
  } catch (const GpuLimitError& e) {  // a schedule the device cannot launch: never compiled
    artifact.error = MeasureError::InstantiationError;
    artifact.message = e.what();
  } catch (const std::exception& e) {  // UserError (ScheduleError, NVRTC's log), InternalError, bad_alloc
    artifact.error = MeasureError::CompileError;
    artifact.message = e.what();
  }
  artifact.compile_seconds = seconds_between(start, Clock::now());
  return artifact;
}

namespace {

// What the child sends back: this header, then message_bytes of the artifact's message.
struct ReplyHeader {
  int32_t error;
  double compile_seconds;
  uint64_t message_bytes;
};

std::string encode_reply(const BuildArtifact& artifact) {
  ReplyHeader header{static_cast<int32_t>(artifact.error), artifact.compile_seconds, artifact.message.size()};
  std::string reply(reinterpret_cast<const char*>(&header), sizeof header);
  return reply + artifact.message;
}

// Whether reply holds a whole answer; if so, its fields go into artifact.
bool decode_reply(const std::string& reply, BuildArtifact& artifact) {
  if (reply.size() < sizeof(ReplyHeader)) return false;
  ReplyHeader header;
  std::memcpy(&header, reply.data(), sizeof header);
  if (reply.size() - sizeof header < header.message_bytes) return false;
  artifact.error = static_cast<MeasureError>(header.error);
  artifact.compile_seconds = header.compile_seconds;
  artifact.message = reply.substr(sizeof header, header.message_bytes);
  return true;
}

// The child: compiles, answers on reply_fd and leaves without running this process's
// exit handlers (they belong to the parent's state).
[[noreturn]] void run_compile_child(const MeasureInput& input, const std::string& path, double timeout_s, pid_t parent,
                                    int reply_fd) {
  // Killed when the thread that forked it ends, so with the process that waits for it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  // Ctrl-C reaches the whole process group: the tuning job stops after this batch, and
  // the compiles it waits for finish rather than die as compile errors.
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  // Nothing inherited but the standard descriptors and the reply pipe.
  if (reply_fd > 3) close_range(3, reply_fd - 1, 0);
  close_range(reply_fd + 1, ~0U, 0);
  // A loop without end is killed by the parent at the time-out; this cap stops it too
  // should the parent be stopped (SIGSTOP) rather than dead.
  rlim_t cpu_seconds = static_cast<rlim_t>(std::ceil(timeout_s)) + 1;
  rlimit cpu{cpu_seconds, cpu_seconds + 1};
  setrlimit(RLIMIT_CPU, &cpu);
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);

  BuildArtifact artifact;
  try {
    artifact = compile_in_this_process(input, path);
  } catch (...) {
    artifact.error = MeasureError::CompileError;
    artifact.message = "compiling threw an unknown exception";
  }
  std::string reply = encode_reply(artifact);
  for (size_t written = 0; written < reply.size();) {
    ssize_t n = write(reply_fd, reply.data() + written, reply.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(2);
    written += static_cast<size_t>(n);
  }
  _exit(0);
}

enum class ReadOutcome { Answered, Closed, TimedOut };

// Reads the child's reply from fd until it is whole, the child closed the pipe (it ended)
// or the deadline passed. allocating is released while it waits.
ReadOutcome read_reply(int fd, Clock::time_point deadline, BuildArtifact& artifact,
                       std::shared_lock<std::shared_mutex>& allocating) {
  std::string reply;
  char buffer[4096];
  while (!decode_reply(reply, artifact)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return ReadOutcome::TimedOut;
    pollfd p{fd, POLLIN, 0};
    allocating.unlock();
    int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    allocating.lock();
    if (ready < 0 && errno != EINTR) return ReadOutcome::Closed;
    if (ready <= 0) continue;
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ReadOutcome::Closed;
    reply.append(buffer, static_cast<size_t>(n));
  }
  return ReadOutcome::Answered;
}

int reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

BuildArtifact compile_in_child_process(const MeasureInput& input, const std::string& path, double timeout_s) {
  std::shared_lock allocating(fork_mutex());
  BuildArtifact artifact = named_artifact(input);
  Clock::time_point start = Clock::now();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    artifact.error = MeasureError::CompileError;
    artifact.message = str("cannot create a pipe to a compile process: ", strerror(errno));
    return artifact;
  }
  pid_t parent = getpid();
  allocating.unlock();
  pid_t pid;
  {
    std::unique_lock forking(fork_mutex());
    pid = fork();
  }
  if (pid == 0) {
    close(fds[0]);
    run_compile_child(input, path, timeout_s, parent, fds[1]);
  }
  allocating.lock();
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    artifact.error = MeasureError::CompileError;
    artifact.message = str("cannot start a process to compile ", input.func.name, " (fork): ", strerror(errno));
    return artifact;
  }
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  ReadOutcome outcome = read_reply(fds[0], deadline, artifact, allocating);
  close(fds[0]);
  if (outcome == ReadOutcome::TimedOut) kill(pid, SIGKILL);
  int status = reap(pid);
  if (outcome != ReadOutcome::Answered) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);  // whatever part of it was written
    artifact.error = outcome == ReadOutcome::TimedOut ? MeasureError::CompileTimeout : MeasureError::CompileError;
    artifact.message =
        outcome == ReadOutcome::TimedOut
            ? str("compiling took longer than the time-out of ", timeout_s, " s; its compile process was killed")
            : str("the process compiling ", input.func.name, " ", describe_wait_status(status),
                  " before it answered; the job goes on");
  } else if (artifact.error == MeasureError::None) {
    artifact.library_path = path;
  }
  artifact.compile_seconds = seconds_between(start, Clock::now());
  return artifact;
}

}  // namespace temper::measure
