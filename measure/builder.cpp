// The builder's compile threads. A batch is a queue of candidates that n_parallel threads
// take from; build() waits for every candidate to be compiled, failed or timed out.
//
// A thread cannot be stopped, so a candidate past its time-out is abandoned, not killed:
// build() records CompileTimeout, starts a new thread in its place, and returns without
// it. The abandoned thread finishes on its own and finds its candidate already decided:
// it deletes the library it wrote and exits. Everything it touches is held by shared
// pointers, so that is harmless after build() returned and after the Builder is gone
// (its write into a removed work directory fails and is dropped). The destructor still
// waits a while (kAbandonedCompileGrace) for abandoned threads, so that a program that
// ends right after a build does not exit under a compiling thread.
//
// LLVM compiles in parallel safely: each compile makes its own LLVMContext, TargetMachine
// and pass managers (codegen/llvm), LLVM's targets are initialised once under
// std::call_once, and the IR is immutable with atomically counted references. NVRTC is
// loaded once under a mutex and compiles one program per call, which its API allows
// from several threads.
#include "measure/builder.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include "compiler/codegen/build.h"
#include "compiler/codegen/gpu/device_program.h"
#include "compiler/codegen/gpu/gpu_limits.h"
#include "compiler/ir/error.h"
#include "compiler/lower/lower.h"

namespace temper::measure {

// Threads abandoned by any batch of one Builder that are still compiling.
struct AbandonedCompiles {
  int running = 0;
  std::mutex mutex;
  std::condition_variable changed;
};

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// How long the destructor waits for compiles that outlived their time-out; a compile
// that never ends (a compiler bug) is left running after that.
constexpr std::chrono::seconds kAbandonedCompileGrace{60};

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// One candidate of a batch and where its compile stands.
struct Candidate {
  enum class State { Queued, Compiling, Decided };
  State state = State::Queued;
  Clock::time_point started;
  size_t thread = 0;  // the slot of the thread compiling it
  BuildArtifact artifact;
};

// What a batch's threads share with build() and with each other.
struct Batch {
  std::vector<MeasureInput> inputs;
  std::vector<std::string> paths;  // where each candidate's library goes
  std::vector<Candidate> candidates;
  std::vector<bool> abandoned_threads;  // by thread slot: its candidate timed out
  size_t next = 0;                      // the first queued candidate
  std::mutex mutex;
  std::condition_variable changed;
};

BuildArtifact compile(const MeasureInput& input, const std::string& path) {
  BuildArtifact artifact;
  artifact.function_name = input.func.name;
  if (input.pack) artifact.pack_function = input.pack->name;
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

// A compile thread: takes queued candidates until none is left, or until its candidate
// was given up on (another thread took its place).
void compile_queued(std::shared_ptr<Batch> batch, size_t slot, std::shared_ptr<AbandonedCompiles> abandoned) {
  std::unique_lock lock(batch->mutex);
  while (batch->next < batch->candidates.size()) {
    size_t i = batch->next++;
    Candidate& candidate = batch->candidates[i];
    candidate.state = Candidate::State::Compiling;
    candidate.started = Clock::now();
    candidate.thread = slot;
    batch->changed.notify_all();  // build() watches its deadline from now
    lock.unlock();
    BuildArtifact artifact = compile(batch->inputs[i], batch->paths[i]);
    lock.lock();
    if (candidate.state == Candidate::State::Decided) {  // timed out: build() no longer waits for it
      std::error_code ignored;
      fs::remove(batch->paths[i], ignored);
      std::lock_guard abandoned_lock(abandoned->mutex);
      --abandoned->running;
      abandoned->changed.notify_all();
      return;
    }
    candidate.artifact = std::move(artifact);
    candidate.state = Candidate::State::Decided;
    batch->changed.notify_all();
  }
}

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
  abandoned_ = std::make_shared<AbandonedCompiles>();
}

Builder::~Builder() {
  {
    std::unique_lock lock(abandoned_->mutex);
    abandoned_->changed.wait_for(lock, kAbandonedCompileGrace, [&] { return abandoned_->running == 0; });
  }
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
  auto batch = std::make_shared<Batch>();
  batch->inputs = inputs;
  batch->candidates.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const char* suffix = inputs[i].target.is_gpu() ? ".gpu.json" : ".so";
    batch->paths.push_back((fs::path(work_dir_) / str(prefix_, "_b", batch_, "_c", i, suffix)).string());
  }
  ++batch_;

  auto duration = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.timeout_s));
  std::vector<std::thread> threads;
  size_t n_threads = std::min(inputs.size(), static_cast<size_t>(options_.n_parallel));
  batch->abandoned_threads.assign(n_threads, false);
  for (size_t t = 0; t < n_threads; ++t) {
    threads.emplace_back(compile_queued, batch, t, abandoned_);
  }

  std::unique_lock lock(batch->mutex);
  while (true) {
    Clock::time_point now = Clock::now();
    Clock::time_point next_deadline = Clock::time_point::max();
    bool all_decided = true;
    for (Candidate& c : batch->candidates) {
      if (c.state == Candidate::State::Compiling && now - c.started >= duration) {
        c.state = Candidate::State::Decided;
        c.artifact.function_name = batch->inputs[&c - batch->candidates.data()].func.name;
        c.artifact.error = MeasureError::CompileTimeout;
        c.artifact.compile_seconds = seconds_between(c.started, now);
        c.artifact.message = str("compiling took longer than the time-out of ", options_.timeout_s, " s");
        {
          std::lock_guard abandoned_lock(abandoned_->mutex);
          ++abandoned_->running;
        }
        // Its thread is stuck with it: another takes the rest of the queue.
        batch->abandoned_threads[c.thread] = true;
        if (batch->next < batch->candidates.size()) {
          batch->abandoned_threads.push_back(false);
          threads.emplace_back(compile_queued, batch, threads.size(), abandoned_);
        }
        continue;
      }
      if (c.state == Candidate::State::Compiling) next_deadline = std::min(next_deadline, c.started + duration);
      all_decided = all_decided && c.state == Candidate::State::Decided;
    }
    if (all_decided) break;
    if (next_deadline == Clock::time_point::max()) {
      batch->changed.wait(lock);
    } else {
      batch->changed.wait_until(lock, next_deadline);
    }
  }
  std::vector<BuildArtifact> artifacts;
  for (Candidate& c : batch->candidates) {
    artifacts.push_back(c.artifact);
    if (c.artifact.error == MeasureError::None) libraries_.push_back(c.artifact.library_path);
  }
  lock.unlock();
  // A thread still compiling now holds a timed-out candidate; every other has returned.
  for (size_t t = 0; t < threads.size(); ++t) {
    if (batch->abandoned_threads[t]) {
      threads[t].detach();
    } else {
      threads[t].join();
    }
  }
  return artifacts;
}

}  // namespace temper::measure
