#include "sweep/quiet_threads.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace temper::sweep {
namespace {

// Nanoseconds that process pid's threads have run (/proc/PID/task/TID/schedstat, whose first
// field is the time on a CPU), but for thread `except`.
int64_t threads_cpu_ns(int pid, int except) {
  int64_t total = 0;
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
    if (task.path().filename() == std::to_string(except)) continue;
    std::ifstream f(task.path() / "schedstat");
    int64_t ns = 0;
    if (f >> ns) total += ns;
  }
  return total;
}

}  // namespace

double wait_until_quiet(const std::vector<int>& pids, double window_ms, double max_wait_ms) {
  int self = getpid();
  int caller = static_cast<int>(syscall(SYS_gettid));
  auto cpu_ns = [&] {
    int64_t total = 0;
    for (int pid : pids) total += threads_cpu_ns(pid, pid == self ? caller : 0);
    return total;
  };
  auto start = std::chrono::steady_clock::now();
  auto window = std::chrono::duration<double, std::milli>(window_ms);
  double waited_ms = 0;
  while (waited_ms < max_wait_ms) {
    int64_t before = cpu_ns();
    std::this_thread::sleep_for(window);
    int64_t ran = cpu_ns() - before;
    waited_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (static_cast<double>(ran) < 0.1 * window_ms * 1e6) break;
  }
  return waited_ms;
}

}  // namespace temper::sweep
