// temper tune: search a workload's schedule space (a template's, or the auto-scheduler's), logging
// every measurement, for one target or for several at once (one job per target on its own
// thread); given a .onnx model, all its tasks (tune_model.h).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <thread>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/tune_job.h"
#include "cli/tune_model.h"
#include "cli/tune_report.h"
#include "compiler/codegen/gpu/nvrtc.h"
#include "compiler/ir/duration.h"
#include "compiler/runtime/gpu/gpu_device.h"
#include "search/tune.h"
#include "tuning_db/sqlite_database.h"

namespace po = boost::program_options;

namespace temper::cli {
namespace {

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

// What the job explores: a template's space or the auto-scheduler's sketches.
void print_space(const std::string& prefix, const TuneJob& job) {
  const char* p = prefix.c_str();
  if (job.auto_space) {
    std::printf("%sspace      auto-scheduler, %zu sketches\n", p, job.auto_space->sketches().size());
    for (const schedule_space::Sketch& s : job.auto_space->sketches()) {
      std::printf("%ssketch     %s\n", p, s.description.c_str());
    }
  } else {
    std::printf("%stemplate   %s, %lld configs\n", p, job.task->tmpl().name.c_str(),
                static_cast<long long>(job.task->space().size()));
  }
}

// What the end of a job prints, each line after prefix ("" for a job of one target).
void print_job_result(const std::string& prefix, const TuneJob& job, const search::TuneResult& result) {
  const char* p = prefix.c_str();
  if (result.trials_resumed > 0) {
    std::printf("%sresumed    %d trials were already in the log\n", p, result.trials_resumed);
  }
  std::printf("%smeasured   %d trials, %d failed, in %s (compiling %s, timing %s)\n", p, result.trials_measured,
              result.errors, format_duration(result.wall_s).c_str(), format_duration(result.compile_s).c_str(),
              format_duration(result.run_s).c_str());
  std::printf("%sstopped    %s\n", p, result.stop_reason.c_str());
  if (result.confirmations > 0) {
    std::printf("%sconfirmed  the best schedules measured %d more times; a schedule's time is its median\n", p,
                result.confirmations);
  }
  if (!result.best) {
    std::printf("%sbest       none: no trial has succeeded yet\n", p);
    return;
  }
  double ms = result.best->mean * 1e3;
  double gf = gflops_of(job.explorer->op(), result.best->mean);
  std::printf("%sbest       %.3f ms", p, ms);
  if (gf > 0) std::printf(", %.2f GFLOP/s", gf);
  std::printf("\n");
  if (!result.best->config.is_null()) {
    std::printf("%sconfig     %s\n", p, result.best->config.dump().c_str());
    return;
  }
  // An auto-scheduled record: its sketch, when it comes from one (else the default schedule).
  std::optional<schedule_space::AutoCandidate> c;
  if (job.auto_space) c = job.auto_space->from_trace(Trace::from_json(result.best->trace));
  std::printf("%ssketch     %s\n", p,
              c ? job.auto_space->sketches()[c->sketch].description.c_str() : "none: the op's default schedule");
}

// ---- temper tune WORKLOAD --target A --target B ... ----

// One target's job: its own task, tuner, log connection, builder and runner, run on its
// own thread.
struct TargetJob {
  Target target;
  std::string prefix;  // "[opencl] ": what its lines start with
  TuneJob job;
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
                 const TunerChoice& choice, const std::string& space_flag, search::TuneOptions options,
                 const measure::BuilderOptions& builder_options, const measure::RunnerOptions& runner_options,
                 TuneReport& report) {
  std::vector<TargetJob> jobs(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    std::vector<std::string> spaces = spaces_for(workload, targets[i], space_flag);
    if (spaces.size() > 1) throw UserError("--space both tunes for one --target; run it once per target");
    jobs[i].target = targets[i];
    jobs[i].prefix = str("[", targets[i].to_string(), "] ");
    jobs[i].job = prepare_job(workload, targets[i], spaces[0], choice);
  }
  for (TargetJob& job : jobs) {
    job.db = std::make_unique<tuning_db::SQLiteDatabase>(db_path);
    finish_job(job.job, choice, *job.db);
    job.builder = std::make_unique<measure::Builder>(builder_options);
    job.runner = std::make_unique<measure::Runner>(runner_options);
  }

  std::printf("workload   %s\n", workload.to_string().c_str());
  std::printf("tuner      %s, seed %llu, %d trials per target, %zu targets at once\n", choice.name.c_str(),
              static_cast<unsigned long long>(choice.seed), options.trials, jobs.size());
  for (const TargetJob& job : jobs) {
    print_space(job.prefix, job.job);
    if (choice.name == "xgb") std::printf("%smodel      %s\n", job.prefix.c_str(), job.job.model_line.c_str());
  }
  warn_if_busy();
  std::fflush(stdout);

  measure::MachineShare share;
  options.machine_share = &share;
  watch_stop_signals();
  std::vector<std::thread> threads;
  for (TargetJob& job : jobs) {
    threads.emplace_back([&job, &options, &report] {
      try {
        job.result = search::tune(
            *job.job.explorer, *job.builder, *job.runner, *job.db, options,
            [&job, &report](const search::TuneProgress& p) {
              // One call per line: stdio locks the stream for it, so the jobs' lines never mix.
              std::fprintf(stderr, "%s%s\n", job.prefix.c_str(), progress_text(p).c_str());
              report.after_batch();
            },
            &g_stop);
      } catch (...) {
        job.failure = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  restore_stop_signals();

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
    print_job_result(job.prefix, job.job, job.result);
    every_target_has_a_best = every_target_has_a_best && job.result.best.has_value();
  }
  std::printf("log        %s (apply it: temper run '%s' --target TARGET --db %s)\n", db_path.c_str(),
              workload.to_string().c_str(), db_path.c_str());
  report.finish();
  std::fflush(stdout);
  if (first_failure) std::rethrow_exception(first_failure);
  if (g_signal != 0) return 128 + g_signal;
  return every_target_has_a_best ? 0 : 1;
}

}  // namespace

int cmd_tune(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: temper tune WORKLOAD --db FILE [--target T ...] [--space template|auto|both] [--trials N] "
      "[--tuner random|grid|ga|xgb] [--time-budget 8h] [--early-stopping N] [--confirm N] [--seed N] [--report PAGE.html]\n"
      "       temper tune MODEL.onnx --db FILE [--dim NAME=N ...] [--shape NAME=D0xD1x... ...] [--layout "
      "nchwc|nchw8c|nchw16c|...-direct|nchw] [--task-scheduler "
      "gradient|round-robin] [--in-model N] [the same "
      "flags]   (all the model's tasks, sharing --trials)\n"
      "                    [--transfer | --model FILE] [--save-model FILE]   (these three with --tuner xgb)";
  std::string db_path, tuner_name, time_budget, model_path, save_model_path, report_path;
  ModelTuneFlags model_flags;
  std::vector<std::string> target_texts;
  ModelShapeFlags shape_flags;
  std::string layout_flag;
  bool transfer = false;
  int64_t seed = 0;
  search::TuneOptions options;
  measure::BuilderOptions builder_options;
  measure::RunnerOptions runner_options;
  bool warm_caches = false;
  po::options_description desc("temper tune: search the workload's schedule space; every measurement goes to the log");
  // clang-format off
  desc.add_options()
      ("db", po::value(&db_path), "the tuning log (SQLite); created if missing, appended to otherwise")
      ("target", po::value(&target_texts)->composing(),
       "target string: llvm [-mcpu=...] (default llvm -mcpu=native), cuda -arch=sm_90 [-device=N], opencl "
       "[-device=N]; give it several times to tune for several targets at once")
      ("trials", po::value(&options.trials)->default_value(200),
       "configs to measure, those already in the log included; for a model, shared by its tasks")
      ("space", po::value(&model_flags.space),
       "template (the op's hand-written template), auto (the auto-scheduler: sketches derived from the compute "
       "definition, evolutionary search under the cost model) or both (the two share --trials); default: template "
       "where the op has one, auto otherwise")
      ("layout", po::value(&layout_flag),
       "model: the layout its builds will use, nchwc (blocked, kept across the graph; Winograd 3x3 convs where they pay; the tasks of each candidate block, 8 and 16 lanes on a CPU of either vector, the build taking the block estimated fastest), nchw8c or nchw16c (a fixed block), nchwc-direct, nchw8c-direct, nchw16c-direct (every conv direct) or nchw; "
       "the tasks are the convs of that layout (default nchwc)")
      ("in-model", po::value(&model_flags.in_model)->default_value(5),
       "model: at the end, time each task's N best schedules and its default inside builds of the model, with their "
       "real neighbours, and keep the one that ran fastest there for the builds (0: off)")
      ("task-scheduler", po::value(&model_flags.scheduler)->default_value("gradient"),
       "model, or --space both: how the jobs share --trials: gradient (turns to the task whose tuning is expected to "
       "cut the end-to-end latency most) or round-robin")
      ("tuner", po::value(&tuner_name)->default_value("xgb"),
       "random, grid, ga (genetic) or xgb (simulated annealing guided by an XGBoost cost model); the auto-scheduler "
       "takes xgb, or random (its search guided by random scores)")
      ("transfer", po::bool_switch(&transfer),
       "xgb: pre-train the model on the log's records of other workloads of the same op and target")
      ("model", po::value(&model_path), "xgb: start from this saved model (temper model train, --save-model)")
      ("save-model", po::value(&save_model_path), "xgb: after tuning, save the model (trained on all it measured) here")
      ("time-budget", po::value(&time_budget), "stop starting new batches after this long: 90s, 30m, 8h, 1h30m")
      ("early-stopping", po::value(&options.early_stopping)->default_value(0),
       "stop after this many trials without a better time (0: never); for a model, per task")
      ("confirm", po::value(&options.confirm_top)->default_value(3),
       "at the end, measure the N best schedules again until each has 3 times; a schedule then ranks by its median, "
       "not by a lucky draw (0: off)")
      ("error-threshold", po::value(&options.error_threshold)->default_value(64),
       "stop after this many failed trials in a row (0: never)")
      ("seed", po::value(&seed)->default_value(0), "the tuner's random seed: same seed, same proposals")
      ("report", po::value(&report_path),
       "write the log's report page (as `temper report` does) here, refreshed after each batch and at the end")
      ("batch-size", po::value(&options.batch_size)->default_value(8), "configs compiled together, then timed")
      ("build-jobs", po::value(&builder_options.n_parallel)->default_value(0), "compile threads (0: one per core)")
      ("build-timeout", po::value(&builder_options.timeout_s)->default_value(30), "seconds per candidate's compile")
      ("number", po::value(&runner_options.number)->default_value(1), "calls per timed group")
      ("repeat", po::value(&runner_options.repeat)->default_value(3), "timed groups per candidate")
      ("min-repeat-ms", po::value(&runner_options.min_repeat_ms)->default_value(50), "minimum length of a group")
      ("cooldown-ms", po::value(&runner_options.cooldown_ms)->default_value(0), "pause between groups")
      ("flush-cache", po::bool_switch(&runner_options.flush_cache), "flush the caches before each group")
      ("warm-caches", po::bool_switch(&warm_caches),
       "leave the op's weights (a conv's filters, a matmul's B) and outputs in the caches between timed calls; by "
       "default they are evicted before each call, as a model's run finds them")
      ("run-timeout", po::value(&runner_options.timeout_s)->default_value(10), "seconds per candidate's check and timing")
      ("threads", po::value(&runner_options.threads)->default_value(0), "threads of parallel loops (0: one per core)")
      ("candidate-memory-mb", po::value(&runner_options.memory_limit_mb)->default_value(0),
       "how much a CPU candidate may grow the measure worker's memory (0: half the machine's)");
  // clang-format on
  shape_flags.add_options(desc);  // the model's inputs
  std::string workload_text;
  if (!parse_command_line(args, usage, desc, workload_text)) return 0;
  runner_options.cold_caches = !warm_caches;
  if (!layout_flag.empty()) model_flags.layout = layout_flag;
  graph::parse_layout_choice(model_flags.layout);  // a bad value fails before any work
  if (db_path.empty()) throw UserError(str("missing --db FILE: the tuning log to write\n", usage));
  auto at_least = [](const char* flag, double value, double low) {
    if (value < low) throw UserError(str(flag, " must be at least ", low, ", got ", value));
  };
  at_least("--trials", options.trials, 1);
  at_least("--batch-size", options.batch_size, 1);
  at_least("--early-stopping", options.early_stopping, 0);
  at_least("--error-threshold", options.error_threshold, 0);
  at_least("--confirm", options.confirm_top, 0);
  at_least("--in-model", model_flags.in_model, 0);
  at_least("--build-jobs", builder_options.n_parallel, 0);
  at_least("--number", runner_options.number, 1);
  at_least("--repeat", runner_options.repeat, 1);
  at_least("--min-repeat-ms", runner_options.min_repeat_ms, 0);
  at_least("--cooldown-ms", runner_options.cooldown_ms, 0);
  at_least("--threads", runner_options.threads, 0);
  at_least("--candidate-memory-mb", static_cast<double>(runner_options.memory_limit_mb), 0);
  if (seed < 0) throw UserError(str("--seed must be 0 or more, got ", seed));
  parse_strategy(model_flags.scheduler);  // a bad value fails before any work, whatever is tuned
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

  TunerChoice choice{tuner_name, static_cast<uint64_t>(seed), transfer, model_path};
  if (workload_text.ends_with(".onnx")) {
    if (!save_model_path.empty()) throw UserError("--save-model saves one task's model; give a workload, not a model");
    if (targets.size() > 1) throw UserError("tune MODEL.onnx tunes for one --target; run it once per target");
    check_targets_runnable(targets);
    graph::ImportOptions import_options;
    import_options.dims = shape_flags.dim_sizes();
    import_options.input_shapes = shape_flags.input_shapes();
    TuneReport report(report_path, db_path, targets[0]);
    return tune_model(workload_text, import_options, targets[0], db_path, choice, model_flags, options, builder_options,
                      runner_options, report);
  }
  if (shape_flags.given()) {
    throw UserError(shape_flags.dims.empty() ? "--shape gives a model's input a shape; give a .onnx model"
                                             : "--dim sizes a model's dynamic dimensions; give a .onnx model");
  }
  if (!layout_flag.empty()) {
    throw UserError(
        "--layout chooses the layout of a model's convs; a workload names its own (conv2d_nchwc:... is "
        "the blocked conv)");
  }

  ops::Workload workload = ops::Workload::parse(workload_text);
  check_targets_runnable(targets);
  TuneReport report(report_path, db_path, targets[0]);
  if (targets.size() > 1) {
    return tune_targets(workload, targets, db_path, choice, model_flags.space, options, builder_options,
                        runner_options, report);
  }
  const Target& target = targets[0];
  std::vector<std::string> spaces = spaces_for(workload, target, model_flags.space);
  if (spaces.size() > 1) {
    if (!save_model_path.empty()) throw UserError("--save-model saves one explorer's model; not with --space both");
    std::printf("workload   %s\n", workload.to_string().c_str());
    graph::LayoutTasks one_task{{{workload, 1, {}}}, {graph::LayoutChoice::Nchw}, {{1}}};
    return tune_tasks(one_task, target, db_path, choice, model_flags, options, builder_options, runner_options, report);
  }
  TuneJob job = prepare_job(workload, target, spaces[0], choice);
  tuning_db::SQLiteDatabase db(db_path);
  finish_job(job, choice, db);
  measure::Builder builder(builder_options);
  measure::Runner runner(runner_options);

  std::printf("workload   %s\n", workload.to_string().c_str());
  std::printf("target     %s\n", target.to_string().c_str());
  print_space("", job);
  std::printf("tuner      %s, seed %llu, %d trials\n", tuner_name.c_str(), static_cast<unsigned long long>(seed),
              options.trials);
  if (tuner_name == "xgb") std::printf("model      %s\n", job.model_line.c_str());
  warn_if_busy();
  std::fflush(stdout);

  watch_stop_signals();
  ProgressLine line;
  search::TuneResult result = search::tune(
      *job.explorer, builder, runner, db, options,
      [&](const search::TuneProgress& p) {
        line.update(p);
        report.after_batch();
      },
      &g_stop);
  line.finish();
  restore_stop_signals();

  print_job_result("", job, result);
  if (!save_model_path.empty()) {
    const cost_model::CostModel* model = job.guiding_model();
    TEMPER_CHECK(model != nullptr, "--save-model with a tuner that has no model");
    model->save(save_model_path);
    std::printf("model      saved to %s (%lld samples); reuse it: --tuner xgb --model %s\n", save_model_path.c_str(),
                static_cast<long long>(model->num_samples()), save_model_path.c_str());
  }
  std::printf("log        %s (apply it: temper run '%s' --db %s)\n", db_path.c_str(), workload.to_string().c_str(),
              db_path.c_str());
  report.finish();
  if (g_signal != 0) return 128 + g_signal;
  return result.best ? 0 : 1;
}

}  // namespace temper::cli
