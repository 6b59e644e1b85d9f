// The tuning stack end to end: random, grid, genetic and model-guided (xgb) tuning of a
// template, and the auto-scheduler (auto: sketches, evolutionary search under the xgb
// model), on fp32 matmul 1024^3 and the ResNet-18 3x3 conv2d layers, the same trial
// budget each, every measurement logged to a SQLite file. Then each tuner's best schedule
// is built and timed in this process, interleaved round by round with oneDNN (dnnl_sgemm;
// the convolution primitive on the same NCHW data and, as oneDNN's best case, on its
// blocked layouts with the data reordered once outside the timing), after checking its
// output against the reference.
//
// Prints per workload and tuner: the best GFLOP/s (re-timed side by side with oneDNN) and
// the ratio, the trials the tuner needed to reach 90% of its own best, measurement
// throughput (candidates per minute) and the share of the job's wall time spent
// compiling and timing. The auto-scheduler measures the op's hand-written default
// schedule first; its row `auto_sketches` is its best among the candidates of its
// sketches alone. With both xgb and auto, a last line gives auto / xgb.
//
//   tune_matmul [--trials N (200)] [--tuners random,grid,ga,xgb,auto] [--seed N]
//               [--workloads matmul,conv56,conv28,conv14,conv7] [--rounds N] [--log-dir DIR]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "benchmarks/baselines.h"
#include "benchmarks/bench_common.h"
#include "compiler/codegen/build.h"
#include "compiler/ops/op_data.h"
#include "compiler/runtime/c_runtime_api.h"
#include "compiler/runtime/timer.h"
#include "compiler/ops/cpu_schedules.h"
#include "cost_model/cost_model.h"
#include "search/apply_history_best.h"
#include "search/auto_explorer.h"
#include "search/tune.h"
#include "tuning_db/schedule_ranking.h"
#include "tuning_db/sqlite_database.h"

namespace temper::bench {
namespace {

const Target kTarget = Target::parse("llvm -mcpu=native");

const std::map<std::string, std::string> kWorkloads = {
    {"matmul", "matmul:M=1024,N=1024,K=1024"},
    {"conv56", "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1"},
    {"conv28", "conv2d:N=1,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1"},
    {"conv14", "conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1"},
    {"conv7", "conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1"},
};

// The auto-scheduler's job: its best over the whole job, and over its sketches' candidates
// alone (leaving out the default schedule it measures first).
search::TuneResult tune_auto(const ops::Workload& workload, measure::Builder& builder, measure::Runner& runner,
                             tuning_db::Database& db, const search::TuneOptions& options, uint64_t seed,
                             std::optional<tuning_db::TuningRecord>* sketch_best) {
  schedule_space::AutoSpace space(workload, kTarget);
  search::AutoExplorer explorer(space, cost_model::make_cost_model("xgb", {}), seed);
  search::TuneResult result = search::tune(explorer, builder, runner, db, options);
  nlohmann::json default_trace = ops::schedule_cpu_default(space.op(), kTarget).trace().to_json();
  std::vector<tuning_db::TuningRecord> sketches;
  for (const tuning_db::TuningRecord& r : result.records) {
    if (r.trace != default_trace) sketches.push_back(r);
  }
  // Ranked as the log ranks them: by each schedule's median, the confirmations' included.
  std::vector<tuning_db::TuningRecord> best = tuning_db::best_schedules(sketches, 1);
  if (!best.empty()) *sketch_best = best[0];
  return result;
}

struct TunerRun {
  std::string tuner;
  search::TuneResult result;
  int trials_to_90 = 0;  // trials until the best reached 90% of the final best
  double tuned_s = 0;    // re-timed in this process (median over rounds)
};

// oneDNN's convolution for a conv2d workload on `layout`, bound to data's arrays.
std::unique_ptr<OnednnConv2d> onednn_conv(const ops::Workload& w, ops::OpData& data, OnednnConvLayout layout) {
  ConvShape s{w.get_int("N"), w.get_int("C"), w.get_int("H"), w.get_int("W"),
              w.get_int("K"), w.get_int("R"), w.get_int("S")};
  s.stride_h = s.stride_w = w.get_ints("stride")[0];
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = w.get_ints("pad")[0];
  auto conv = std::make_unique<OnednnConv2d>(s, layout);
  conv->bind(data.inputs[0].data_as<float>(), data.inputs[1].data_as<float>(), data.outputs[0].data_as<float>());
  return conv;
}

// oneDNN's kernel for the workload, on the same inputs and into the same output arrays:
// dnnl_sgemm, or the convolution `conv` (which stays alive while the kernel is used).
std::function<void()> onednn_kernel(const ops::Workload& w, ops::OpData& data, OnednnConv2d* conv) {
  if (conv) return [conv] { conv->run(); };
  const float* a = data.inputs[0].data_as<float>();
  const float* b = data.inputs[1].data_as<float>();
  float* c = data.outputs[0].data_as<float>();
  int M = w.get_int("M"), N = w.get_int("N"), K = w.get_int("K");
  return [=] { onednn_sgemm(M, N, K, a, b, c); };
}

// Runs the oneDNN kernel once on a cleared output and checks that against the reference.
void check_onednn(const std::function<void()>& kernel, OnednnConv2d* conv, ops::OpData& data,
                  const std::string& label) {
  data.outputs[0].fill(0);
  kernel();
  if (conv) conv->fetch_output();
  Comparison c = check_outputs(data);
  if (!c.ok()) {
    std::string which = conv ? " (" + conv->implementation() + ")" : "";
    throw UserError(str("oneDNN", which, " disagrees with the reference on ", label, ": ", c.message));
  }
}

void run_workload(const std::string& label, const std::vector<std::string>& tuners, int trials, int rounds,
                  const std::string& log_dir, uint64_t seed) {
  ops::Workload workload = ops::Workload::parse(kWorkloads.at(label));
  std::unique_ptr<schedule_space::Task> task = schedule_space::Task::create(workload, kTarget);
  std::printf("\n%s  (%s, %lld configs, %d trials per tuner)\n", label.c_str(), workload.to_string().c_str(),
              static_cast<long long>(task->space().size()), trials);
  std::fflush(stdout);

  measure::Builder builder;
  measure::RunnerOptions runner_options;
  runner_options.repeat = 3;
  runner_options.min_repeat_ms = 20;
  measure::Runner runner(runner_options);
  search::TuneOptions options;
  options.trials = trials;

  std::vector<TunerRun> runs;
  for (const std::string& name : tuners) {
    std::string path = log_dir + "/" + label + "_" + name + ".db";
    std::filesystem::remove(path);
    tuning_db::SQLiteDatabase db(path);
    wait_for_idle_cpu();
    TunerRun run{name, {}};
    std::optional<tuning_db::TuningRecord> sketch_best;
    if (name == "auto") {
      run.result = tune_auto(workload, builder, runner, db, options, seed, &sketch_best);
    } else {
      std::unique_ptr<search::Tuner> tuner = search::make_tuner(name, *task, seed);
      run.result = search::tune(*task, *tuner, builder, runner, db, options);
    }
    const std::vector<double>& curve = run.result.best_curve;
    while (run.trials_to_90 < static_cast<int>(curve.size()) && curve[run.trials_to_90] < 0.9 * curve.back()) {
      ++run.trials_to_90;
    }
    ++run.trials_to_90;
    std::printf("  tuned with %-6s: %d trials, %d failed, %d confirmations, %.0f s\n", name.c_str(),
                run.result.trials_measured, run.result.errors, run.result.confirmations, run.result.wall_s);
    std::fflush(stdout);
    runs.push_back(run);
    if (sketch_best) {
      run.tuner = "auto_sketches";
      run.result.best = sketch_best;
      runs.push_back(std::move(run));
    }
  }

  // Each tuner's best, built and checked, timed side by side with oneDNN.
  const ops::OpInstance& op = task->op();
  ops::OpData data = ops::make_op_data(op, 7);
  std::vector<NDArray*> args = data.args();
  std::vector<PackedFunc> kernels;
  std::vector<std::unique_ptr<Module>> modules;
  for (TunerRun& run : runs) {
    if (!run.result.best) throw UserError(str(run.tuner, " found no valid config for ", label));
    Schedule s = search::schedule_from_record(*run.result.best, workload, op, kTarget);
    BuildResult built = build({s.func()}, kTarget);
    PackedFunc f = built.module->get_function(op.func.name);
    Comparison c = ops::run_and_check(f, data);
    if (!c.ok()) throw UserError(str("the best config of ", run.tuner, " is wrong: ", c.message));
    kernels.push_back(f);
    modules.push_back(std::move(built.module));
  }
  // The convolution on plain and on blocked layouts; the matmul has only dnnl_sgemm.
  std::unique_ptr<OnednnConv2d> conv, conv_blocked;
  if (workload.op == "conv2d") {
    conv = onednn_conv(workload, data, OnednnConvLayout::Plain);
    conv_blocked = onednn_conv(workload, data, OnednnConvLayout::Blocked);
  }
  std::function<void()> onednn = onednn_kernel(workload, data, conv.get());
  check_onednn(onednn, conv.get(), data, label);
  std::function<void()> onednn_blocked;
  if (conv_blocked) {
    onednn_blocked = onednn_kernel(workload, data, conv_blocked.get());
    check_onednn(onednn_blocked, conv_blocked.get(), data, label);
  }

  wait_for_idle_cpu();
  std::vector<std::vector<double>> times(runs.size());
  std::vector<double> onednn_times, blocked_times;
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < runs.size(); ++k) {
      PackedFunc f = kernels[k];
      times[k].push_back(time_function([&] { f(args); }, 3, 50).median_s);
    }
    onednn_times.push_back(time_function(onednn, 3, 50).median_s);
    if (onednn_blocked) blocked_times.push_back(time_function(onednn_blocked, 3, 50).median_s);
  }
  double onednn_s = median(onednn_times);
  double gf = op.flops * 1e-9;
  std::printf("  %-14s %10s %10s %14s %12s %10s %10s\n", "tuner", "GFLOP/s", "vs_onednn", "trials_to_90%", "cand/min",
              "compile%", "timing%");
  for (size_t k = 0; k < runs.size(); ++k) {
    const search::TuneResult& r = runs[k].result;
    double t = median(times[k]);
    std::printf("  %-14s %10.2f %10.3f %14d %12.1f %9.0f%% %9.0f%%\n", runs[k].tuner.c_str(), gf / t, onednn_s / t,
                runs[k].trials_to_90, r.trials_measured / r.wall_s * 60, 100 * r.compile_s / r.wall_s,
                100 * r.run_s / r.wall_s);
  }
  std::printf("  %-14s %10.2f %10.3f", "onednn", gf / onednn_s, 1.0);
  if (conv) std::printf("   (%s)", conv->implementation().c_str());
  std::printf("\n");
  if (conv_blocked) {
    std::printf("  %-14s %10.2f %10.3f   (%s)\n", "onednn_blocked", gf / median(blocked_times),
                onednn_s / median(blocked_times), conv_blocked->implementation().c_str());
  }
  size_t best = 0;
  for (size_t k = 1; k < runs.size(); ++k) {
    if (median(times[k]) < median(times[best])) best = k;
  }
  double best_s = median(times[best]);
  std::printf("%s best_tuner=%s best_gflops=%.1f onednn_gflops=%.1f vs_onednn=%.3f", label.c_str(),
              runs[best].tuner.c_str(), gf / best_s, gf / onednn_s, onednn_s / best_s);
  if (conv_blocked) {
    double blocked_s = median(blocked_times);
    std::printf(" onednn_blocked_gflops=%.1f vs_onednn_blocked=%.3f", gf / blocked_s, blocked_s / best_s);
  }
  std::printf("\n");
  auto row = [&](const std::string& tuner) -> std::optional<size_t> {
    for (size_t k = 0; k < runs.size(); ++k) {
      if (runs[k].tuner == tuner) return k;
    }
    return std::nullopt;
  };
  if (std::optional<size_t> xgb = row("xgb"); xgb && row("auto")) {
    double xgb_s = median(times[*xgb]);
    std::printf("%s auto_vs_xgb=%.3f", label.c_str(), xgb_s / median(times[*row("auto")]));
    if (row("auto_sketches")) std::printf(" auto_sketches_vs_xgb=%.3f", xgb_s / median(times[*row("auto_sketches")]));
    std::printf(" (same budget: %d trials)\n", trials);
  }
  std::fflush(stdout);
}

}  // namespace
}  // namespace temper::bench

int main(int argc, char** argv) {
  using namespace temper;
  int trials = 200;
  int rounds = 5;
  std::vector<std::string> tuners = {"random", "grid", "ga"};
  std::vector<std::string> workloads = {"matmul", "conv56", "conv28"};
  std::string log_dir = std::filesystem::temp_directory_path() / "temper_tune_bench";
  uint64_t seed = 0;
  const char* usage =
      "usage: tune_matmul [--trials N] [--tuners random,grid,ga,xgb,auto] "
      "[--workloads matmul,conv56,conv28,conv14,conv7] [--rounds N] [--log-dir DIR] [--seed N]";
  try {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      bool has_value = i + 1 < argc;
      if (arg == "--trials" && has_value) {
        trials = std::max(1, std::atoi(argv[++i]));
      } else if (arg == "--rounds" && has_value) {
        rounds = std::max(1, std::atoi(argv[++i]));
      } else if (arg == "--tuners" && has_value) {
        tuners = bench::split_list(argv[++i], ',');
      } else if (arg == "--workloads" && has_value) {
        workloads = bench::split_list(argv[++i], ',');
      } else if (arg == "--log-dir" && has_value) {
        log_dir = argv[++i];
      } else if (arg == "--seed" && has_value) {
        seed = std::strtoull(argv[++i], nullptr, 10);
      } else {
        throw UserError(str("unknown argument '", arg, "'; ", usage));
      }
    }
    for (const std::string& w : workloads) {
      if (!bench::kWorkloads.count(w)) throw UserError(str("unknown workload '", w, "'; ", usage));
    }
    std::filesystem::create_directories(log_dir);
    std::printf("fp32, %d threads, target %s; logs in %s; seed %llu\n", temper_get_num_threads(),
                bench::kTarget.to_string().c_str(), log_dir.c_str(), static_cast<unsigned long long>(seed));
    for (const std::string& w : workloads) bench::run_workload(w, tuners, trials, rounds, log_dir, seed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tune_matmul: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
