// The builder's compile threads: a batch is a queue of candidates that n_parallel threads
// take from, each compiling its candidate in its own compile worker (compile_pool.h) --
// or, for a PrimFunc without a recipe or one its recipe does not reproduce, in a forked
// child (compile_process.h) -- and waiting for it, at most the time-out. A candidate that
// crashes its compiler, never ends or exits is killed with its process; the tuning job
// and the rest of the batch go on.
#include "measure/builder.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <latch>
#include <optional>
#include <string_view>
#include <thread>

#include "compiler/ir/error.h"
#include "measure/compile_pool.h"
#include "measure/compile_process.h"

namespace temper::measure {

namespace {

namespace fs = std::filesystem;

// A work directory is named temper-measure-PID-XXXXXX after the process that made it.
constexpr std::string_view kWorkDirPrefix = "temper-measure-";

// The work directories of processes that no longer run (a job killed by SIGKILL cannot
// remove its own): removed when the next Builder starts. A directory whose process still
// runs, or whose name has no process id, is left alone.
void remove_stale_work_dirs(const fs::path& temp) {
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(temp, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(kWorkDirPrefix, 0) != 0) continue;
    std::string rest = name.substr(kWorkDirPrefix.size());
    size_t dash = rest.find('-');
    if (dash == std::string::npos || dash == 0) continue;
    pid_t pid = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + dash, pid);
    if (ec != std::errc() || end != rest.data() + dash || pid <= 0) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code ignored;
    if (entry.is_directory(ignored)) fs::remove_all(entry.path(), ignored);
  }
}

std::string make_work_dir() {
  fs::path temp = fs::temp_directory_path();
  remove_stale_work_dirs(temp);
  std::string pattern = (temp / str(kWorkDirPrefix, getpid(), "-XXXXXX")).string();
  if (!mkdtemp(pattern.data())) throw UserError(str("cannot create a work directory like ", pattern));
  return pattern;
}

// Library names unique to this process and Builder, so that builders sharing a work
// directory never overwrite each other's libraries.
std::string builder_prefix() {
  static std::atomic<int> builders{0};
  return str("p", getpid(), "_", builders++);
}

}  // namespace

Builder::Builder(BuilderOptions options) : options_(std::move(options)) {
  if (options_.n_parallel < 0) {
    throw UserError(str("BuilderOptions::n_parallel must be 0 (one per core) or more, got ", options_.n_parallel));
  }
  if (!(options_.timeout_s > 0)) {
    throw UserError(str("BuilderOptions::timeout_s must be positive, got ", options_.timeout_s));
  }
  if (options_.n_parallel == 0)
    options_.n_parallel = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (options_.work_dir.empty()) {
    work_dir_ = make_work_dir();
    own_work_dir_ = true;
  } else {
    std::error_code error;
    fs::create_directories(options_.work_dir, error);
    if (error || !fs::is_directory(options_.work_dir)) {
      throw UserError(str("cannot use the build work directory ", options_.work_dir, ": ", error.message()));
    }
    work_dir_ = options_.work_dir;
  }
  prefix_ = builder_prefix();
  std::string compile_worker = find_compile_worker();
  for (int t = 0; t < options_.n_parallel; ++t) workers_.push_back(std::make_unique<CompileWorker>(compile_worker));
}

Builder::~Builder() {
  remove_libraries();
  std::error_code ignored;
  if (own_work_dir_) fs::remove_all(work_dir_, ignored);
}

void Builder::remove_libraries() {
  std::error_code ignored;
  for (const std::string& path : libraries_) fs::remove(path, ignored);
  libraries_.clear();
}

std::vector<BuildArtifact> Builder::build(const std::vector<MeasureInput>& inputs) {
  remove_libraries();
  std::vector<std::string> paths;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const char* suffix = inputs[i].target.is_gpu() ? ".gpu.json" : ".so";
    paths.push_back((fs::path(work_dir_) / str(prefix_, "_b", batch_, "_c", i, suffix)).string());
  }
  ++batch_;

  std::vector<std::optional<BuildArtifact>> pooled(inputs.size());
  std::vector<BuildArtifact> artifacts(inputs.size());
  std::atomic<size_t> next_pooled{0}, next_forked{0};
  size_t n_threads = std::max<size_t>(1, std::min(inputs.size(), static_cast<size_t>(options_.n_parallel)));
  // No thread starts (its start allocates: its stack, its TLS) or ends (it hands its
  // allocator cache back) while another forks a compile (compile_process.h); and the
  // forks come after every compile worker's answer, since talking to one allocates
  // without the fork's guard. (A worker itself is exec'd at once: a fork that runs
  // nothing.)
  std::latch started(static_cast<std::ptrdiff_t>(n_threads));
  std::latch pooled_done(static_cast<std::ptrdiff_t>(n_threads));
  std::latch finished(static_cast<std::ptrdiff_t>(n_threads));
  auto compile_queued = [&](size_t thread) {
    started.arrive_and_wait();
    for (size_t i = next_pooled++; i < inputs.size(); i = next_pooled++) {
      if (!inputs[i].recipe.empty()) pooled[i] = workers_[thread]->compile(inputs[i], paths[i], options_.timeout_s);
    }
    pooled_done.arrive_and_wait();
    for (size_t i = next_forked++; i < inputs.size(); i = next_forked++) {
      if (pooled[i]) {
        artifacts[i] = std::move(*pooled[i]);
      } else {
        artifacts[i] = compile_in_child_process(inputs[i], paths[i], options_.timeout_s);
        ++forked_compiles_;
      }
    }
    finished.arrive_and_wait();
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n_threads; ++t) threads.emplace_back(compile_queued, t);
  compile_queued(0);
  for (std::thread& t : threads) t.join();
  for (const BuildArtifact& a : artifacts) {
    if (a.error == MeasureError::None) libraries_.push_back(a.library_path);
  }
  return artifacts;
}

}  // namespace temper::measure
