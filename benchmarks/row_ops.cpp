// Softmax and layer norm over rows, the shapes of BERT-family models: Temper's default
// schedule (one parallel loop over the rows, ops/cpu_schedules.cpp), its schedule of one
// loop nest per stage (schedule_cpu_tiled, the default before), oneDNN's primitive, and a
// memory-bandwidth bound measured here: a parallel copy of the input to the output, the
// least traffic any kernel of the op has, in whichever caches hold it between runs. Beside
// it, the op's traffic at the memory bandwidth the machine probe measures (reading an array
// far larger than the last-level cache): the bound where the op's data comes from DRAM.
// Rounds interleave the contenders; each result is checked against the op's reference
// before its time counts. Prints medians, GB/s of the op's traffic (input read once,
// output written once) and ratios.
//
//   row_ops [--rounds N] [--threads N]
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "benchmarks/baselines.h"
#include "benchmarks/bench_common.h"
#include "compiler/codegen/build.h"
#include "compiler/ops/cpu_schedules.h"
#include "compiler/ops/op_data.h"
#include "compiler/runtime/c_runtime_api.h"
#include "compiler/runtime/timer.h"
#include "measure/machine_probe.h"

namespace temper::bench {
namespace {

struct Contender {
  std::string name;
  std::function<void()> run;
  std::vector<double> seconds;
};

const char* kWorkloads[] = {
    "softmax:shape=12x128x128,axis=2",  // BERT-base, seq 128: the attention probabilities
    "softmax:shape=12x384x384,axis=2",  // seq 384: 7 MB, beyond the L2 caches
    "layer_norm:shape=128x768,axis=1",  // BERT-base hidden states
    "layer_norm:shape=128x384,axis=1",  // MiniLM's
};

void check(const std::string& who, const NDArray& got, const NDArray& expected) {
  Comparison c = compare(got, expected, 1e-4, 1e-5);
  if (!c.ok()) throw UserError(str(who, " disagrees with the reference: ", c.message));
}

void run_workload(const std::string& workload, int rounds, int threads, double memory_gbs) {
  ops::OpInstance op = ops::instantiate(ops::Workload::parse(workload));
  ops::OpData data = ops::make_op_data(op, 1);
  const NDArray& expected = data.expected.front();
  NDArray& out = data.outputs.front();
  int64_t row_length = expected.shape().back();
  int64_t rows = expected.size() / row_length;
  bool softmax = op.name == "softmax";
  std::vector<NDArray*> args = data.args();

  std::vector<Contender> contenders;
  auto temper = [&](const std::string& name, const Schedule& s) {
    BuildResult built = build({s.func()}, Target::parse("llvm -mcpu=native"));
    PackedFunc f = built.module->get_function(op.func.name);
    Comparison c = ops::run_and_check(f, data);
    if (!c.ok()) throw UserError(str(name, " disagrees with the reference: ", c.message));
    contenders.push_back({name, [f, args] { f(args); }, {}});
  };
  temper("temper", ops::schedule_cpu_default(op));
  temper("temper per stage", ops::schedule_cpu_tiled(op));

  const float* x = data.inputs[0].data_as<float>();
  float* y = out.data_as<float>();
  OnednnRowOp onednn(softmax ? OnednnRowOp::Kind::Softmax : OnednnRowOp::Kind::LayerNorm, rows, row_length, x, y,
                     softmax ? nullptr : data.inputs[1].data_as<float>(),
                     softmax ? nullptr : data.inputs[2].data_as<float>());
  out.fill(0);
  onednn.run();
  check("oneDNN", out, expected);
  contenders.push_back({"oneDNN", [&onednn] { onednn.run(); }, {}});

  int64_t bytes = expected.size() * 4;
  contenders.push_back({"copy (bound)", [x, y, bytes, threads] {
#pragma omp parallel for num_threads(threads) schedule(static)
                          for (int t = 0; t < threads; ++t) {
                            int64_t begin = bytes * t / threads, end = bytes * (t + 1) / threads;
                            std::memcpy(reinterpret_cast<char*>(y) + begin,
                                        reinterpret_cast<const char*>(x) + begin, end - begin);
                          }
                        },
                        {}});

  TimingOptions timing;
  timing.repeat = 1;
  timing.min_repeat_ms = 50;
  for (int r = 0; r < rounds; ++r) {
    for (Contender& c : contenders) c.seconds.push_back(time_function(c.run, timing).median_s);
  }
  double traffic = 2.0 * static_cast<double>(bytes);  // read the input, write the output
  double bound = median(contenders.back().seconds);
  double library = median(contenders[2].seconds);
  std::printf("%s  (%lld rows of %lld, oneDNN %s)\n", workload.c_str(), static_cast<long long>(rows),
              static_cast<long long>(row_length), onednn.implementation().c_str());
  double memory_bound = traffic / (memory_gbs * 1e9);
  for (const Contender& c : contenders) {
    double s = median(c.seconds);
    std::printf("  %-18s %8.4f ms  %6.1f GB/s  vs copy %5.2fx  vs memory %5.2fx  vs oneDNN %5.2fx\n", c.name.c_str(),
                s * 1e3, traffic / s / 1e9, s / bound, s / memory_bound, s / library);
  }
  std::printf("  %-18s %8.4f ms  %6.1f GB/s  (the op's traffic at the probe's memory bandwidth)\n", "memory (bound)",
              memory_bound * 1e3, memory_gbs);
  std::fflush(stdout);
}

}  // namespace
}  // namespace temper::bench

int main(int argc, char** argv) {
  using namespace temper;
  int rounds = 15, threads = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--rounds" || arg == "--threads") && i + 1 < argc) {
      (arg == "--rounds" ? rounds : threads) = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: row_ops [--rounds N] [--threads N]\n");
      return 2;
    }
  }
  if (rounds < 1) rounds = 1;
  if (threads <= 0) threads = temper_get_num_threads();
  temper_set_num_threads(threads);
  try {
    double load = bench::wait_for_idle_cpu();
    double memory_gbs = measure::measure_memory_bandwidth(threads);
    std::printf("row_ops: %d rounds interleaved, %d threads, load %.2f before; medians; memory %.1f GB/s\n", rounds,
                threads, load, memory_gbs);
    for (const char* w : bench::kWorkloads) bench::run_workload(w, rounds, threads, memory_gbs);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "row_ops: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
