// temper sweep SUITE --db LOG: a suite of workloads and ONNX models (sweep/suite.h) tuned
// where the log lacks trials, then timed side by side -- Temper with the log's best,
// Temper's defaults, and the baselines the suite names (oneDNN, OpenBLAS, Eigen in
// processes of their own, onnxruntime for models) -- in interleaved rounds, every result
// kept in the log (sweep_results, with this machine's fingerprint) for `temper report`.
// A baseline that cannot run here is recorded with why, and the sweep goes on.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <thread>
#include <unistd.h>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/model_executor.h"
#include "cli/probe_machine.h"
#include "cli/tune_job.h"
#include "cli/tune_model.h"
#include "cli/tune_report.h"
#include "cli/workload_kernel.h"
#include "cli/workload_schedule.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/task_extraction.h"
#include "compiler/ir/duration.h"
#include "compiler/runtime/c_runtime_api.h"
#include "report/html_report.h"
#include "search/apply_history_best.h"
#include "search/layout_from_log.h"
#include "sweep/baseline_process.h"
#include "sweep/interleaved_rounds.h"
#include "sweep/suite.h"
#include "tuning_db/sqlite_database.h"

namespace po = boost::program_options;

namespace temper::cli {
namespace {

struct SweepFlags {
  std::string db_path;
  std::vector<std::string> targets;
  int trials = -1;  // -1: the suite's
  std::string time_budget;
  int rounds = 0;   // 0: the suite's
  double min_round_ms = 100;
  int threads = -1;  // -1: the suite's
  std::string onnxruntime_python;
  std::string report_path;
};

// One contender of an entry: how to time a round, or why it cannot run.
struct EntryContender {
  std::string name;
  std::string description;
  std::string details;      // SweepResult::details
  std::string unavailable;  // set: not timed, recorded as "unavailable"
  std::string failed;       // set: it ran and failed (a wrong result, a crash)
  std::function<double(double)> time_round;
  int pid = 0;  // its own process's, for a baseline
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t mid = v.size() / 2;
  return v.empty() ? 0 : v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// ---- tuning what the log lacks ----

int records_of_this_machine(const tuning_db::Database& log, const std::string& workload, const Target& target) {
  tuning_db::TargetInfo here = tuning_db::host_target_info(target);
  int count = 0;
  for (const tuning_db::TuningRecord& r : log.records_for({"", workload}, target.to_string())) {
    if (tuning_db::same_machine(r.target, here)) ++count;
  }
  return count;
}

graph::ImportOptions import_options_of(const sweep::SuiteEntry& entry) {
  graph::ImportOptions options;
  for (const std::string& dim : entry.dims) {
    auto [name, size] = split_binding(dim, "dims", "NAME=N");
    options.dims[name] = std::stoll(size);
  }
  return options;
}

// The workloads an entry tunes: its own, or a model's tasks in every block a build may take.
std::vector<std::string> entry_workloads(const sweep::SuiteEntry& entry, const Target& target) {
  if (entry.kind == sweep::SuiteEntry::Kind::Workload) return {entry.workload};
  graph::Graph g = graph::import_onnx(entry.model_path, import_options_of(entry));
  std::vector<std::string> workloads;
  for (const graph::ExtractedTask& task : graph::extract_tasks_by_layout(g, target).tasks) {
    workloads.push_back(task.workload.to_string());
  }
  return workloads;
}

search::TuneOptions tune_options(const sweep::SuiteEntry& entry, double time_budget_s) {
  search::TuneOptions options;
  options.trials = entry.trials;
  options.time_budget_s = time_budget_s;
  return options;
}

// As `temper tune` measures, but in the caches the sweep will time it in: a model's tasks
// with their weights evicted before each call, as a model's run finds them; a lone
// workload warm, as the sweep times it beside the baselines.
measure::RunnerOptions runner_options(const sweep::SuiteEntry& entry, int threads) {
  measure::RunnerOptions options;
  options.min_repeat_ms = 50;
  options.cold_caches = entry.kind == sweep::SuiteEntry::Kind::Model;
  options.threads = threads;
  return options;
}

void tune_entry(const sweep::SuiteEntry& entry, const Target& target, const SweepFlags& flags, double time_budget_s,
                int threads) {
  TunerChoice choice{"xgb", 0, false, ""};
  ModelTuneFlags model_flags;
  model_flags.space = entry.space;
  model_flags.scheduler = "gradient";
  model_flags.in_model = entry.in_model;
  TuneReport no_report("", flags.db_path, target);
  measure::BuilderOptions builder_options;
  if (entry.kind == sweep::SuiteEntry::Kind::Model) {
    tune_model(entry.model_path, import_options_of(entry), target, flags.db_path, choice, model_flags,
               tune_options(entry, time_budget_s), builder_options, runner_options(entry, threads), no_report);
    return;
  }
  ops::Workload workload = ops::Workload::parse(entry.workload);
  graph::LayoutTasks one_task{{{workload, 1, {}}}, {graph::LayoutChoice::Nchw}, {{1}}};
  tune_tasks(one_task, target, flags.db_path, choice, model_flags, tune_options(entry, time_budget_s),
             builder_options, runner_options(entry, threads), no_report);
}

// A baseline as a contender: its process timed round by round (kept in processes until the
// entry is timed), or why it cannot run here.
EntryContender baseline_contender(const std::string& name, sweep::BaselineStart start,
                                  std::vector<std::unique_ptr<sweep::BaselineProcess>>& processes) {
  EntryContender c{name, "", "", "", "", {}};
  if (!start.process) {
    c.unavailable = start.why;
    return c;
  }
  sweep::BaselineProcess* process = start.process.get();
  c.description = process->description();
  c.time_round = [process](double ms) { return process->time_round(ms); };
  c.pid = static_cast<int>(process->pid());
  processes.push_back(std::move(start.process));
  return c;
}

// ---- the contenders of a workload ----

std::vector<EntryContender> workload_contenders(const sweep::SuiteEntry& entry, const Target& target,
                                                const std::string& db_path, int threads,
                                                std::vector<std::unique_ptr<CheckedKernel>>& kernels,
                                                std::vector<std::unique_ptr<sweep::BaselineProcess>>& processes) {
  ops::Workload workload = ops::Workload::parse(entry.workload);
  ops::OpInstance op = ops::instantiate(workload);
  ops::OpData data = ops::make_op_data(op);
  std::vector<EntryContender> contenders;
  auto temper_contender = [&](const std::string& name, const ops::SourcedSchedule& schedule,
                              const std::string& description) {
    EntryContender c{name, description, "", "", "", {}};
    try {
      kernels.push_back(std::make_unique<CheckedKernel>(workload, op, schedule, target, data));
      CheckedKernel* kernel = kernels.back().get();
      c.time_round = [kernel](double ms) {
        TimingOptions options;
        options.repeat = 1;
        options.min_repeat_ms = ms;
        return kernel->time(options).median_s;
      };
    } catch (const UserError& e) {
      c.failed = e.what();
    }
    contenders.push_back(std::move(c));
  };
  ScheduleChoice from_log;
  from_log.db = db_path;
  ChosenSchedule chosen = make_schedule(workload, op, from_log, target);
  if (chosen.from_log) {
    temper_contender("temper-tuned", chosen.sourced, "the log's best record");
  } else {
    contenders.push_back({"temper-tuned", "", "", "", "", {}});
    contenders.back().unavailable = "the log has no valid record of it on this machine (give the suite trials)";
  }
  temper_contender("temper-default", search::default_sourced_schedule(workload, op, target),
                   op.name + "'s default schedule");
  for (const std::string& baseline : entry.baselines) {
    sweep::BaselineStart start;
    if (baseline == "cublas" && target.kind != Target::Kind::CUDA) {
      start.why = "cuBLAS runs on a cuda target, not " + target.to_string();
    } else if (baseline != "cublas" && target.is_gpu()) {
      start.why = baseline + " runs on the CPU; this sweep's target is " + target.to_string();
    } else {
      start = sweep::start_workload_baseline(baseline, entry.workload, threads);
    }
    contenders.push_back(baseline_contender(baseline, std::move(start), processes));
  }
  return contenders;
}

// ---- the contenders of a model ----

struct ModelRun {
  std::unique_ptr<graph::GraphExecutor> executor;
  std::vector<NDArray> outputs;
};

// The model's tasks as the tuned build runs them (the block the log chooses), each with
// how often the model runs it and its best time in the log on this machine, and the
// log's estimate of the model's latency: what the report sets beside the measured one.
nlohmann::json model_estimate(const graph::Graph& g, const Target& target, const std::string& db_path) {
  tuning_db::SQLiteDatabase log(db_path, tuning_db::OpenMode::ReadOnly);
  graph::LayoutChoice layout = search::layout_from_log(g, target, graph::LayoutChoice::Blocked, log).layout;
  nlohmann::json tasks = nlohmann::json::array();
  double estimate_ms = 0;
  bool complete = true;
  for (const graph::ExtractedTask& task : graph::extract_tasks(g, target, nullptr, layout)) {
    search::MachineRecords best = search::best_records(log, tuning_db::WorkloadKey::from(task.workload), target, 1,
                                                       search::MachineMatch::ThisMachine);
    nlohmann::json t = {{"workload", task.workload.to_string()}, {"count", task.count}, {"best_ms", nullptr}};
    if (!best.best.empty()) {
      t["best_ms"] = best.best[0].mean * 1e3;
      estimate_ms += task.count * best.best[0].mean * 1e3;
    } else {
      complete = false;
    }
    tasks.push_back(std::move(t));
  }
  return {{"estimated_ms", complete ? nlohmann::json(estimate_ms) : nlohmann::json(nullptr)}, {"tasks", tasks}};
}

double largest_difference(const std::vector<NDArray>& a, const std::vector<NDArray>& b) {
  double diff = 0, largest = 0;
  for (size_t o = 0; o < a.size() && o < b.size(); ++o) {
    if (a[o].dtype() != DataType::float32() || a[o].size() != b[o].size()) continue;
    const float* x = static_cast<const float*>(a[o].data());
    const float* y = static_cast<const float*>(b[o].data());
    for (int64_t i = 0; i < a[o].size(); ++i) {
      diff = std::max(diff, std::fabs(static_cast<double>(x[i]) - y[i]));
      largest = std::max(largest, std::fabs(static_cast<double>(y[i])));
    }
  }
  return largest > 0 ? diff / largest : diff;
}

std::vector<EntryContender> model_contenders(const sweep::SuiteEntry& entry, const Target& target,
                                             const SweepFlags& flags, int threads, std::vector<ModelRun>& runs,
                                             std::map<std::string, NDArray>& inputs, const std::string& work_dir,
                                             std::vector<std::unique_ptr<sweep::BaselineProcess>>& processes) {
  graph::Graph g = graph::import_onnx(entry.model_path, import_options_of(entry));
  uint64_t seed = 0;
  for (graph::ValueId v : g.inputs()) inputs[g.value(v).name] = NDArray::random(g.value(v).type.shape, g.value(v).type.dtype, seed++);
  std::vector<EntryContender> contenders;
  runs.resize(2);
  for (int tuned = 1; tuned >= 0; --tuned) {
    ModelRun& run = runs[tuned ? 0 : 1];
    EntryContender c{tuned ? "temper-tuned" : "temper-default", "", "", "", "", {}};
    try {
      int from_log = 0;
      run.executor = compile_model(g, target, tuned ? flags.db_path : "", graph::LayoutChoice::Blocked,
                                   search::MachineMatch::ThisMachine, &from_log);
      if (tuned && from_log == 0) {
        run.executor.reset();
        c.unavailable = "the log has no record of the model's tasks on this machine (give the suite trials)";
        contenders.push_back(std::move(c));
        continue;
      }
      run.outputs = run.executor->run(inputs);
      c.description = tuned ? str(from_log, " of ", run.executor->plan().tasks, " tunable ops from the log")
                            : "template defaults";
      if (tuned) c.details = model_estimate(g, target, flags.db_path).dump();
      graph::GraphExecutor* executor = run.executor.get();
      c.time_round = [executor, &inputs](double ms) {
        TimingOptions options;
        options.repeat = 1;
        options.min_repeat_ms = ms;
        return time_function([&] { executor->run(inputs); }, options).median_s;
      };
    } catch (const UserError& e) {
      c.failed = e.what();
    }
    contenders.push_back(std::move(c));
  }
  // The tuned build must compute what the default one does: a time of a wrong model means nothing.
  if (runs[0].executor && runs[1].executor) {
    double difference = largest_difference(runs[0].outputs, runs[1].outputs);
    if (difference > 1e-3) {
      contenders[0].failed = str("its outputs differ from the default build's by ", difference,
                                 " of the largest output: a wrong result");
      contenders[0].time_round = nullptr;
    }
  }
  for (const std::string& baseline : entry.baselines) {
    contenders.push_back(baseline_contender(
        baseline, sweep::start_onnxruntime(flags.onnxruntime_python, entry.model_path, threads, inputs, work_dir),
        processes));
  }
  return contenders;
}

double entry_flops(const sweep::SuiteEntry& entry) {
  if (entry.kind != sweep::SuiteEntry::Kind::Workload) return 0;
  try {
    return ops::instantiate(ops::Workload::parse(entry.workload)).flops;
  } catch (const UserError&) {
    return 0;
  }
}

// ---- the command ----

int run_sweep(const sweep::Suite& suite, const Target& target, const SweepFlags& flags) {
  int threads = flags.threads >= 0 ? flags.threads : suite.threads;
  if (threads > 0) temper_set_num_threads(threads);
  int resolved_threads = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int rounds = flags.rounds > 0 ? flags.rounds : suite.rounds;
  std::string budget_text = !flags.time_budget.empty() ? flags.time_budget : suite.time_budget;
  double time_budget_s = budget_text.empty() ? 0 : parse_duration(budget_text, "--time-budget");
  int64_t stamp = tuning_db::now_timestamp();
  tuning_db::TargetInfo machine = tuning_db::host_target_info(target);

  {
    tuning_db::SQLiteDatabase log(flags.db_path);
    if (!target.is_gpu() && !log_has_probe_of_this_machine(log, target)) {
      std::printf("probe      ");
      std::fflush(stdout);
      probe_into_log(log, target, 0, std::cout);
    }
  }
  std::printf("sweep      %s: %zu entries on %s, %d threads, %d interleaved rounds of at least %.0f ms\n",
              suite.name.c_str(), suite.entries.size(), target.to_string().c_str(), resolved_threads, rounds,
              flags.min_round_ms);
  std::fflush(stdout);
  std::string work_dir = (std::filesystem::temp_directory_path() / str("temper-sweep-", getpid())).string();
  std::filesystem::create_directories(work_dir);
  int failures = 0;
  for (const sweep::SuiteEntry& original : suite.entries) {
    sweep::SuiteEntry entry = original;
    if (flags.trials >= 0) entry.trials = flags.trials;
    std::printf("\n== %s\n", entry.name().c_str());
    std::fflush(stdout);
    // Tuning what the log lacks.
    if (entry.trials > 0) {
      int have = 0;
      {
        tuning_db::SQLiteDatabase log(flags.db_path, tuning_db::OpenMode::ReadOnly);
        for (const std::string& workload : entry_workloads(entry, target)) {
          have += records_of_this_machine(log, workload, target);
        }
      }
      bool enough = have >= entry.trials;
      if (enough) std::printf("tuned      the log has %d trials of it on this machine: no tuning\n", have);
      if (!enough) {
        try {
          tune_entry(entry, target, flags, time_budget_s, threads);
        } catch (const UserError& e) {
          std::printf("tuning     failed: %s\n", e.what());
        }
      }
      if (g_signal != 0) break;
    }
    // Timing, side by side.
    std::vector<std::unique_ptr<CheckedKernel>> kernels;
    std::vector<ModelRun> runs;
    std::map<std::string, NDArray> inputs;
    std::vector<std::unique_ptr<sweep::BaselineProcess>> processes;
    std::vector<EntryContender> contenders;
    try {
      contenders = entry.kind == sweep::SuiteEntry::Kind::Workload
                       ? workload_contenders(entry, target, flags.db_path, resolved_threads, kernels, processes)
                       : model_contenders(entry, target, flags, resolved_threads, runs, inputs, work_dir, processes);
    } catch (const UserError& e) {
      std::printf("failed     %s\n", e.what());
      ++failures;
      continue;
    }
    std::vector<sweep::Contender> timed;
    std::vector<size_t> timed_index;
    for (size_t i = 0; i < contenders.size(); ++i) {
      if (!contenders[i].time_round) continue;
      timed.push_back({contenders[i].name, contenders[i].pid, contenders[i].time_round});
      timed_index.push_back(i);
    }
    double settled_ms = 0;
    std::vector<sweep::ContenderTimes> times = sweep::time_interleaved(timed, rounds, flags.min_round_ms, &settled_ms);
    processes.clear();  // the baselines' processes end before the next entry's timing

    double flops = entry_flops(entry);
    std::vector<tuning_db::SweepResult> results;
    for (size_t i = 0; i < contenders.size(); ++i) {
      const EntryContender& c = contenders[i];
      tuning_db::SweepResult r;
      r.sweep = suite.name;
      r.entry = entry.name();
      r.entry_kind = entry.kind == sweep::SuiteEntry::Kind::Workload ? "workload" : "model";
      r.contender = c.name;
      r.machine = machine;
      r.description = c.description;
      r.details = c.details;
      r.flops = flops;
      r.threads = resolved_threads;
      r.timestamp = stamp;
      r.temper_version = tuning_db::temper_version();
      auto t = std::find(timed_index.begin(), timed_index.end(), i);
      if (!c.unavailable.empty()) {
        r.status = "unavailable";
        r.why = c.unavailable;
      } else if (!c.failed.empty()) {
        r.status = "failed";
        r.why = c.failed;
      } else if (t != timed_index.end() && times[t - timed_index.begin()].failure.empty()) {
        r.status = "ok";
        r.round_seconds = times[t - timed_index.begin()].rounds;
        r.seconds = median_of(r.round_seconds);
      } else {
        r.status = "failed";
        r.why = t != timed_index.end() ? times[t - timed_index.begin()].failure : "not timed";
      }
      results.push_back(std::move(r));
    }
    // The table: each contender's median and the tuned kernel's time over it.
    double tuned_s = results[0].status == "ok" ? results[0].seconds : 0;
    std::printf("timed      %d rounds; %.0f ms per round waited for the last contender's threads to go quiet\n", rounds,
                settled_ms / std::max<double>(1, static_cast<double>(rounds * timed.size())));
    std::printf("%-16s %12s %10s %10s  %s\n", "contender", "median ms", "tuned/x", "GFLOP/s", "what ran / why not");
    for (const tuning_db::SweepResult& r : results) {
      if (r.status != "ok") {
        std::printf("%-16s %12s %10s %10s  %s: %s\n", r.contender.c_str(), "-", "-", "-", r.status.c_str(),
                    r.why.c_str());
        if (r.status == "failed") ++failures;
        continue;
      }
      std::string ratio = tuned_s > 0 ? str(std::round(tuned_s / r.seconds * 1000) / 1000) : "-";
      std::string gflops = flops > 0 ? str(std::round(flops / r.seconds / 1e8) / 10) : "-";
      std::printf("%-16s %12.4f %10s %10s  %s\n", r.contender.c_str(), r.seconds * 1e3, ratio.c_str(), gflops.c_str(),
                  r.description.c_str());
    }
    std::fflush(stdout);
    tuning_db::SQLiteDatabase log(flags.db_path);
    log.commit_sweep_results(results);
  }
  std::filesystem::remove_all(work_dir);
  std::printf("\nlog        %s: the results are in its sweep_results (temper report --db %s -o PAGE.html)\n",
              flags.db_path.c_str(), flags.db_path.c_str());
  if (!flags.report_path.empty()) {
    tuning_db::SQLiteDatabase log(flags.db_path, tuning_db::OpenMode::ReadOnly);
    report::ReportOptions options;
    options.title = "Temper sweep: " + suite.name;
    options.log_path = flags.db_path;
    report::write_report(log, options, flags.report_path);
    std::printf("report     %s\n", flags.report_path.c_str());
  }
  if (g_signal != 0) return 128 + g_signal;
  return failures > 0 ? 1 : 0;
}

}  // namespace

int cmd_sweep(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: temper sweep SUITE.toml --db FILE [--target T ...] [--trials N] [--time-budget D] [--rounds N] "
      "[--threads N] [--onnxruntime-python PY] [--report PAGE.html]";
  SweepFlags flags;
  po::options_description desc(
      "temper sweep: tune a suite's workloads and models where the log lacks trials, then time Temper tuned, "
      "Temper's defaults and the suite's baselines side by side (interleaved rounds, medians), keeping every result "
      "in the log; the suite format is documented in sweep/suite.h (benchmarks/suites/ has examples)");
  // clang-format off
  desc.add_options()
      ("db", po::value(&flags.db_path), "the tuning log (SQLite); created if missing")
      ("target", po::value(&flags.targets)->composing(), "target string (default llvm -mcpu=native); repeatable")
      ("trials", po::value(&flags.trials), "trials per entry, the log's included (overrides the suite; 0: no tuning)")
      ("time-budget", po::value(&flags.time_budget), "tuning time per entry: 90s, 30m, 1h30m (overrides the suite)")
      ("rounds", po::value(&flags.rounds), "interleaved timing rounds (overrides the suite)")
      ("min-round-ms", po::value(&flags.min_round_ms)->default_value(100), "each contender's round lasts at least this")
      ("threads", po::value(&flags.threads), "threads of every contender (0: one per core; overrides the suite)")
      ("onnxruntime-python", po::value(&flags.onnxruntime_python),
       "a Python with onnxruntime, for the models' onnxruntime baseline (scripts/bench.sh makes bench_logs/venv)")
      ("report", po::value(&flags.report_path), "write the log's report page here at the end");
  // clang-format on
  std::vector<std::string> positionals;
  po::variables_map vm;
  if (!parse_command_line(args, usage, desc, "SUITE", 1, 1, positionals, vm)) return 0;
  if (flags.db_path.empty()) throw UserError(str("missing --db FILE: the tuning log the sweep reads and writes\n", usage));
  if (vm.count("trials") && flags.trials < 0) throw UserError(str("--trials must be 0 or more, got ", flags.trials));
  if (vm.count("rounds") && flags.rounds < 1) throw UserError(str("--rounds must be at least 1, got ", flags.rounds));
  if (vm.count("threads") && flags.threads < 0) throw UserError(str("--threads must be 0 or more, got ", flags.threads));
  if (!(flags.min_round_ms > 0)) throw UserError("--min-round-ms must be positive");
  if (!flags.time_budget.empty()) parse_duration(flags.time_budget, "--time-budget");
  // Everything is checked before any work: the suite, the targets, the page's folder.
  sweep::Suite suite = sweep::parse_suite_file(positionals[0]);
  std::vector<Target> targets;
  for (const std::string& text : flags.targets) targets.push_back(Target::parse(text));
  if (targets.empty()) targets.push_back(Target::parse("llvm -mcpu=native"));
  for (const Target& target : targets) search::check_tunable_target(target);
  if (!flags.report_path.empty()) check_report_path(flags.report_path);
  watch_stop_signals();
  int status = 0;
  for (const Target& target : targets) {
    status = std::max(status, run_sweep(suite, target, flags));
    if (g_signal != 0) break;
  }
  restore_stop_signals();
  return status;
}

}  // namespace temper::cli
