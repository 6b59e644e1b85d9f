// The tuning stack end to end: random, grid, genetic and model-guided (xgb) tuning of a
// template, and the auto-scheduler (auto: sketches, evolutionary search under the xgb
// model), on fp32 matmul 1024^3 and the ResNet-18 3x3 conv2d layers, the same trial
// budget each, every measurement logged to a SQLite file. Then each tuner's best schedule
// is built and timed, interleaved round by round with oneDNN (dnnl_sgemm; the convolution
// primitive on the same NCHW data and, as oneDNN's best case, on its blocked layouts with
// the data reordered once outside the timing), after checking its output against the
// reference -- in --processes fresh processes (3), whose medians are reported: each
// process's page layout is another draw, which moves some schedules by several percent.
//
// Prints per workload and tuner: the best GFLOP/s (re-timed side by side with oneDNN) and
// the ratio, the trials the tuner needed to reach 90% of its own best, measurement
// throughput (candidates per minute) and the share of the job's wall time spent
// compiling and timing. The auto-scheduler measures the op's hand-written default
// schedule first; its row `auto_sketches` is its best among the candidates of its
// sketches alone. With both xgb and auto, the last lines give auto / xgb in each process
// and for the medians.
//
//   tune_matmul [--trials N (200)] [--tuners random,grid,ga,xgb,auto] [--seed N]
//               [--workloads matmul,conv56,conv28,conv14,conv7] [--rounds N] [--processes N]
//               [--log-dir DIR]
//               [--retime]   (no tuning: re-time the bests of the logs an earlier run left in --log-dir)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
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

// A tuner's job as its log left it (--retime): its best and its records, no timings.
search::TuneResult from_log(const std::string& path, const ops::Workload& workload) {
  if (!std::filesystem::exists(path)) {
    throw UserError(str("--retime: no log ", path, "; run without --retime first to tune into it"));
  }
  tuning_db::SQLiteDatabase db(path, tuning_db::OpenMode::ReadOnly);
  search::TuneResult result;
  tuning_db::WorkloadKey key = tuning_db::WorkloadKey::from(workload);
  result.records = db.records_for(key, kTarget.to_string());
  std::vector<tuning_db::TuningRecord> best = db.top_k(key, kTarget.to_string(), 1);
  if (!best.empty()) result.best = best[0];
  return result;
}

struct TunerRun {
  std::string tuner;
  search::TuneResult result;
  int trials_to_90 = 0;  // trials until the best reached 90% of the final best
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

// How the bests are timed: in this process (the child a parent starts), or in `processes`
// fresh children whose medians are taken. Each process allocates its own data, so its
// physical page layout is a new draw: a schedule that strides across pages (an unpacked
// matrix's columns) is faster in one process than in another by several percent, and one
// process would make the ratio a coin toss.
struct RetimePlan {
  bool in_this_process = false;
  int processes = 3;
  std::string self;  // this executable, for the children
};

// The times of one re-timing process, in seconds: each run's best, oneDNN, and oneDNN on
// blocked layouts (conv only).
struct Timings {
  std::map<std::string, double> seconds;
  std::string onednn_implementation, blocked_implementation;
};

// Builds each run's best, checks it, and times it interleaved round by round with oneDNN.
Timings retime_here(const ops::Workload& workload, const ops::OpInstance& op, const std::vector<TunerRun>& runs,
                    int rounds, const std::string& label) {
  ops::OpData data = ops::make_op_data(op, 7);
  std::vector<NDArray*> args = data.args();
  std::vector<PackedFunc> kernels;
  std::vector<std::unique_ptr<Module>> modules;
  for (const TunerRun& run : runs) {
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
  Timings t;
  for (size_t k = 0; k < runs.size(); ++k) t.seconds[runs[k].tuner] = median(times[k]);
  t.seconds["onednn"] = median(onednn_times);
  if (conv) t.onednn_implementation = conv->implementation();
  if (conv_blocked) {
    t.seconds["onednn_blocked"] = median(blocked_times);
    t.blocked_implementation = conv_blocked->implementation();
  }
  return t;
}

// A child's report: one line per time, "retimed NAME SECONDS [IMPLEMENTATION]".
void print_timings(const Timings& t) {
  for (const auto& [name, seconds] : t.seconds) {
    const std::string& impl = name == "onednn" ? t.onednn_implementation
                              : name == "onednn_blocked" ? t.blocked_implementation
                                                         : std::string();
    std::printf("retimed %s %.9g %s\n", name.c_str(), seconds, impl.c_str());
  }
  std::fflush(stdout);
}

Timings parse_timings(const std::string& output) {
  Timings t;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string tag, name;
    double seconds = 0;
    if (!(words >> tag >> name >> seconds) || tag != "retimed") continue;
    t.seconds[name] = seconds;
    std::string impl;
    std::getline(words >> std::ws, impl);
    if (name == "onednn") t.onednn_implementation = impl;
    if (name == "onednn_blocked") t.blocked_implementation = impl;
  }
  return t;
}

// Runs this benchmark again as a child that re-times the logs' bests (--retime-here) and
// returns what it reports.
Timings retime_in_child(const RetimePlan& plan, const std::string& label, const std::vector<std::string>& tuners,
                        int rounds, const std::string& log_dir) {
  std::string command = str("'", plan.self, "' --retime-here --workloads ", label, " --tuners ",
                            [&] {
                              std::string list;
                              for (const std::string& t : tuners) list += (list.empty() ? "" : ",") + t;
                              return list;
                            }(),
                            " --rounds ", rounds, " --log-dir '", log_dir, "'");
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw UserError(str("cannot start the re-timing process: ", command));
  std::string output;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  int status = pclose(pipe);
  if (status != 0) throw UserError(str("the re-timing process failed (", status, "): ", command, "\n", output));
  return parse_timings(output);
}

void run_workload(const std::string& label, const std::vector<std::string>& tuners, int trials, int rounds,
                  const std::string& log_dir, uint64_t seed, bool retime, const RetimePlan& plan) {
  ops::Workload workload = ops::Workload::parse(kWorkloads.at(label));
  std::unique_ptr<schedule_space::Task> task = schedule_space::Task::create(workload, kTarget);
  if (!plan.in_this_process) {
    std::printf("\n%s  (%s, %lld configs, %d trials per tuner)\n", label.c_str(), workload.to_string().c_str(),
                static_cast<long long>(task->space().size()), trials);
    std::fflush(stdout);
  }

  measure::Builder builder;
  measure::Runner runner(tuning_runner_options());
  search::TuneOptions options;
  options.trials = trials;

  std::vector<TunerRun> runs;
  for (const std::string& name : tuners) {
    std::string path = log_dir + "/" + label + "_" + name + ".db";
    TunerRun run{name, {}};
    if (retime) {
      run.result = from_log(path, workload);
    } else {
      std::filesystem::remove(path);
      tuning_db::SQLiteDatabase db(path);
      wait_for_idle_cpu();
      if (name == "auto") {
        schedule_space::AutoSpace space(workload, kTarget);
        search::AutoExplorer explorer(space, cost_model::make_cost_model("xgb", {}), seed);
        run.result = search::tune(explorer, builder, runner, db, options);
      } else {
        std::unique_ptr<search::Tuner> tuner = search::make_tuner(name, *task, seed);
        run.result = search::tune(*task, *tuner, builder, runner, db, options);
      }
    }
    std::optional<tuning_db::TuningRecord> sketch_best;
    if (name == "auto") sketch_best = best_of_sketches(run.result.records, task->op(), kTarget);
    const std::vector<double>& curve = run.result.best_curve;
    while (run.trials_to_90 < static_cast<int>(curve.size()) && curve[run.trials_to_90] < 0.9 * curve.back()) {
      ++run.trials_to_90;
    }
    ++run.trials_to_90;
    if (!retime) {
      std::printf("  tuned with %-6s: %d trials, %d failed, %d confirmations, %.0f s\n", name.c_str(),
                  run.result.trials_measured, run.result.errors, run.result.confirmations, run.result.wall_s);
    } else if (!plan.in_this_process) {
      std::printf("  re-timing %-6s: the best of %s\n", name.c_str(), path.c_str());
    }
    std::fflush(stdout);
    runs.push_back(run);
    if (sketch_best) {
      run.tuner = "auto_sketches";
      run.result.best = sketch_best;
      runs.push_back(std::move(run));
    }
  }
  if (plan.in_this_process) {
    print_timings(retime_here(workload, task->op(), runs, rounds, label));
    return;
  }

  // Each tuner's best, built, checked and timed side by side with oneDNN in fresh processes.
  std::vector<Timings> per_process;
  for (int p = 0; p < plan.processes; ++p) per_process.push_back(retime_in_child(plan, label, tuners, rounds, log_dir));
  auto median_of = [&](const std::string& name) {
    std::vector<double> values;
    for (const Timings& t : per_process) values.push_back(t.seconds.at(name));
    return median(values);
  };
  double onednn_s = median_of("onednn");
  double gf = task->op().flops * 1e-9;
  std::printf("  %-14s %10s %10s %14s %12s %10s %10s\n", "tuner", "GFLOP/s", "vs_onednn", "trials_to_90%", "cand/min",
              "compile%", "timing%");
  for (const TunerRun& run : runs) {
    const search::TuneResult& r = run.result;
    double t = median_of(run.tuner);
    double wall_s = std::max(r.wall_s, 1e-9);  // 0 when re-timed from a log
    std::printf("  %-14s %10.2f %10.3f %14d %12.1f %9.0f%% %9.0f%%\n", run.tuner.c_str(), gf / t, onednn_s / t,
                run.trials_to_90, r.trials_measured / wall_s * 60, 100 * r.compile_s / wall_s,
                100 * r.run_s / wall_s);
  }
  const Timings& first = per_process.front();
  std::printf("  %-14s %10.2f %10.3f", "onednn", gf / onednn_s, 1.0);
  if (!first.onednn_implementation.empty()) std::printf("   (%s)", first.onednn_implementation.c_str());
  std::printf("\n");
  bool blocked = first.seconds.count("onednn_blocked") > 0;
  if (blocked) {
    double blocked_s = median_of("onednn_blocked");
    std::printf("  %-14s %10.2f %10.3f   (%s)\n", "onednn_blocked", gf / blocked_s, onednn_s / blocked_s,
                first.blocked_implementation.c_str());
  }
  size_t best = 0;
  for (size_t k = 1; k < runs.size(); ++k) {
    if (median_of(runs[k].tuner) < median_of(runs[best].tuner)) best = k;
  }
  double best_s = median_of(runs[best].tuner);
  std::printf("%s best_tuner=%s best_gflops=%.1f onednn_gflops=%.1f vs_onednn=%.3f", label.c_str(),
              runs[best].tuner.c_str(), gf / best_s, gf / onednn_s, onednn_s / best_s);
  if (blocked) {
    double blocked_s = median_of("onednn_blocked");
    std::printf(" onednn_blocked_gflops=%.1f vs_onednn_blocked=%.3f", gf / blocked_s, blocked_s / best_s);
  }
  std::printf("\n");
  auto has = [&](const std::string& tuner) { return first.seconds.count(tuner) > 0; };
  if (has("xgb") && has("auto")) {
    // The ratio in each process, then the ratio of the medians.
    for (const char* other : {"auto", "auto_sketches"}) {
      if (!has(other)) continue;
      std::printf("%s %s_vs_xgb per process:", label.c_str(), other);
      for (const Timings& t : per_process) std::printf(" %.3f", t.seconds.at("xgb") / t.seconds.at(other));
      std::printf("\n");
    }
    double xgb_s = median_of("xgb");
    std::printf("%s auto_vs_xgb=%.3f", label.c_str(), xgb_s / median_of("auto"));
    if (has("auto_sketches")) std::printf(" auto_sketches_vs_xgb=%.3f", xgb_s / median_of("auto_sketches"));
    std::printf(" (same budget: %d trials; medians of %d processes)\n", trials, plan.processes);
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
  bool retime = false;
  bench::RetimePlan plan;
  plan.self = std::filesystem::read_symlink("/proc/self/exe").string();
  const char* usage =
      "usage: tune_matmul [--trials N] [--tuners random,grid,ga,xgb,auto] "
      "[--workloads matmul,conv56,conv28,conv14,conv7] [--rounds N] [--processes N] [--log-dir DIR] [--seed N] "
      "[--retime]";
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
      } else if (arg == "--retime") {
        retime = true;
      } else if (arg == "--retime-here") {  // a child of this benchmark's (RetimePlan)
        retime = plan.in_this_process = true;
      } else if (arg == "--processes" && has_value) {
        plan.processes = std::max(1, std::atoi(argv[++i]));
      } else {
        throw UserError(str("unknown argument '", arg, "'; ", usage));
      }
    }
    for (const std::string& w : workloads) {
      if (!bench::kWorkloads.count(w)) throw UserError(str("unknown workload '", w, "'; ", usage));
    }
    std::filesystem::create_directories(log_dir);
    if (!plan.in_this_process) {
      std::printf("fp32, %d threads, target %s; logs in %s; seed %llu; bests re-timed in %d fresh processes\n",
                  temper_get_num_threads(), bench::kTarget.to_string().c_str(), log_dir.c_str(),
                  static_cast<unsigned long long>(seed), plan.processes);
    }
    for (const std::string& w : workloads) bench::run_workload(w, tuners, trials, rounds, log_dir, seed, retime, plan);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tune_matmul: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
