// fp32 matmul on the GPU targets, side by side in one run.
//
// OpenCL (PoCL on a CPU-only machine): the tuned schedule (the log's best for the opencl
// target, else the GPU template's default) against Temper's naive OpenCL schedule (one
// thread per output element, ops::schedule_gpu_default) and against the LLVM CPU target
// (the log's best for it, else the CPU template's default), at --size (1024^3).
// CUDA, where this machine has a device: the tuned schedule against cuBLAS's
// cublasSgemm (loaded with dlopen) at --cuda-size (4096^3); without a device it says so.
//
// Every contender is checked against the reference first. Rounds are interleaved; each
// round times every contender (GPU code by the device's clock, without copies), and the
// table gives medians and ratios.
//
//   gpu_matmul [--db LOG] [--size N] [--cuda-size N] [--rounds N]
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/bench_common.h"
#include "benchmarks/cublas.h"
#include "compiler/codegen/build.h"
#include "compiler/codegen/gpu/gpu_module.h"
#include "compiler/ops/gpu_schedules.h"
#include "compiler/ops/op_data.h"
#include "compiler/runtime/gpu/gpu_device.h"
#include "compiler/runtime/timer.h"
#include "search/apply_history_best.h"
#include "tuning_db/sqlite_database.h"

namespace temper::bench {
namespace {

struct Contender {
  std::string name;
  std::string schedule;               // where its schedule came from
  std::function<double()> time_once;  // seconds per call, one measurement
  std::vector<double> rounds;
};

TimingOptions round_options() {
  TimingOptions o;
  o.repeat = 3;
  o.min_repeat_ms = 200;
  return o;
}

// The schedule of the log's best record for target, or the default; `source` says which.
Schedule tuned_schedule(const ops::Workload& w, const ops::OpInstance& op, const Target& target,
                        const tuning_db::Database* db, std::string& source) {
  if (!db) {
    source = "template default (no --db)";
    return search::default_schedule(w, op, target);
  }
  search::ApplyHistoryBest best(*db, nullptr);
  Schedule s = best.schedule_for(w, op, target).schedule;
  source = best.last_source() == "log" ? str("log best (", best.last_record().mean * 1e3, " ms when tuned)")
                                       : best.last_source();
  return s;
}

// A contender built from a schedule: checked against the reference, then timed per round.
Contender contender(const std::string& name, const std::string& source, const Schedule& s, const Target& target,
                    const ops::OpInstance& op, ops::OpData& data) {
  auto built = std::make_shared<BuildResult>(build({s.func()}, target));
  PackedFunc f = built->module->get_function(op.func.name);
  Comparison check = ops::run_and_check(f, data);
  if (!check.ok()) throw UserError(str(name, ": wrong result: ", check.message));
  std::vector<NDArray*> args = data.args();
  auto* gpu = dynamic_cast<GpuModule*>(built->module.get());
  std::string function = op.func.name;
  std::function<double()> time_once = [built, gpu, f, args, function]() {
    return gpu ? gpu->time(function, args, round_options()).median_s
               : time_function([&] { f(args); }, round_options()).median_s;
  };
  return Contender{name, source, time_once, {}};
}

void run_rounds(std::vector<Contender>& contenders, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    wait_for_idle_cpu();
    for (Contender& c : contenders) c.rounds.push_back(c.time_once());
    std::fprintf(stderr, "round %d/%d done\n", r + 1, rounds);
  }
}

void print_table(const std::vector<Contender>& contenders, double flops, size_t baseline) {
  double base = median(contenders[baseline].rounds);
  std::printf("%-28s %12s %10s %14s   %s\n", "contender", "median ms", "GFLOP/s",
              ("vs " + contenders[baseline].name).c_str(), "schedule");
  for (const Contender& c : contenders) {
    double m = median(c.rounds);
    std::printf("%-28s %12.3f %10.2f %13.2fx   %s\n", c.name.c_str(), m * 1e3, flops / m * 1e-9, base / m,
                c.schedule.c_str());
  }
}

void bench_opencl(int64_t size, const tuning_db::Database* db, int rounds) {
  ops::Workload w = ops::Workload::parse(str("matmul:M=", size, ",N=", size, ",K=", size));
  ops::OpInstance op = ops::instantiate(w);
  ops::OpData data = ops::make_op_data(op);
  Target opencl = Target::parse("opencl");
  Target cpu = Target::parse("llvm -mcpu=native");
  std::string opencl_source, cpu_source;
  std::vector<Contender> contenders;
  contenders.push_back(
      contender("Temper OpenCL naive", "schedule_gpu_default", ops::schedule_gpu_default(op), opencl, op, data));
  Schedule tuned = tuned_schedule(w, op, opencl, db, opencl_source);
  contenders.push_back(contender("Temper OpenCL tuned", opencl_source, tuned, opencl, op, data));
  Schedule cpu_tuned = tuned_schedule(w, op, cpu, db, cpu_source);
  contenders.push_back(contender("Temper LLVM CPU tuned", cpu_source, cpu_tuned, cpu, op, data));
  std::unique_ptr<GpuDevice> device = open_gpu_device(opencl);
  std::printf("OpenCL matmul %lldx%lldx%lld fp32 on %s; %d rounds, medians\n", static_cast<long long>(size),
              static_cast<long long>(size), static_cast<long long>(size), device->info().fingerprint().c_str(), rounds);
  run_rounds(contenders, rounds);
  print_table(contenders, 2.0 * size * size * size, 0);
  double tuned_ms = median(contenders[1].rounds), cpu_ms = median(contenders[2].rounds);
  std::printf("LLVM CPU / OpenCL tuned time: %.2f (above 1: the OpenCL code is faster)\n", cpu_ms / tuned_ms);
}

void bench_cuda(int64_t size, const tuning_db::Database* db, int rounds) {
  std::unique_ptr<GpuDevice> probe;
  try {
    probe = open_gpu_device(Target::parse("cuda"));
  } catch (const UserError& e) {
    std::printf("CUDA: not run, %s\n", e.what());
    return;
  }
  Target cuda = Target::parse(str("cuda -arch=", probe->info().version));
  probe.reset();
  ops::Workload w = ops::Workload::parse(str("matmul:M=", size, ",N=", size, ",K=", size));
  ops::OpInstance op = ops::instantiate(w);
  ops::OpData data = ops::make_op_data(op);
  std::string source;
  std::vector<Contender> contenders;
  contenders.push_back(contender("Temper CUDA tuned", source, tuned_schedule(w, op, cuda, db, source), cuda, op, data));
  contenders[0].schedule = source;
  // cuBLAS on the same device and the same inputs, timed by the same device clock.
  std::shared_ptr<GpuDevice> device = open_gpu_device(cuda);
  auto cublas = std::make_shared<CublasSgemm>();
  std::vector<DeviceMemory> buffers;
  for (NDArray* a : data.args()) {
    buffers.push_back(device->alloc(a->nbytes()));
    device->copy_from_host(buffers.back(), a->data(), a->nbytes());
  }
  auto run_group = [=](int calls) {
    return device->time_on_device([&] {
      for (int c = 0; c < calls; ++c) cublas->run(size, size, size, buffers[0], buffers[1], buffers[2]);
    });
  };
  contenders.insert(contenders.begin(), Contender{cublas->version() + " cublasSgemm",
                                                  "vendor library",
                                                  [=] {
                                                    return time_groups(
                                                               run_group, [=] { device->flush_cache(); },
                                                               round_options())
                                                        .median_s;
                                                  },
                                                  {}});
  std::printf("CUDA matmul %lldx%lldx%lld fp32 on %s; %d rounds, medians\n", static_cast<long long>(size),
              static_cast<long long>(size), static_cast<long long>(size), device->info().fingerprint().c_str(), rounds);
  run_rounds(contenders, rounds);
  print_table(contenders, 2.0 * size * size * size, 0);
}

}  // namespace
}  // namespace temper::bench

int main(int argc, char** argv) {
  using namespace temper;
  std::string db_path;
  int64_t size = 1024, cuda_size = 4096;
  int rounds = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "gpu_matmul: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--db") {
      db_path = value();
    } else if (a == "--size") {
      size = std::stoll(value());
    } else if (a == "--cuda-size") {
      cuda_size = std::stoll(value());
    } else if (a == "--rounds") {
      rounds = std::stoi(value());
    } else {
      std::fprintf(stderr, "usage: gpu_matmul [--db LOG] [--size N] [--cuda-size N] [--rounds N]\n");
      return 2;
    }
  }
  try {
    std::unique_ptr<tuning_db::SQLiteDatabase> db;
    if (!db_path.empty()) db = std::make_unique<tuning_db::SQLiteDatabase>(db_path, tuning_db::OpenMode::ReadOnly);
    bench::bench_opencl(size, db.get(), rounds);
    std::printf("\n");
    bench::bench_cuda(cuda_size, db.get(), rounds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_matmul: %s\n", e.what());
    return 1;
  }
  return 0;
}
