#include "measure/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "compiler/ir/error.h"

namespace temper::measure {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kStderrTailBytes = 2048;

struct Pipe {
  int read_end = -1;
  int write_end = -1;
};

// Close-on-exec, so that no other child (a compiler the builder runs) holds an end open.
Pipe make_pipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw UserError(str("cannot create a pipe to a worker program: ", strerror(errno)));
  return {fds[0], fds[1]};
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Between fork and exec only async-signal-safe calls: the child may be a copy of a
// process with many threads, any of which held a lock at the fork.
[[noreturn]] void exec_child(const char* path, char* const argv[], int in, int out, int err) {
  int targets[3] = {in, out, err};
  for (int target = 0; target < 3; ++target) {
    if (targets[target] == target) {
      fcntl(target, F_SETFD, 0);  // dup2 onto itself would keep close-on-exec
    } else if (dup2(targets[target], target) < 0) {
      _exit(127);
    }
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_DFL);
  close_range(3, ~0U, 0);  // descriptors opened without close-on-exec elsewhere in this process
  execv(path, argv);
  _exit(127);
}

}  // namespace

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return str("exited with status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return str("died with ", abbrev ? str("SIG", abbrev) : str("signal ", sig), " (", strsignal(sig), ")");
  }
  return str("ended with wait status ", status);
}

ChildProcess::ChildProcess(const std::string& path, const std::vector<std::string>& args) {
  Pipe in = make_pipe();
  Pipe out = make_pipe();
  Pipe err = make_pipe();
  std::vector<std::string> words = {path};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  pid_ = fork();
  if (pid_ == 0) exec_child(path.c_str(), argv.data(), in.read_end, out.write_end, err.write_end);
  int fork_errno = errno;
  ::close(in.read_end);
  ::close(out.write_end);
  ::close(err.write_end);
  stdin_fd_ = in.write_end;
  stdout_fd_ = out.read_end;
  stderr_fd_ = err.read_end;
  if (pid_ < 0) {
    close_pipes();
    throw UserError(str("cannot start the worker program ", path, ": fork failed: ", strerror(fork_errno)));
  }
  fcntl(stdout_fd_, F_SETFL, O_NONBLOCK);
  fcntl(stderr_fd_, F_SETFL, O_NONBLOCK);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) kill();
  close_pipes();
}

void ChildProcess::close_pipes() {
  close_fd(stdin_fd_);
  close_fd(stdout_fd_);
  close_fd(stderr_fd_);
}

bool ChildProcess::write_line(const std::string& line) {
  std::string text = line + "\n";
  // A write to a pipe whose reader died raises SIGPIPE, which would kill this process:
  // block it on this thread and consume the one the write raised.
  sigset_t pipe_signal;
  sigset_t old_mask;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &old_mask);
  bool ok = true;
  size_t written = 0;
  while (written < text.size()) {
    ssize_t n = ::write(stdin_fd_, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ok = false;
      break;
    }
    written += static_cast<size_t>(n);
  }
  if (!ok && errno == EPIPE) {
    timespec no_wait = {0, 0};
    sigtimedwait(&pipe_signal, nullptr, &no_wait);
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return ok;
}

bool ChildProcess::drain_stderr() {
  char buffer[4096];
  while (true) {
    ssize_t n = ::read(stderr_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0;  // EAGAIN: nothing more for now; 0: the end
    stderr_tail_.append(buffer, static_cast<size_t>(n));
    if (stderr_tail_.size() > 2 * kStderrTailBytes) stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailBytes);
  }
}

ChildProcess::ReadStatus ChildProcess::read_line(std::string& line, double timeout_s) {
  Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  bool stderr_open = true;
  while (true) {
    size_t newline = stdout_buffer_.find('\n');
    if (newline != std::string::npos) {
      line = stdout_buffer_.substr(0, newline);
      stdout_buffer_.erase(0, newline + 1);
      return ReadStatus::Line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return ReadStatus::TimedOut;
    pollfd fds[2] = {{stdout_fd_, POLLIN, 0}, {stderr_open ? stderr_fd_ : -1, POLLIN, 0}};
    int ready = poll(fds, 2, static_cast<int>(std::min<long long>(left, 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw UserError(str("waiting for a worker program failed: ", strerror(errno)));
    if (fds[1].revents) stderr_open = drain_stderr();
    if (fds[0].revents) {
      char buffer[4096];
      ssize_t n = ::read(stdout_fd_, buffer, sizeof buffer);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        drain_stderr();  // what it wrote as it died
        return ReadStatus::Closed;
      }
      stdout_buffer_.append(buffer, static_cast<size_t>(n));
    }
  }
}

std::string ChildProcess::take_stderr_tail() {
  drain_stderr();
  std::string tail = stderr_tail_.size() > kStderrTailBytes
                         ? stderr_tail_.substr(stderr_tail_.size() - kStderrTailBytes)
                         : stderr_tail_;
  stderr_tail_.clear();
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  return tail;
}

void ChildProcess::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

std::string ChildProcess::wait_and_describe() {
  TEMPER_CHECK(pid_ > 0, "the worker program was already reaped");
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(1);
  int status = 0;
  while (true) {
    pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) break;
    if (done < 0 && errno != EINTR) {
      pid_ = -1;
      return str("could not be waited for: ", strerror(errno));
    }
    if (Clock::now() > deadline) {
      kill();
      return "closed its output but did not exit, and was killed";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  pid_ = -1;
  return describe_wait_status(status);
}

namespace {

bool is_executable(const std::filesystem::path& path) {
  std::error_code ignored;
  return std::filesystem::is_regular_file(path, ignored) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string find_worker_program(const std::string& name, const std::string& configured, const char* option,
                                const char* env_var, const std::string& build_path) {
  if (!configured.empty()) {
    if (is_executable(configured)) return configured;
    throw UserError(str("the worker program '", configured, "' (", option, ") is not an executable file"));
  }
  if (const char* env = std::getenv(env_var); env && *env) {
    if (is_executable(env)) return env;
    throw UserError(str("the worker program '", env, "' named by $", env_var, " is not an executable file"));
  }
  std::vector<std::filesystem::path> candidates;
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    candidates.push_back(self.parent_path() / name);
    candidates.push_back(self.parent_path().parent_path() / "measure" / name);
  }
  candidates.push_back(build_path);
  std::string tried;
  for (const std::filesystem::path& path : candidates) {
    if (is_executable(path)) return path.string();
    tried += (tried.empty() ? "" : ", ") + path.string();
  }
  throw UserError(str("cannot find the worker program ", name, "; looked in ", tried, ": build it (target ", name,
                      "), or set $", env_var, " or ", option, " to its path"));
}

}  // namespace temper::measure
