// The auto-scheduler against Temper's default schedules, on ops a template does not cover
// or covers only in part: the softmax and layer norm of a BERT-base layer (sequence length
// 128), its attention matmuls (Q K^T and the product with V, 12 heads), and a ResNet-18
// conv with its bias, residual add and relu fused (fused_conv2d). Each workload
// is tuned with --space auto for the same budget into a fresh SQLite log; then the
// default schedule (what a build uses without a log), the job's best and the best of the
// sketches' candidates alone (the job measures the default first) are built, checked
// against the reference and timed interleaved round by round; medians are reported with
// auto / default as a ratio.
//
//   auto_vs_default [--trials N] [--workloads softmax,layer_norm,qk,av,conv_res] [--rounds N] [--log-dir DIR]
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "benchmarks/bench_common.h"
#include "compiler/codegen/build.h"
#include "compiler/ops/cpu_schedules.h"
#include "compiler/ops/op_data.h"
#include "compiler/runtime/c_runtime_api.h"
#include "compiler/runtime/timer.h"
#include "cost_model/cost_model.h"
#include "search/apply_history_best.h"
#include "search/auto_explorer.h"
#include "search/tune.h"
#include "tuning_db/sqlite_database.h"

namespace temper::bench {
namespace {

const Target kTarget = Target::parse("llvm -mcpu=native");

const std::map<std::string, std::string> kWorkloads = {
    {"softmax", "softmax:shape=12x128x128,axis=2"},
    {"layer_norm", "layer_norm:shape=128x768,axis=1"},
    {"qk", "batch_matmul:B=12,M=128,N=128,K=64,transpose_b=1"},
    {"av", "batch_matmul:B=12,M=128,N=64,K=128"},
    {"conv_res", "fused_conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1,residual=1,act=relu"},
};

struct Contender {
  std::string name;
  PackedFunc kernel;
  std::unique_ptr<Module> module;
  std::vector<double> times;
};

Contender build_checked(const std::string& name, const Schedule& s, const ops::OpInstance& op, ops::OpData& data) {
  BuildResult built = build({s.func()}, kTarget);
  PackedFunc f = built.module->get_function(op.func.name);
  Comparison c = ops::run_and_check(f, data);
  if (!c.ok()) throw UserError(str(name, " of ", op.name, " is wrong: ", c.message));
  return {name, f, std::move(built.module), {}};
}

void run_workload(const std::string& label, int trials, int rounds, const std::string& log_dir) {
  ops::Workload workload = ops::Workload::parse(kWorkloads.at(label));
  schedule_space::AutoSpace space(workload, kTarget);
  const ops::OpInstance& op = space.op();
  std::printf("\n%s  (%s, %zu sketches, %d trials)\n", label.c_str(), workload.to_string().c_str(),
              space.sketches().size(), trials);
  std::fflush(stdout);

  std::string path = log_dir + "/" + label + "_auto.db";
  std::filesystem::remove(path);
  tuning_db::SQLiteDatabase db(path);
  measure::Builder builder;
  measure::Runner runner(tuning_runner_options());
  search::TuneOptions options;
  options.trials = trials;
  wait_for_idle_cpu();
  search::AutoExplorer explorer(space, cost_model::make_cost_model("xgb", {}), 0);
  search::TuneResult result = search::tune(explorer, builder, runner, db, options);
  std::printf("  tuned: %d trials, %d failed, %.0f s (compiling %.0f s, timing %.0f s)\n", result.trials_measured,
              result.errors, result.wall_s, result.compile_s, result.run_s);

  Schedule def = search::default_schedule(workload, op, kTarget);
  std::optional<tuning_db::TuningRecord> sketch_best = best_of_sketches(result.records, op, kTarget);
  if (!result.best || !sketch_best) throw UserError(str("the auto-scheduler found no valid schedule for ", label));

  ops::OpData data = ops::make_op_data(op, 7);
  std::vector<NDArray*> args = data.args();
  std::vector<Contender> contenders;
  contenders.push_back(build_checked("default", def, op, data));
  contenders.push_back(
      build_checked("auto", search::schedule_from_record(*result.best, workload, op, kTarget), op, data));
  contenders.push_back(
      build_checked("auto_sketches", search::schedule_from_record(*sketch_best, workload, op, kTarget), op, data));

  wait_for_idle_cpu();
  for (int r = 0; r < rounds; ++r) {
    for (Contender& c : contenders) {
      PackedFunc f = c.kernel;
      c.times.push_back(time_function([&] { f(args); }, 3, 50).median_s);
    }
  }
  double default_s = median(contenders[0].times);
  std::printf("  %-14s %10s %10s %12s\n", "schedule", "ms", "GFLOP/s", "vs_default");
  for (const Contender& c : contenders) {
    double t = median(c.times);
    std::printf("  %-14s %10.4f %10.2f %12.3f\n", c.name.c_str(), t * 1e3, op.flops * 1e-9 / t, default_s / t);
  }
  std::printf("%s auto_vs_default=%.3f auto_sketches_vs_default=%.3f (%d trials)\n", label.c_str(),
              default_s / median(contenders[1].times), default_s / median(contenders[2].times), trials);
  std::fflush(stdout);
}

}  // namespace
}  // namespace temper::bench

int main(int argc, char** argv) {
  using namespace temper;
  int trials = 64;
  int rounds = 5;
  std::vector<std::string> workloads = {"softmax", "layer_norm", "qk", "av", "conv_res"};
  std::string log_dir = std::filesystem::temp_directory_path() / "temper_auto_bench";
  const char* usage =
      "usage: auto_vs_default [--trials N] [--workloads softmax,layer_norm,qk,av,conv_res] [--rounds N] "
      "[--log-dir DIR]";
  try {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      bool has_value = i + 1 < argc;
      if (arg == "--trials" && has_value) {
        trials = std::max(1, std::atoi(argv[++i]));
      } else if (arg == "--rounds" && has_value) {
        rounds = std::max(1, std::atoi(argv[++i]));
      } else if (arg == "--workloads" && has_value) {
        workloads = bench::split_list(argv[++i], ',');
      } else if (arg == "--log-dir" && has_value) {
        log_dir = argv[++i];
      } else {
        throw UserError(str("unknown argument '", arg, "'; ", usage));
      }
    }
    for (const std::string& w : workloads) {
      if (!bench::kWorkloads.count(w)) throw UserError(str("unknown workload '", w, "'; ", usage));
    }
    std::filesystem::create_directories(log_dir);
    std::printf("fp32, %d threads, target %s; logs in %s\n", temper_get_num_threads(),
                bench::kTarget.to_string().c_str(), log_dir.c_str());
    for (const std::string& w : workloads) bench::run_workload(w, trials, rounds, log_dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "auto_vs_default: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
