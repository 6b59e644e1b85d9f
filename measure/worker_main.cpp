// temper-measure-worker: the process the runner times candidates in (runner.h). It reads
// one request per line on stdin and writes one reply per line (worker_protocol.h), until
// stdin ends. Whatever goes wrong in a candidate that this process survives (a library
// that does not load, a function that reports an error, a wrong result, any exception)
// is a reply; only a crash or a hang ends it, and the runner sees to that.
//
// The test data of the last workload is kept (its reference outputs are costly for big
// ops); a CPU candidate is timed on a copy of it at page offsets drawn afresh for each
// candidate (buffer_placement.h). A candidate's library is unloaded once it is measured,
// so memory stays bounded over thousands of candidates. With cold_caches, the op's weight
// inputs and its outputs are evicted from the caches before each timed call, and a blocked
// activation input is written back row-split by the threads (cache_eviction.h), as a
// model's run finds them. A candidate that writes into its inputs is a wrong result,
// and the inputs are restored from a pristine copy before the next one.
//
// A candidate runs inside this process, so it is fenced in: its calls may grow the address
// space by the request's memory_limit_mb only (RLIMIT_AS, CPU targets; an allocation past
// it fails there, and a worker whose memory grew by half the limit asks to be replaced)
// and take cpu_time_limit_s of CPU time (RLIMIT_CPU: past it this process dies of SIGXCPU);
// a candidate that starts processes (fork) is a runtime error, the processes are killed
// (this process is their subreaper, so their own children are found too), and a copy of
// the worker that returns from the candidate in the child leaves at once, before it could
// write a reply; every line this process writes carries the request's token, so a line the
// candidate wrote into the reply channel is told apart by the runner. A candidate that
// calls exit() ends the worker like a crash: the runner sees it and starts another.
//
// A GPU candidate's file is a DeviceProgram. The device of each target string is opened
// once and kept (opening one takes a context, hundreds of milliseconds on CUDA); the
// candidate's program and buffers are freed once it is measured.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>

#include "compiler/codegen/gpu/device_program.h"
#include "compiler/codegen/gpu/gpu_module.h"
#include "compiler/ir/error.h"
#include "compiler/ops/op_data.h"
#include "compiler/ops/workload.h"
#include "compiler/runtime/c_runtime_api.h"
#include "compiler/runtime/gpu/gpu_device.h"
#include "compiler/runtime/shared_library_module.h"
#include "compiler/runtime/thread_pool.h"
#include "compiler/runtime/timer.h"
#include "measure/buffer_placement.h"
#include "measure/cache_eviction.h"
#include "measure/worker_protocol.h"

namespace temper::measure {
namespace {

// A workload's operator and test data: random inputs and the reference's outputs, and a
// pristine copy of the inputs to tell whether a candidate wrote into them.
struct WorkloadData {
  std::string workload;
  ops::OpInstance op;
  ops::OpData data;
  std::vector<NDArray> pristine_inputs;
  std::unique_ptr<BufferPlacement> placement;  // for CPU timings
};

// A candidate that writes into an input would make every later check of this workload
// compare against data the reference never saw: it is a wrong result, and the inputs are
// restored.
std::optional<std::string> restore_inputs(WorkloadData& w) {
  std::optional<std::string> written;
  for (size_t i = 0; i < w.data.inputs.size(); ++i) {
    NDArray& in = w.data.inputs[i];
    const NDArray& clean = w.pristine_inputs[i];
    if (std::memcmp(in.data(), clean.data(), clean.nbytes()) == 0) continue;
    if (!written) written = str("the function wrote into its input ", w.op.inputs[i].name());
    in.copy_from(clean);
  }
  return written;
}

WorkerReply failure(MeasureError error, const std::string& message) {
  WorkerReply reply;
  reply.error = error;
  reply.message = message;
  return reply;
}

TimingOptions timing_options(const WorkerRequest& request) {
  TimingOptions options;
  options.number = request.number;
  options.repeat = request.repeat;
  options.min_repeat_ms = request.min_repeat_ms;
  options.cooldown_ms = request.cooldown_ms;
  options.flush_cache = request.flush_cache;
  return options;
}

// This process's address space in bytes (/proc/self/statm's first field, in pages).
int64_t address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0;
  statm >> pages;
  return pages * sysconf(_SC_PAGESIZE);
}

// A soft resource limit set for a scope (never above the hard one) and restored after.
class ScopedSoftLimit {
 public:
  ScopedSoftLimit() = default;
  void set(int resource, rlim_t wanted) {
    if (getrlimit(resource, &saved_) != 0) return;
    rlimit limited = saved_;
    if (saved_.rlim_max == RLIM_INFINITY || wanted < saved_.rlim_max) limited.rlim_cur = wanted;
    if (setrlimit(resource, &limited) == 0) resource_ = resource;
  }
  ~ScopedSoftLimit() {
    if (resource_ >= 0) setrlimit(resource_, &saved_);
  }
  ScopedSoftLimit(const ScopedSoftLimit&) = delete;
  ScopedSoftLimit& operator=(const ScopedSoftLimit&) = delete;

 private:
  int resource_ = -1;
  rlimit saved_{};
};

// Around a candidate's calls: the soft RLIMIT_CPU set to the CPU time this process has
// used plus the request's budget (whole seconds, rounded up).
class CpuTimeLimit {
 public:
  explicit CpuTimeLimit(double limit_s) {
    if (!(limit_s > 0)) return;
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    double used = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
    limit_.set(RLIMIT_CPU, static_cast<rlim_t>(std::ceil(used + limit_s)));
  }

 private:
  ScopedSoftLimit limit_;
};

// Around a CPU candidate's calls: the soft RLIMIT_AS set to the address space now plus
// the request's budget. grew() says whether the address space grew by more than half the
// budget meanwhile (memory the candidate kept).
class AddressSpaceLimit {
 public:
  explicit AddressSpaceLimit(int64_t limit_mb) : budget_(std::max<int64_t>(0, limit_mb) * (int64_t{1} << 20)) {
    if (budget_ == 0) return;
    start_ = address_space_bytes();
    limit_.set(RLIMIT_AS, static_cast<rlim_t>(start_ + budget_));
  }
  bool grew() const { return budget_ > 0 && address_space_bytes() - start_ > budget_ / 2; }

 private:
  int64_t budget_;
  int64_t start_ = 0;
  ScopedSoftLimit limit_;
};

// The worker's process id, to tell the worker from a copy a candidate forked.
pid_t worker_pid = 0;

// Called right after each call of a candidate: a child it forked that returns here is
// no worker, and leaves before it could write anything.
void leave_if_forked_copy() {
  if (getpid() != worker_pid) _exit(0);
}

// The processes a candidate left behind (forked, and their children, which this process
// reaps as their subreaper): killed and reaped. Returns how many there were.
int end_child_processes() {
  int ended = 0;
  while (true) {
    int status = 0;
    pid_t reaped = waitpid(-1, &status, WNOHANG);
    if (reaped > 0) {
      ++ended;
      continue;
    }
    if (reaped < 0) return ended;  // ECHILD: none left
    // Children still running: kill each that /proc lists, then reap them.
    std::error_code error;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", error)) {
      std::ifstream children(task.path() / "children");
      pid_t child = 0;
      while (children >> child) kill(child, SIGKILL);
    }
    reaped = waitpid(-1, &status, 0);
    if (reaped > 0) ++ended;
  }
}

void write_line(FILE* out, const std::string& line) {
  std::fputs(line.c_str(), out);
  std::fputc('\n', out);
  std::fflush(out);
}

class Worker {
 public:
  explicit Worker(FILE* out) : out_(out) {}

  // Answers one request line: a ready line when the candidate is about to run, then the
  // reply, both with the request's token.
  void handle(const std::string& line) {
    WorkerRequest request;
    WorkerReply reply;
    try {
      request = decode_request(line);
      reply = answer(request);
    } catch (const std::exception& e) {
      reply = failure(MeasureError::RuntimeError, e.what());
    }
    if (int forked = end_child_processes()) {
      reply = failure(MeasureError::RuntimeError,
                      str("the function started ", forked, forked == 1 ? " process" : " processes",
                          " (fork), which a kernel may not; ", forked == 1 ? "it was" : "they were", " killed"));
    }
    reply.token = request.token;
    write_line(out_, encode_reply(reply));
    pool_rest();  // the next candidate is still being built
  }

 private:
  WorkerReply answer(const WorkerRequest& request) {
    try {
      prepare(request.workload);
    } catch (const std::exception& e) {
      return failure(MeasureError::InstantiationError, str("workload ", request.workload, ": ", e.what()));
    }
    std::shared_ptr<GpuDevice> device;
    try {
      Target target = Target::parse(request.target);
      if (target.is_gpu()) device = open_device(target);
    } catch (const std::exception& e) {  // a malformed target string, no driver, no such device
      return failure(MeasureError::RuntimeError, e.what());
    }
    write_line(out_, encode_ready(request.token));
    WorkerReply reply;
    try {
      CpuTimeLimit cpu_limit(request.cpu_time_limit_s);
      if (device) {
        reply = run_on_gpu(request, device, current_->data);
      } else {
        AddressSpaceLimit limit(request.memory_limit_mb);
        reply = run(request, *current_);
        reply.restart = limit.grew();
      }
    } catch (const std::exception& e) {  // std::bad_alloc past the limit included
      reply = failure(MeasureError::RuntimeError, e.what());
    }
    leave_if_forked_copy();
    if (std::optional<std::string> written = restore_inputs(*current_)) {
      bool restart = reply.restart;
      reply = failure(MeasureError::WrongResult, *written);
      reply.restart = restart;
    }
    return reply;
  }

  void prepare(const std::string& workload) {
    if (current_ && current_->workload == workload) return;
    current_.reset();  // one workload's data at a time
    auto w = std::make_unique<WorkloadData>();
    w->workload = workload;
    w->op = ops::instantiate(ops::Workload::parse(workload));
    w->data = ops::make_op_data(w->op);
    for (const NDArray& in : w->data.inputs) w->pristine_inputs.push_back(in.copy());
    current_ = std::move(w);
  }

  WorkerReply run(const WorkerRequest& request, WorkloadData& w) {
    temper_set_num_threads(request.threads);
    std::unique_ptr<Module> module = load_shared_library(request.library);
    PackedFunc f = module->get_function(request.function);
    // A candidate that reads an input packed ahead of time runs on this workload's data
    // with that input packed once, here, untimed, as a model build packs its constant.
    ops::OpData packed_data;
    ops::OpData* data = &w.data;
    if (!request.pack_function.empty()) {
      int i = request.packed_input;
      if (i < 0 || i >= static_cast<int>(w.data.inputs.size())) {
        return failure(MeasureError::RuntimeError, str("packed_input ", i, " is not an input of ", w.workload));
      }
      packed_data = w.data;
      packed_data.inputs[i] = NDArray::empty(request.packed_shape, w.data.inputs[i].dtype());
      module->get_function(request.pack_function)({&w.data.inputs[i], &packed_data.inputs[i]});
      data = &packed_data;
    }
    Comparison check = ops::run_and_check(f, *data);
    leave_if_forked_copy();
    if (!check.ok()) return failure(MeasureError::WrongResult, check.message);

    // The packed array's shape depends on the candidate: its placement is its own.
    std::unique_ptr<BufferPlacement> own_placement;
    BufferPlacement* placement = nullptr;
    if (data == &w.data) {
      if (!w.placement) w.placement = std::make_unique<BufferPlacement>(w.data.args());
      placement = w.placement.get();
    } else {
      own_placement = std::make_unique<BufferPlacement>(data->args());
      placement = own_placement.get();
    }
    std::vector<TemperTensor> args = placement->place(data->args(), rng_);
    auto call = [&] {
      f(std::span<const TemperTensor>(args));
      leave_if_forked_copy();
    };
    TimingResult timing;
    if (request.cold_caches) {
      std::vector<NDArray*> placed_from = data->args();
      std::vector<int> cold = w.op.weight_inputs;
      for (size_t i = data->inputs.size(); i < args.size(); ++i) cold.push_back(static_cast<int>(i));
      // Blocked activations ([N, C/b, H, W, b]) as the model's previous kernel wrote them.
      std::vector<int> activations;
      const std::vector<int>& weights = w.op.weight_inputs;
      for (int i = 0; i < static_cast<int>(data->inputs.size()); ++i) {
        bool weight = std::find(weights.begin(), weights.end(), i) != weights.end();
        if (!weight && placed_from[i]->shape().size() == 5) activations.push_back(i);
      }
      auto evict = [&] {
        for (int i : activations) {
          write_rows_split(args[i].data, placed_from[i]->shape(), placed_from[i]->dtype().bytes());
        }
        for (int i : cold) evict_from_caches(args[i].data, placed_from[i]->nbytes());
      };
      timing = time_function(call, evict, timing_options(request));
    } else {
      timing = time_function(call, timing_options(request));
    }
    WorkerReply reply;
    reply.costs = timing.group_s;
    return reply;
  }

  std::shared_ptr<GpuDevice> open_device(const Target& target) {
    std::shared_ptr<GpuDevice>& device = devices_[target.to_string()];
    if (!device) device = open_gpu_device(target);
    return device;
  }

  // Checks the program through a call on host data, then times its launches alone on
  // buffers already on the device, filled with the same inputs (GpuModule::time).
  static WorkerReply run_on_gpu(const WorkerRequest& request, const std::shared_ptr<GpuDevice>& device,
                                ops::OpData& data) {
    DeviceProgram program = DeviceProgram::load(request.library);
    std::unique_ptr<GpuModule> module;
    try {
      module = std::make_unique<GpuModule>(std::move(program), device);
    } catch (const UserError& e) {  // the device's compiler refuses the code, or the driver the PTX
      return failure(MeasureError::CompileError, e.what());
    }
    Comparison check = ops::run_and_check(module->get_function(request.function), data);
    if (!check.ok()) return failure(MeasureError::WrongResult, check.message);

    TimingResult timing = module->time(request.function, data.args(), timing_options(request));
    WorkerReply reply;
    reply.costs = timing.group_s;
    return reply;
  }

  FILE* out_;
  std::mt19937_64 rng_{std::random_device{}()};  // buffer placements
  std::unique_ptr<WorkloadData> current_;
  std::map<std::string, std::shared_ptr<GpuDevice>> devices_;  // by target string
};

}  // namespace
}  // namespace temper::measure

int main() {
  // A candidate that crashes is an expected event here: no core file for each one.
  rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  temper::measure::worker_pid = getpid();
  // Processes a candidate starts, and theirs, stay this process's children to be ended.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  // Replies go to a private copy of stdout; fd 1 becomes stderr, so that whatever a
  // candidate prints cannot break a reply.
  int reply_fd = dup(STDOUT_FILENO);
  FILE* replies = reply_fd >= 0 ? fdopen(reply_fd, "w") : nullptr;
  if (!replies || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::perror("temper-measure-worker: cannot set up its output");
    return 1;
  }
  temper::measure::Worker worker(replies);
  std::string line;
  while (std::getline(std::cin, line)) worker.handle(line);
  return 0;
}
