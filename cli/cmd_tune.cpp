// temper tune: search a workload's template space, logging every measurement.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/duration.h"
#include "cost_model/cost_model.h"
#include "search/featurize.h"
#include "search/model_tuner.h"
#include "search/transfer.h"
#include "search/tune.h"
#include "tuning_db/sqlite_database.h"

namespace po = boost::program_options;

namespace temper::cli {
namespace {

// Set by SIGINT/SIGTERM: the job stops after the batch under way, which is logged.
std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};

void request_stop(int sig) {
  if (g_stop.exchange(true)) {
    // A second signal: the user insists. What was committed stays in the log.
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
  g_signal = sig;
}

// One line that rewrites itself on a terminal; one plain line per batch in a log file.
class ProgressLine {
 public:
  ProgressLine() : tty_(isatty(STDERR_FILENO)) {}
  ~ProgressLine() { finish(); }

  void update(const search::TuneProgress& p) {
    char best[48] = "-";
    if (p.best_gflops > 0) std::snprintf(best, sizeof best, "%.2f GFLOP/s", p.best_gflops);
    std::string eta = p.eta_s < 0 ? "?" : format_duration(p.eta_s);
    char line[256];
    std::snprintf(line, sizeof line, "trials %d/%d  best %s  errors %d  elapsed %s  eta %s", p.trials_done,
                  p.trials_total, best, p.errors, format_duration(p.elapsed_s).c_str(), eta.c_str());
    if (tty_) {
      std::fprintf(stderr, "\r%-100s", line);
      open_ = true;
    } else {
      std::fprintf(stderr, "%s\n", line);
    }
    std::fflush(stderr);
  }
  void finish() {
    if (open_) std::fprintf(stderr, "\n");
    open_ = false;
  }

 private:
  bool tty_;
  bool open_ = false;
};

}  // namespace

int cmd_tune(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: temper tune WORKLOAD --db FILE [--target T] [--trials N] [--tuner random|grid|ga|xgb] "
      "[--time-budget 8h] [--early-stopping N] [--seed N]\n"
      "                    [--transfer | --model FILE] [--save-model FILE]   (these three with --tuner xgb)";
  std::string target_text, db_path, tuner_name, time_budget, model_path, save_model_path;
  bool transfer = false;
  uint64_t seed = 0;
  search::TuneOptions options;
  measure::BuilderOptions builder_options;
  measure::RunnerOptions runner_options;
  po::options_description desc("temper tune: search the workload's schedule space; every measurement goes to the log");
  // clang-format off
  desc.add_options()
      ("db", po::value(&db_path), "the tuning log (SQLite); created if missing, appended to otherwise")
      ("target", po::value(&target_text)->default_value("llvm -mcpu=native"), "target string: llvm [-mcpu=...]")
      ("trials", po::value(&options.trials)->default_value(200), "configs to measure, those already in the log included")
      ("tuner", po::value(&tuner_name)->default_value("xgb"),
       "random, grid, ga (genetic) or xgb (simulated annealing guided by an XGBoost cost model)")
      ("transfer", po::bool_switch(&transfer),
       "xgb: pre-train the model on the log's records of other workloads of the same op and target")
      ("model", po::value(&model_path), "xgb: start from this saved model (temper model train, --save-model)")
      ("save-model", po::value(&save_model_path), "xgb: after tuning, save the model (trained on all it measured) here")
      ("time-budget", po::value(&time_budget), "stop starting new batches after this long: 90s, 30m, 8h, 1h30m")
      ("early-stopping", po::value(&options.early_stopping)->default_value(0),
       "stop after this many trials without a better time (0: never)")
      ("error-threshold", po::value(&options.error_threshold)->default_value(64),
       "stop after this many failed trials in a row (0: never)")
      ("seed", po::value(&seed)->default_value(0), "the tuner's random seed: same seed, same proposals")
      ("batch-size", po::value(&options.batch_size)->default_value(8), "configs compiled together, then timed")
      ("build-jobs", po::value(&builder_options.n_parallel)->default_value(0), "compile threads (0: one per core)")
      ("build-timeout", po::value(&builder_options.timeout_s)->default_value(30), "seconds per candidate's compile")
      ("number", po::value(&runner_options.number)->default_value(1), "calls per timed group")
      ("repeat", po::value(&runner_options.repeat)->default_value(3), "timed groups per candidate")
      ("min-repeat-ms", po::value(&runner_options.min_repeat_ms)->default_value(50), "minimum length of a group")
      ("cooldown-ms", po::value(&runner_options.cooldown_ms)->default_value(0), "pause between groups")
      ("flush-cache", po::bool_switch(&runner_options.flush_cache), "flush the caches before each group")
      ("run-timeout", po::value(&runner_options.timeout_s)->default_value(10), "seconds per candidate's check and timing")
      ("threads", po::value(&runner_options.threads)->default_value(0), "threads of parallel loops (0: one per core)");
  // clang-format on
  std::string workload_text;
  if (!parse_command_line(args, usage, desc, workload_text)) return 0;
  if (db_path.empty()) throw UserError(str("missing --db FILE: the tuning log to write\n", usage));
  auto at_least = [](const char* flag, double value, double low) {
    if (value < low) throw UserError(str(flag, " must be at least ", low, ", got ", value));
  };
  at_least("--trials", options.trials, 1);
  at_least("--batch-size", options.batch_size, 1);
  at_least("--early-stopping", options.early_stopping, 0);
  at_least("--error-threshold", options.error_threshold, 0);
  at_least("--build-jobs", builder_options.n_parallel, 0);
  at_least("--number", runner_options.number, 1);
  at_least("--repeat", runner_options.repeat, 1);
  at_least("--min-repeat-ms", runner_options.min_repeat_ms, 0);
  at_least("--cooldown-ms", runner_options.cooldown_ms, 0);
  at_least("--threads", runner_options.threads, 0);
  if (!(builder_options.timeout_s > 0)) throw UserError("--build-timeout must be positive");
  if (!(runner_options.timeout_s > 0)) throw UserError("--run-timeout must be positive");
  if (!time_budget.empty()) options.time_budget_s = parse_duration(time_budget, "--time-budget");
  if (tuner_name != "xgb") {
    const char* model_flag = transfer                   ? "--transfer"
                             : !model_path.empty()      ? "--model"
                             : !save_model_path.empty() ? "--save-model"
                                                        : nullptr;
    if (model_flag) {
      throw UserError(str(model_flag, " needs the model-guided tuner (--tuner xgb); the ", tuner_name,
                          " tuner uses no cost model"));
    }
  }
  if (transfer && !model_path.empty()) {
    throw UserError("--transfer or --model, not both: --transfer trains a model on the log, --model loads one");
  }
  if (!save_model_path.empty()) {
    std::filesystem::path folder = std::filesystem::path(save_model_path).parent_path();
    if (!folder.empty() && !std::filesystem::is_directory(folder)) {
      throw UserError(str("cannot write --save-model ", save_model_path, ": no folder ", folder.string()));
    }
  }

  ops::Workload workload = ops::Workload::parse(workload_text);
  Target target = Target::parse(target_text);
  std::unique_ptr<schedule_space::Task> task = schedule_space::Task::create(workload, target);
  // The xgb tuner's model: loaded, pre-trained on the log, or (make_tuner) untrained. A
  // bad model file or tuner name is refused before the log is created.
  std::unique_ptr<cost_model::CostModel> model;
  std::string model_line = "untrained";
  if (!model_path.empty()) {
    model = cost_model::load_cost_model(model_path);
    model_line = str("loaded from ", model_path, " (trained on ", model->num_samples(), " samples)");
  }
  std::unique_ptr<search::Tuner> tuner;
  if (!model && !transfer) tuner = search::make_tuner(tuner_name, *task, seed);
  tuning_db::SQLiteDatabase db(db_path);
  if (transfer) {
    cost_model::ModelOptions model_options;
    model_options.seed = seed;
    std::string why;
    search::TransferSet used;
    auto transfer_start = std::chrono::steady_clock::now();
    model = search::pretrain_from_log(db, *task, model_options, &why, &used);
    double transfer_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - transfer_start).count();
    model_line = model ? str("transfer: ", used.samples.size(), " samples from ", used.workloads, " workloads (",
                             used.records_skipped, " skipped), in ", format_duration(transfer_s))
                       : str("transfer: ", why, "; starting with an untrained model");
  }
  if (!tuner) {
    const schedule_space::Task& t = *task;
    if (model) {
      tuner = std::make_unique<search::ModelTuner>(
          t.space(), [&t](const schedule_space::Config& c) { return search::config_features(t, c); },
          search::sample_group(t), std::move(model), seed);
    } else {
      tuner = search::make_tuner(tuner_name, t, seed);
    }
  }
  measure::Builder builder(builder_options);
  measure::Runner runner(runner_options);

  std::printf("workload   %s\n", workload.to_string().c_str());
  std::printf("target     %s\n", target.to_string().c_str());
  std::printf("template   %s, %lld configs\n", task->tmpl().name.c_str(), static_cast<long long>(task->space().size()));
  std::printf("tuner      %s, seed %llu, %d trials\n", tuner_name.c_str(), static_cast<unsigned long long>(seed),
              options.trials);
  if (tuner_name == "xgb") std::printf("model      %s\n", model_line.c_str());
  // Timings on a busy machine are noisy and favour schedules that use fewer threads.
  double load = 0;
  unsigned cores = std::thread::hardware_concurrency();
  if (getloadavg(&load, 1) == 1 && cores > 0 && load > cores - 0.5) {
    std::fprintf(stderr,
                 "warning: the machine is busy (load average %.1f on %u cores): times will be noisy and may favour "
                 "schedules that use fewer threads\n",
                 load, cores);
  }
  std::fflush(stdout);

  g_stop = false;
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  ProgressLine line;
  search::TuneResult result =
      search::tune(*task, *tuner, builder, runner, db, options, [&](const search::TuneProgress& p) { line.update(p); },
                   &g_stop);
  line.finish();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);

  if (result.trials_resumed > 0) std::printf("resumed    %d trials were already in the log\n", result.trials_resumed);
  std::printf("measured   %d trials, %d failed, in %s (compiling %s, timing %s)\n", result.trials_measured,
              result.errors, format_duration(result.wall_s).c_str(), format_duration(result.compile_s).c_str(),
              format_duration(result.run_s).c_str());
  std::printf("stopped    %s\n", result.stop_reason.c_str());
  if (result.best) {
    double ms = result.best->mean * 1e3;
    double gf = task->op().flops > 0 ? task->op().flops / result.best->mean * 1e-9 : 0;
    std::printf("best       %.3f ms", ms);
    if (gf > 0) std::printf(", %.2f GFLOP/s", gf);
    std::printf("\nconfig     %s\n", result.best->config.dump().c_str());
  } else {
    std::printf("best       none: no trial has succeeded yet\n");
  }
  if (!save_model_path.empty()) {
    auto* model_tuner = dynamic_cast<search::ModelTuner*>(tuner.get());
    TEMPER_CHECK(model_tuner != nullptr, "--save-model with a tuner that has no model");
    model_tuner->model().save(save_model_path);
    std::printf("model      saved to %s (%lld samples); reuse it: --tuner xgb --model %s\n", save_model_path.c_str(),
                static_cast<long long>(model_tuner->model().num_samples()), save_model_path.c_str());
  }
  std::printf("log        %s (apply it: temper run '%s' --db %s)\n", db_path.c_str(), workload.to_string().c_str(),
              db_path.c_str());
  if (g_signal != 0) return 128 + g_signal;
  return result.best ? 0 : 1;
}

}  // namespace temper::cli
