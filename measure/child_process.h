// A child program started with fork+exec whose stdin, stdout and stderr are pipes to this
// process: the runner's handle on its worker. Lines go in on stdin and come back on
// stdout; stderr is read along the way and its tail kept, so that the words of a child
// that dies (a glibc abort message, an assertion) can be reported.
//
// The child is exec'd right after fork (this process may have OpenMP and LLVM threads; a
// forked copy of them must run nothing but exec). It gets only its three pipes: every
// other descriptor is closed across exec. Writing never raises SIGPIPE in this process.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace temper::measure {

class ChildProcess {
 public:
  // Starts the program at path with args (argv[1...]); UserError if the pipes or fork
  // fail. A program that cannot be exec'd exits with status 127.
  ChildProcess(const std::string& path, const std::vector<std::string>& args);
  ~ChildProcess();  // kills the child if it still runs, and reaps it
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Writes line and a newline to the child's stdin; false when the child has closed it
  // (it died).
  bool write_line(const std::string& line);

  enum class ReadStatus { Line, Closed, TimedOut };
  // Waits at most timeout_s for a line on the child's stdout and stores it, newline
  // removed, in line. Closed: the child closed its stdout (it exited or died).
  ReadStatus read_line(std::string& line, double timeout_s);

  // The last lines (at most about 2 KB) the child wrote to stderr since the last call.
  std::string take_stderr_tail();

  // Sends SIGKILL and reaps the child.
  void kill();
  // Reaps the child, which has closed its stdout, and says how it ended: "exited with
  // status 3", "died with SIGSEGV (Segmentation fault)". A child still running a second
  // after closing its stdout is killed.
  std::string wait_and_describe();

 private:
  // Reads what stderr holds now, without blocking; false at its end.
  bool drain_stderr();
  void close_pipes();

  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  std::string stdout_buffer_;  // read but not yet returned as a line
  std::string stderr_tail_;
};

// The executable of a worker program `name` (temper-measure-worker, temper-compile-worker):
// the configured path (named by `option` in errors), $env_var, next to this executable
// (or, for a program of the build tree such as build/cli/temper or a test, in
// ../measure/), then build_path, where the build put it. UserError naming what was tried.
std::string find_worker_program(const std::string& name, const std::string& configured, const char* option,
                                const char* env_var, const std::string& build_path);

// How a process ended, from waitpid's status: "exited with status 3", "died with SIGSEGV
// (Segmentation fault)".
std::string describe_wait_status(int status);

}  // namespace temper::measure
