// fp32 conv2d on all cores: the conv2d template's default config (and, with --tune, the
// fastest config of a quick scan of its space) next to oneDNN's convolution primitive on
// the same plain NCHW data, and on the blocked layouts oneDNN prefers (data reordered
// once, outside the timing: its best case), for the 3x3 layers of ResNet-18. Rounds are
// interleaved so that a burst of load on this shared machine hits every contender alike;
// prints GFLOP/s (median over rounds) and the ratios to both oneDNN variants.
//
//   conv_templates [--rounds N] [--tune N] [--workloads w1;w2;...]
//
// --tune N times the default config's neighbours and N sampled configs once each and
// adds the fastest to the rounds. Every Temper kernel, and oneDNN, is checked against the
// reference implementation before its time counts.
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "benchmarks/baselines.h"
#include "benchmarks/bench_common.h"
#include "compiler/codegen/build.h"
#include "compiler/ops/op_data.h"
#include "compiler/runtime/c_runtime_api.h"
#include "compiler/runtime/timer.h"
#include "schedule_space/template.h"

namespace temper::bench {
namespace {

using schedule_space::Config;
using schedule_space::Task;

const char* kResnet18Convs[] = {
    "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1",
    "conv2d:N=1,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1",
    "conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1",
    "conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1",
};

struct Contender {
  std::string name;
  std::function<void()> run;
  std::vector<double> round_seconds;
};

Target host() {
  return Target::parse("llvm -mcpu=native");
}

// The compiled function of config, checked against the reference on data.
PackedFunc compile_checked(const Task& task, const Config& config, ops::OpData& data) {
  BuildResult built = build({task.apply(config).func()}, host());
  PackedFunc f = built.module->get_function(task.op().func.name);
  Comparison cmp = ops::run_and_check(f, data);
  if (!cmp.ok()) throw UserError(str("config ", config.to_string(), " disagrees with the reference: ", cmp.message));
  return f;
}

// The fastest of the default's neighbours and `samples` sampled configs, each timed once
// (its fastest group: a burst of load on the shared machine does not pick the winner).
Config quick_scan(const Task& task, int samples, ops::OpData& data) {
  std::vector<Config> candidates = task.space().neighbours(task.default_config());
  std::mt19937_64 rng(7);
  for (int i = 0; i < samples; ++i) candidates.push_back(task.space().sample(rng));
  Config best = task.default_config();
  std::vector<NDArray*> args = data.args();
  PackedFunc f = compile_checked(task, best, data);
  double best_s = time_function([&] { f(args); }, 3, 20).min_s;
  for (const Config& c : candidates) {
    PackedFunc g = compile_checked(task, c, data);
    double t = time_function([&] { g(args); }, 3, 20).min_s;
    if (t < best_s) {
      best_s = t;
      best = c;
    }
  }
  return best;
}

ConvShape conv_shape(const ops::Workload& w) {
  std::vector<int64_t> stride = w.get_ints("stride");
  std::vector<int64_t> pad = w.get_ints("pad");
  if (pad.size() != 1 || w.get_ints("dilation") != std::vector<int64_t>{1} || w.get_int("groups") != 1) {
    throw UserError(str(w.to_string(), ": the benchmark takes one uniform pad, no dilation and groups=1"));
  }
  ConvShape s{w.get_int("N"), w.get_int("C"), w.get_int("H"), w.get_int("W"),
              w.get_int("K"), w.get_int("R"), w.get_int("S")};
  s.stride_h = stride[0];
  s.stride_w = stride.size() > 1 ? stride[1] : stride[0];
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = pad[0];
  return s;
}

void run_workload(const std::string& text, int rounds, int tune_samples) {
  ops::Workload w = ops::Workload::parse(text);
  std::unique_ptr<Task> task = Task::create(w, host());
  ops::OpData data = ops::make_op_data(task->op(), 1);
  std::vector<NDArray*> args = data.args();
  const float* input = args[0]->data_as<float>();
  const float* weight = args[1]->data_as<float>();
  float* output = args[2]->data_as<float>();

  OnednnConv2d onednn(conv_shape(w), OnednnConvLayout::Plain);
  OnednnConv2d onednn_blocked(conv_shape(w), OnednnConvLayout::Blocked);
  for (OnednnConv2d* conv : {&onednn, &onednn_blocked}) {
    args[2]->fill(0);
    conv->bind(input, weight, output);
    conv->run();
    conv->fetch_output();
    Comparison cmp = ops::check_outputs(data);
    if (!cmp.ok()) {
      throw UserError(
          str("oneDNN (", conv->implementation(), ") disagrees with the reference on ", text, ": ", cmp.message));
    }
  }

  Config default_config = task->default_config();
  std::vector<Contender> all;
  PackedFunc f_default = compile_checked(*task, default_config, data);
  all.push_back({"temper_default", [f_default, args] { f_default(args); }, {}});
  all.push_back({"onednn", [&] { onednn.run(); }, {}});
  all.push_back({"onednn_blocked", [&] { onednn_blocked.run(); }, {}});
  Config best = default_config;
  if (tune_samples > 0) {
    best = quick_scan(*task, tune_samples, data);
    PackedFunc f_best = compile_checked(*task, best, data);
    all.push_back({"temper_tuned", [f_best, args] { f_best(args); }, {}});
  }

  double load = wait_for_idle_cpu();
  for (int r = 0; r < rounds; ++r) {
    for (Contender& k : all) k.round_seconds.push_back(time_function(k.run, 3, 50).median_s);
  }

  double flops = task->op().flops;
  double onednn_s = median(all[1].round_seconds);
  double blocked_s = median(all[2].round_seconds);
  std::printf("\n%s (%d rounds, medians; load %.2f before)\n", text.c_str(), rounds, load);
  std::printf("  oneDNN plain: %s; blocked: %s\n", onednn.implementation().c_str(),
              onednn_blocked.implementation().c_str());
  std::printf("  %-15s %10s %10s %10s  %s\n", "kernel", "GFLOP/s", "vs_onednn", "vs_blocked", "config");
  for (const Contender& k : all) {
    double t = median(k.round_seconds);
    std::string config = k.name == "temper_default" ? default_config.to_string()
                         : k.name == "temper_tuned" ? best.to_string()
                                                    : "-";
    std::printf("  %-15s %10.1f %10.3f %10.3f  %s\n", k.name.c_str(), flops / t * 1e-9, onednn_s / t, blocked_s / t,
                config.c_str());
  }
  std::fflush(stdout);
}

}  // namespace
}  // namespace temper::bench

int main(int argc, char** argv) {
  using namespace temper;
  int rounds = 5;
  int tune_samples = 0;
  std::vector<std::string> workloads(std::begin(bench::kResnet18Convs), std::end(bench::kResnet18Convs));
  try {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg == "--rounds" && i + 1 < argc) {
        rounds = std::max(1, std::atoi(argv[++i]));
      } else if (arg == "--tune" && i + 1 < argc) {
        tune_samples = std::max(0, std::atoi(argv[++i]));
      } else if (arg == "--workloads" && i + 1 < argc) {
        workloads = bench::split_list(argv[++i], ';');
      } else {
        throw UserError(
            str("unknown argument '", arg, "'; usage: conv_templates [--rounds N] [--tune N] [--workloads w1;w2;...]"));
      }
    }
    std::printf(
        "fp32 conv2d (NCHW), %d threads; Temper target llvm -mcpu=native; oneDNN on nchw/oihw data and on its blocked "
        "layouts\n",
        temper_get_num_threads());
    for (const std::string& w : workloads) bench::run_workload(w, rounds, tune_samples);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conv_templates: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
