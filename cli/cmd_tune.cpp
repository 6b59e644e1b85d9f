// temper tune: search a workload's template space, logging every measurement, for one
// target or for several at once (one job per target on its own thread); or, given a .onnx
// model, the spaces of all its tasks (graph/task_extraction.h), round-robin, for one target.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/duration.h"
#include "compiler/codegen/gpu/nvrtc.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/task_extraction.h"
#include "compiler/runtime/gpu/gpu_device.h"
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

// "trials 8/200  best 12.34 GFLOP/s  errors 0  elapsed 1m05s  eta 20m"
std::string progress_text(const search::TuneProgress& p) {
  char best[48] = "-";
  if (p.best_gflops > 0) std::snprintf(best, sizeof best, "%.2f GFLOP/s", p.best_gflops);
  std::string eta = p.eta_s < 0 ? "?" : format_duration(p.eta_s);
  char line[256];
  std::snprintf(line, sizeof line, "trials %d/%d  best %s  errors %d  elapsed %s  eta %s", p.trials_done,
                p.trials_total, best, p.errors, format_duration(p.elapsed_s).c_str(), eta.c_str());
  return line;
}

// One line that rewrites itself on a terminal; one plain line per batch in a log file.
class ProgressLine {
 public:
  ProgressLine() : tty_(isatty(STDERR_FILENO)) {}
  ~ProgressLine() { finish(); }

  void update(const search::TuneProgress& p) {
    std::string line = progress_text(p);
    if (tty_) {
      std::fprintf(stderr, "\r%-100s", line.c_str());
      open_ = true;
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
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

// The tuner flags: which tuner, and for xgb where its model starts.
struct TunerChoice {
  std::string name;
  uint64_t seed = 0;
  bool transfer = false;
  std::string model_path;
};

// A job's tuner, made in two steps so that a bad tuner name or model file is refused
// before the log is created: prepare_tuner (no log), then finish_tuner (pre-training
// on the log for --transfer).
struct JobTuner {
  std::unique_ptr<cost_model::CostModel> model;
  std::unique_ptr<search::Tuner> tuner;
  std::string model_line = "untrained";
};

JobTuner prepare_tuner(const schedule_space::Task& task, const TunerChoice& choice) {
  JobTuner job;
  if (!choice.model_path.empty()) {
    job.model = cost_model::load_cost_model(choice.model_path);
    job.model_line = str("loaded from ", choice.model_path, " (trained on ", job.model->num_samples(), " samples)");
  }
  if (!job.model && !choice.transfer) job.tuner = search::make_tuner(choice.name, task, choice.seed);
  return job;
}

void finish_tuner(JobTuner& job, const schedule_space::Task& task, const TunerChoice& choice,
                  const tuning_db::Database& db) {
  if (choice.transfer) {
    cost_model::ModelOptions model_options;
    model_options.seed = choice.seed;
    std::string why;
    search::TransferSet used;
    auto transfer_start = std::chrono::steady_clock::now();
    job.model = search::pretrain_from_log(db, task, model_options, &why, &used);
    double transfer_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - transfer_start).count();
    job.model_line = job.model
                         ? str("transfer: ", used.samples.size(), " samples from ", used.workloads, " workloads (",
                               used.records_skipped, " skipped), in ", format_duration(transfer_s))
                         : str("transfer: ", why, "; starting with an untrained model");
  }
  if (job.tuner) return;
  if (job.model) {
    job.tuner = std::make_unique<search::ModelTuner>(
        task.space(), [&task](const schedule_space::Config& c) { return search::config_features(task, c); },
        search::sample_group(task), std::move(job.model), choice.seed);
  } else {
    job.tuner = search::make_tuner(choice.name, task, choice.seed);
  }
}

// Timings on a busy machine are noisy and favour schedules that use fewer threads.
void warn_if_busy() {
  double load = 0;
  unsigned cores = std::thread::hardware_concurrency();
  if (getloadavg(&load, 1) == 1 && cores > 0 && load > cores - 0.5) {
    std::fprintf(stderr,
                 "warning: the machine is busy (load average %.1f on %u cores): times will be noisy and may favour "
                 "schedules that use fewer threads\n",
                 load, cores);
  }
}

double gflops_of(const schedule_space::Task& task, double seconds) {
  return task.op().flops > 0 ? task.op().flops / seconds * 1e-9 : 0;
}

// ---- the targets of a job ----

// The --target flags as targets, in order ("llvm -mcpu=native" when none is given); a
// target given twice (in any spelling) is refused.
std::vector<Target> parse_targets(const std::vector<std::string>& texts) {
  std::vector<Target> targets;
  for (const std::string& text : texts) {
    Target target = Target::parse(text);
    for (const Target& earlier : targets) {
      if (earlier == target) throw UserError(str("--target '", target.to_string(), "' is given twice"));
    }
    targets.push_back(target);
  }
  if (targets.empty()) targets.push_back(Target::parse("llvm -mcpu=native"));
  return targets;
}

// The targets this machine can measure, as target strings with their device: what to
// offer when a --target cannot run here.
std::string runnable_targets() {
  std::string list = "llvm -mcpu=native";
  bool have_nvrtc = nvrtc_available(nullptr);
  for (const GpuAvailability& kind : probe_gpu_targets()) {
    if (kind.kind == Target::Kind::CUDA && !have_nvrtc) continue;
    for (size_t i = 0; i < kind.devices.size(); ++i) {
      const GpuDeviceInfo& info = kind.devices[i];
      list += kind.kind == Target::Kind::CUDA ? str(", cuda -arch=", info.version, " -device=", i, " (", info.name, ")")
                                              : str(", opencl -device=", i, " (", info.name, ")");
    }
  }
  return list;
}

// Stops the command before any work when a target cannot be tuned here: the C target
// (never), a GPU target whose device does not open, cuda without NVRTC. The message
// names each such target and why, and lists the targets this machine can run.
void check_targets_runnable(const std::vector<Target>& targets) {
  std::string problems;
  for (const Target& target : targets) {
    search::check_tunable_target(target);
    if (!target.is_gpu()) continue;
    std::string why;
    bool compiles = target.kind != Target::Kind::CUDA || nvrtc_available(&why);
    if (compiles) {
      try {
        open_gpu_device(target);
      } catch (const UserError& e) {
        why = e.what();
      }
    }
    if (!why.empty()) problems += str(problems.empty() ? "" : "\n", "target '", target.to_string(), "': ", why);
  }
  if (problems.empty()) return;
  throw UserError(str("this machine cannot run what --target asks:\n", problems,
                      "\ntargets it can run: ", runnable_targets(), " (`temper devices` says more)"));
}

// What the end of a job prints, each line after prefix ("" for a job of one target).
void print_job_result(const std::string& prefix, const schedule_space::Task& task, const search::TuneResult& result) {
  const char* p = prefix.c_str();
  if (result.trials_resumed > 0) {
    std::printf("%sresumed    %d trials were already in the log\n", p, result.trials_resumed);
  }
  std::printf("%smeasured   %d trials, %d failed, in %s (compiling %s, timing %s)\n", p, result.trials_measured,
              result.errors, format_duration(result.wall_s).c_str(), format_duration(result.compile_s).c_str(),
              format_duration(result.run_s).c_str());
  std::printf("%sstopped    %s\n", p, result.stop_reason.c_str());
  if (result.best) {
    double ms = result.best->mean * 1e3;
    double gf = gflops_of(task, result.best->mean);
    std::printf("%sbest       %.3f ms", p, ms);
    if (gf > 0) std::printf(", %.2f GFLOP/s", gf);
    std::printf("\n%sconfig     %s\n", p, result.best->config.dump().c_str());
  } else {
    std::printf("%sbest       none: no trial has succeeded yet\n", p);
  }
}

// ---- temper tune WORKLOAD --target A --target B ... ----

// One target's job: its own task, tuner, log connection, builder and runner, run on its
// own thread.
struct TargetJob {
  Target target;
  std::string prefix;  // "[opencl] ": what its lines start with
  std::unique_ptr<schedule_space::Task> task;
  JobTuner tuner;
  std::unique_ptr<tuning_db::SQLiteDatabase> db;
  std::unique_ptr<measure::Builder> builder;
  std::unique_ptr<measure::Runner> runner;
  search::TuneResult result;
  std::exception_ptr failure;  // what ended the job, when something did
};

// Tunes the workload for every target at once; the jobs share the machine (a CPU target
// times alone) and the log file, through a connection each. Returns the exit status; an
// error that ended a job is thrown once every job has finished and printed its result.
int tune_targets(const ops::Workload& workload, const std::vector<Target>& targets, const std::string& db_path,
                 const TunerChoice& choice, search::TuneOptions options, const measure::BuilderOptions& builder_options,
                 const measure::RunnerOptions& runner_options) {
  std::vector<TargetJob> jobs(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    jobs[i].target = targets[i];
    jobs[i].prefix = str("[", targets[i].to_string(), "] ");
    jobs[i].task = schedule_space::Task::create(workload, targets[i]);
    jobs[i].tuner = prepare_tuner(*jobs[i].task, choice);
  }
  for (TargetJob& job : jobs) {
    job.db = std::make_unique<tuning_db::SQLiteDatabase>(db_path);
    finish_tuner(job.tuner, *job.task, choice, *job.db);
    job.builder = std::make_unique<measure::Builder>(builder_options);
    job.runner = std::make_unique<measure::Runner>(runner_options);
  }

  std::printf("workload   %s\n", workload.to_string().c_str());
  std::printf("tuner      %s, seed %llu, %d trials per target, %zu targets at once\n", choice.name.c_str(),
              static_cast<unsigned long long>(choice.seed), options.trials, jobs.size());
  for (const TargetJob& job : jobs) {
    std::printf("%stemplate   %s, %lld configs\n", job.prefix.c_str(), job.task->tmpl().name.c_str(),
                static_cast<long long>(job.task->space().size()));
    if (choice.name == "xgb") std::printf("%smodel      %s\n", job.prefix.c_str(), job.tuner.model_line.c_str());
  }
  warn_if_busy();
  std::fflush(stdout);

  measure::MachineShare share;
  options.machine_share = &share;
  g_stop = false;
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  std::vector<std::thread> threads;
  for (TargetJob& job : jobs) {
    threads.emplace_back([&job, &options] {
      try {
        job.result = search::tune(
            *job.task, *job.tuner.tuner, *job.builder, *job.runner, *job.db, options,
            [&job](const search::TuneProgress& p) {
              // One call per line: stdio locks the stream for it, so the jobs' lines never mix.
              std::fprintf(stderr, "%s%s\n", job.prefix.c_str(), progress_text(p).c_str());
            },
            &g_stop);
      } catch (...) {
        job.failure = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);

  bool every_target_has_a_best = true;
  std::exception_ptr first_failure;
  for (const TargetJob& job : jobs) {
    if (job.failure) {
      if (!first_failure) first_failure = job.failure;
      try {
        std::rethrow_exception(job.failure);
      } catch (const std::exception& e) {
        std::printf("%sfailed     %s\n", job.prefix.c_str(), e.what());
      }
      continue;
    }
    print_job_result(job.prefix, *job.task, job.result);
    every_target_has_a_best = every_target_has_a_best && job.result.best.has_value();
  }
  std::printf("log        %s (apply it: temper run '%s' --target TARGET --db %s)\n", db_path.c_str(),
              workload.to_string().c_str(), db_path.c_str());
  std::fflush(stdout);
  if (first_failure) std::rethrow_exception(first_failure);
  if (g_signal != 0) return 128 + g_signal;
  return every_target_has_a_best ? 0 : 1;
}

// ---- temper tune MODEL.onnx ----

// One task of a model's job and what it has had so far.
struct ModelTask {
  graph::ExtractedTask extracted;
  std::unique_ptr<schedule_space::Task> task;
  JobTuner job;
  int trials = 0;  // in the log for this job: resumed ones included
  int errors = 0;
  std::optional<tuning_db::TuningRecord> best;
  std::string finished;  // why it takes no more turns (the space is exhausted, ...); empty while it does
};

// Imports the model, extracts its tasks and tunes them round-robin: each task in turn
// gets a batch of trials until the --trials budget (shared, resumed trials included) or
// the time budget is spent. Returns the exit status.
int tune_model(const std::string& model_path, const std::map<std::string, int64_t>& dims, const Target& target,
               const std::string& db_path, const TunerChoice& choice, const search::TuneOptions& options,
               const measure::BuilderOptions& builder_options, const measure::RunnerOptions& runner_options) {
  graph::ImportOptions import_options;
  import_options.dims = dims;
  graph::Graph g = graph::import_onnx(model_path, import_options);
  std::vector<std::string> skipped;
  std::vector<ModelTask> tasks;
  for (graph::ExtractedTask& e : graph::extract_tasks(g, target, &skipped)) {
    ModelTask t;
    t.task = schedule_space::Task::create(e.workload, target);
    t.extracted = std::move(e);
    t.job = prepare_tuner(*t.task, choice);
    tasks.push_back(std::move(t));
  }
  std::printf("model      %s: %zu nodes, %zu tasks\n", model_path.c_str(), g.nodes().size(), tasks.size());
  std::printf("target     %s\n", target.to_string().c_str());
  std::printf("tuner      %s, seed %llu, %d trials shared round-robin, %d per turn\n", choice.name.c_str(),
              static_cast<unsigned long long>(choice.seed), options.trials, options.batch_size);
  std::printf("task  count  configs  workload\n");
  for (size_t i = 0; i < tasks.size(); ++i) {
    std::printf("%4zu  %5d  %7lld  %s\n", i, tasks[i].extracted.count,
                static_cast<long long>(tasks[i].task->space().size()), tasks[i].extracted.workload.to_string().c_str());
  }
  for (const std::string& why : skipped) std::printf("skipped    %s\n", why.c_str());
  if (tasks.empty()) {
    throw UserError(
        str(model_path, " has no node that a tuning template serves (Conv, Gemm, MatMul); nothing to tune"));
  }

  tuning_db::SQLiteDatabase db(db_path);
  for (ModelTask& t : tasks) {
    finish_tuner(t.job, *t.task, choice, db);
    if (choice.name == "xgb") std::printf("model      task %zu: %s\n", &t - tasks.data(), t.job.model_line.c_str());
  }
  measure::Builder builder(builder_options);
  measure::Runner runner(runner_options);
  warn_if_busy();
  std::fflush(stdout);

  g_stop = false;
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  auto out_of_time = [&] { return options.time_budget_s > 0 && elapsed() >= options.time_budget_s; };
  int spent = 0;
  std::string stop_reason = "trial budget reached";
  bool turned = true;
  while (turned) {
    turned = false;
    for (size_t i = 0; i < tasks.size(); ++i) {
      ModelTask& t = tasks[i];
      if (!t.finished.empty()) continue;
      if (spent >= options.trials || g_stop || out_of_time()) break;
      // Later turns ask for new trials only: the tuner has seen the log's records since
      // the first, so tune() counts none of them again.
      search::TuneOptions turn = options;
      turn.trials = std::min(options.batch_size, options.trials - spent);
      if (options.time_budget_s > 0) turn.time_budget_s = options.time_budget_s - elapsed();
      search::TuneResult r = search::tune(*t.task, *t.job.tuner, builder, runner, db, turn, {}, &g_stop);
      int got = r.trials_resumed + r.trials_measured;
      t.trials += got;
      t.errors += r.errors;
      spent += got;
      if (r.best && (!t.best || r.best->mean < t.best->mean)) t.best = r.best;
      if (got < turn.trials && !g_stop && !out_of_time()) t.finished = r.stop_reason;
      turned = true;
      char best[48] = "-";
      if (t.best) std::snprintf(best, sizeof best, "%.2f GFLOP/s", gflops_of(*t.task, t.best->mean));
      std::fprintf(stderr, "task %zu  trials %d (+%d)  best %s  total %d/%d  elapsed %s%s%s\n", i, t.trials, got, best,
                   spent, options.trials, format_duration(elapsed()).c_str(),
                   t.finished.empty() ? "" : "  done: ", t.finished.c_str());
    }
  }
  if (g_stop) {
    stop_reason = "stopped on request";
  } else if (out_of_time()) {
    stop_reason = "time budget reached";
  } else if (spent < options.trials) {
    stop_reason = "every task is done";
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);

  std::printf("stopped    %s after %d trials in %s\n", stop_reason.c_str(), spent, format_duration(elapsed()).c_str());
  std::printf("task  trials  errors  best\n");
  // A task whose every trial failed is a failed job; one the budget never reached is not.
  bool all_failed_somewhere = false;
  int untried = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const ModelTask& t = tasks[i];
    std::printf("%4zu  %6d  %6d  ", i, t.trials, t.errors);
    if (t.best) {
      std::printf("%.3f ms, %.2f GFLOP/s\n", t.best->mean * 1e3, gflops_of(*t.task, t.best->mean));
    } else if (t.trials == 0) {
      std::printf("none (no trials)\n");
      ++untried;
    } else {
      std::printf("none (every trial failed)\n");
      all_failed_somewhere = true;
    }
  }
  std::printf("log        %s\n", db_path.c_str());
  if (untried > 0 && g_signal == 0) {
    std::fprintf(stderr,
                 "warning: %d of %zu tasks got no trials; builds use their template defaults (give --trials "
                 "%d or more for %d per task)\n",
                 untried, tasks.size(), static_cast<int>(tasks.size()) * options.batch_size, options.batch_size);
  }
  if (g_signal != 0) return 128 + g_signal;
  return all_failed_somewhere ? 1 : 0;
}

}  // namespace

int cmd_tune(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: temper tune WORKLOAD --db FILE [--target T ...] [--trials N] [--tuner random|grid|ga|xgb] "
      "[--time-budget 8h] [--early-stopping N] [--seed N]\n"
      "       temper tune MODEL.onnx --db FILE [--dim NAME=N ...] [the same flags]   (all the model's tasks, "
      "sharing --trials)\n"
      "                    [--transfer | --model FILE] [--save-model FILE]   (these three with --tuner xgb)";
  std::string db_path, tuner_name, time_budget, model_path, save_model_path;
  std::vector<std::string> target_texts, dim_flags;
  bool transfer = false;
  uint64_t seed = 0;
  search::TuneOptions options;
  measure::BuilderOptions builder_options;
  measure::RunnerOptions runner_options;
  po::options_description desc("temper tune: search the workload's schedule space; every measurement goes to the log");
  // clang-format off
  desc.add_options()
      ("db", po::value(&db_path), "the tuning log (SQLite); created if missing, appended to otherwise")
      ("target", po::value(&target_texts)->composing(),
       "target string: llvm [-mcpu=...] (default llvm -mcpu=native), cuda -arch=sm_90 [-device=N], opencl "
       "[-device=N]; give it several times to tune for several targets at once")
      ("trials", po::value(&options.trials)->default_value(200),
       "configs to measure, those already in the log included; for a model, shared by its tasks")
      ("dim", po::value(&dim_flags)->composing(), "model: NAME=N, the size of the dynamic dimension NAME (repeatable)")
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

  std::vector<Target> targets = parse_targets(target_texts);
  if (targets.size() > 1) {
    if (!model_path.empty()) throw UserError("--model starts one target's tuner; give one --target with it");
    if (!save_model_path.empty()) throw UserError("--save-model saves one target's model; give one --target with it");
  }

  TunerChoice choice{tuner_name, seed, transfer, model_path};
  if (workload_text.ends_with(".onnx")) {
    if (options.early_stopping > 0) {
      throw UserError("--early-stopping applies to one workload; a model's tasks share --trials round-robin");
    }
    if (!save_model_path.empty()) throw UserError("--save-model saves one task's model; give a workload, not a model");
    if (targets.size() > 1) throw UserError("tune MODEL.onnx tunes for one --target; run it once per target");
    check_targets_runnable(targets);
    return tune_model(workload_text, parse_dim_flags(dim_flags), targets[0], db_path, choice, options, builder_options,
                      runner_options);
  }
  if (!dim_flags.empty()) throw UserError("--dim sizes a model's dynamic dimensions; give a .onnx model");

  ops::Workload workload = ops::Workload::parse(workload_text);
  check_targets_runnable(targets);
  if (targets.size() > 1) {
    return tune_targets(workload, targets, db_path, choice, options, builder_options, runner_options);
  }
  const Target& target = targets[0];
  std::unique_ptr<schedule_space::Task> task = schedule_space::Task::create(workload, target);
  JobTuner job = prepare_tuner(*task, choice);
  tuning_db::SQLiteDatabase db(db_path);
  finish_tuner(job, *task, choice, db);
  std::unique_ptr<search::Tuner>& tuner = job.tuner;
  measure::Builder builder(builder_options);
  measure::Runner runner(runner_options);

  std::printf("workload   %s\n", workload.to_string().c_str());
  std::printf("target     %s\n", target.to_string().c_str());
  std::printf("template   %s, %lld configs\n", task->tmpl().name.c_str(), static_cast<long long>(task->space().size()));
  std::printf("tuner      %s, seed %llu, %d trials\n", tuner_name.c_str(), static_cast<unsigned long long>(seed),
              options.trials);
  if (tuner_name == "xgb") std::printf("model      %s\n", job.model_line.c_str());
  warn_if_busy();
  std::fflush(stdout);

  g_stop = false;
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  ProgressLine line;
  search::TuneResult result = search::tune(
      *task, *tuner, builder, runner, db, options, [&](const search::TuneProgress& p) { line.update(p); }, &g_stop);
  line.finish();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);

  print_job_result("", *task, result);
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
