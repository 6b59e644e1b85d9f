#include "cli/tune_model.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>

#include "cli/tune_report.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/task_extraction.h"
#include "compiler/ir/duration.h"
#include "schedule_space/template.h"
#include "search/confirm_in_model.h"
#include "search/task_scheduler.h"
#include "tuning_db/sqlite_database.h"

namespace temper::cli {
namespace {

// One explorer of one task, and what it has had so far.
struct ModelJob {
  size_t task = 0;  // index into the tasks
  TuneJob job;
  int trials = 0;  // in the log for this job: resumed ones included
  int errors = 0;
  std::optional<tuning_db::TuningRecord> best;
  std::vector<tuning_db::TuningRecord> records;  // of every turn, for the confirmation at the end
  std::string finished;  // why the job takes no more turns (its space is exhausted); empty while it does
};

// A task's best time over its explorers; +infinity while it has none.
double task_best(const std::vector<ModelJob>& jobs, size_t task) {
  double best = std::numeric_limits<double>::infinity();
  for (const ModelJob& j : jobs) {
    if (j.task == task && j.best) best = std::min(best, j.best->mean);
  }
  return best;
}

// The model's estimated latency built the way-th way: each task's best times how often
// that build runs it; nullopt while one of its tasks has no best.
std::optional<double> estimated_latency(const graph::LayoutTasks& model, size_t way,
                                        const std::vector<ModelJob>& jobs) {
  double total = 0;
  for (size_t t = 0; t < model.tasks.size(); ++t) {
    if (model.counts[way][t] == 0) continue;
    double best = task_best(jobs, t);
    if (!std::isfinite(best)) return std::nullopt;
    total += model.counts[way][t] * best;
  }
  return total;
}

// The least over the ways, and which way it is (nullopt while no way has every best).
std::optional<std::pair<double, size_t>> fastest_way(const graph::LayoutTasks& model,
                                                     const std::vector<ModelJob>& jobs) {
  std::optional<std::pair<double, size_t>> fastest;
  for (size_t w = 0; w < model.layouts.size(); ++w) {
    std::optional<double> latency = estimated_latency(model, w, jobs);
    if (latency && (!fastest || *latency < fastest->first)) fastest = std::make_pair(*latency, w);
  }
  return fastest;
}

// The ways a task is in, for the task table: "NCHW16c", "NCHW16c NCHW8c".
std::string ways_of(const graph::LayoutTasks& model, size_t task) {
  std::string ways;
  for (size_t w = 0; w < model.layouts.size(); ++w) {
    if (model.counts[w][task] > 0) ways += (ways.empty() ? "" : " ") + model.layouts[w].activations();
  }
  return ways;
}

std::string latency_text(const std::optional<double>& seconds) {
  return seconds ? format_ms(*seconds) : "?";
}

// The estimated latency of the one way, or of each: "NCHW16c 3.812 ms, NCHW8c ?".
std::string latency_text(const graph::LayoutTasks& model, const std::vector<ModelJob>& jobs) {
  if (model.layouts.size() == 1) return latency_text(estimated_latency(model, 0, jobs));
  std::string each;
  for (size_t w = 0; w < model.layouts.size(); ++w) {
    each +=
        str(w == 0 ? "" : ", ", model.layouts[w].activations(), " ", latency_text(estimated_latency(model, w, jobs)));
  }
  return each;
}

// The last step of tune MODEL: each task's best schedules and its default timed in builds
// of the model; the log keeps, per task, the one that ran fastest there.
void choose_in_model(const graph::Graph& g, const Target& target, const std::string& db_path,
                     const ModelTuneFlags& flags, const std::string& model_name) {
  tuning_db::SQLiteDatabase db(db_path);
  search::InModelOptions options;
  options.candidates = flags.in_model;
  options.model_name = model_name;
  std::fflush(stdout);
  search::InModelResult r =
      search::confirm_in_model(g, target, graph::parse_layout_choice(flags.layout), db, options, &std::cout);
  if (r.tasks.empty()) {
    std::printf("in model   not timed: the log has no record for the model's tasks\n");
    return;
  }
  int other = 0;
  for (const search::InModelTask& task : r.tasks) other += task.picked != "log rank 1";
  db.commit_model_choices(r.choices);
  std::printf(
      "in model   %s kept (%d of %zu tasks take another schedule than the log's best): the model ran %s "
      "with them, %s with the log's best, %s with the defaults (medians of interleaved rounds); builds "
      "with this log apply them\n",
      r.kept.c_str(), other, r.tasks.size(), format_ms(r.chosen_latency_s).c_str(),
      format_ms(r.log_best_latency_s).c_str(), format_ms(r.default_latency_s).c_str());
}

}  // namespace

search::TaskSchedulerStrategy parse_strategy(const std::string& name) {
  if (name == "gradient") return search::TaskSchedulerStrategy::Gradient;
  if (name == "round-robin") return search::TaskSchedulerStrategy::RoundRobin;
  throw UserError(str("unknown --task-scheduler '", name,
                      "': gradient (turns by expected gain in end-to-end latency) or round-robin"));
}

int tune_tasks(const graph::LayoutTasks& model, const Target& target, const std::string& db_path,
               const TunerChoice& choice, const ModelTuneFlags& flags, const search::TuneOptions& options,
               const measure::BuilderOptions& builder_options, const measure::RunnerOptions& runner_options,
               TuneReport& report) {
  search::TaskSchedulerOptions scheduler_options;
  scheduler_options.strategy = parse_strategy(flags.scheduler);
  scheduler_options.early_stopping = options.early_stopping;
  scheduler_options.seed = choice.seed;
  const std::vector<graph::ExtractedTask>& tasks = model.tasks;
  std::vector<ModelJob> jobs;
  for (size_t t = 0; t < tasks.size(); ++t) {
    // A task no template serves (a row reduction, a transpose) is the auto-scheduler's,
    // whatever --space asks of the others.
    bool templated = schedule_space::find_template(tasks[t].workload.op, target) != nullptr;
    for (const std::string& space : spaces_for(tasks[t].workload, target, templated ? flags.space : "auto")) {
      jobs.push_back({t, prepare_job(tasks[t].workload, target, space, choice), 0, 0, std::nullopt, {}, ""});
    }
  }
  std::printf("target     %s\n", target.to_string().c_str());
  std::printf("tuner      %s, seed %llu, %d trials shared %s, %d per turn\n", choice.name.c_str(),
              static_cast<unsigned long long>(choice.seed), options.trials,
              flags.scheduler == "gradient" ? "by expected gain (gradient task scheduler)" : "round-robin",
              options.batch_size);

  tuning_db::SQLiteDatabase db(db_path);
  for (ModelJob& j : jobs) finish_job(j.job, choice, db);
  bool several_ways = model.layouts.size() > 1;
  if (several_ways) {
    std::string names;
    for (const graph::LayoutChoice& layout : model.layouts) names += (names.empty() ? "" : ", ") + layout.activations();
    std::printf(
        "layouts    %s: each way's tasks tuned, turns following the way estimated fastest; a build with "
        "this log takes the fastest\n",
        names.c_str());
  }
  std::printf("task  count  space     size           %sworkload\n", several_ways ? "layouts          " : "");
  for (const ModelJob& j : jobs) {
    std::string size = j.job.space == "auto" ? str(j.job.auto_space->sketches().size(), " sketches")
                                             : str(j.job.task->space().size(), " configs");
    std::string ways = several_ways ? str(ways_of(model, j.task), std::string(17, ' ')).substr(0, 17) : "";
    std::printf("%4zu  %5d  %-8s  %-13s  %s%s\n", j.task, tasks[j.task].count, j.job.space.c_str(), size.c_str(),
                ways.c_str(), tasks[j.task].workload.to_string().c_str());
  }
  if (choice.name == "xgb") {
    for (const ModelJob& j : jobs)
      std::printf("model      task %zu %s: %s\n", j.task, j.job.space.c_str(), j.job.model_line.c_str());
  }
  measure::Builder builder(builder_options);
  measure::Runner runner(runner_options);
  std::fflush(stdout);

  // The scheduler shares the budget among the tasks, by their weight in the model's
  // latency (the latency of its fastest way); a task tuned in both spaces gives its turns
  // to its explorers in turn, and its best is the better of theirs.
  search::WeightsByWay weights;
  for (const std::vector<int>& counts : model.counts) weights.weights.emplace_back(counts.begin(), counts.end());
  search::TaskScheduler scheduler(weights, scheduler_options);
  std::vector<int> turns_of(tasks.size(), 0);
  auto next_job = [&](size_t task) -> ModelJob* {
    std::vector<ModelJob*> open;
    for (ModelJob& j : jobs) {
      if (j.task == task && j.finished.empty()) open.push_back(&j);
    }
    return open.empty() ? nullptr : open[turns_of[task]++ % open.size()];
  };
  watch_stop_signals();
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  auto out_of_time = [&] { return options.time_budget_s > 0 && elapsed() >= options.time_budget_s; };
  int spent = 0;
  std::string stop_reason = "trial budget reached";
  while (true) {
    if (spent >= options.trials) break;
    if (g_stop) {
      stop_reason = "stopped on request";
      break;
    }
    if (out_of_time()) {
      stop_reason = "time budget reached";
      break;
    }
    int k = scheduler.next_task();
    if (k < 0) {
      stop_reason = "every task is done";
      break;
    }
    ModelJob& j = *next_job(static_cast<size_t>(k));
    // The first turn of a job counts the log's records towards its trials; later turns
    // ask for new trials only (the explorer has taken the log's records since the first).
    search::TuneOptions turn = options;
    turn.trials = std::min(options.batch_size, options.trials - spent);
    turn.early_stopping = 0;  // per task, by the scheduler
    turn.confirm_top = 0;     // once per job, at the end
    if (options.time_budget_s > 0) turn.time_budget_s = options.time_budget_s - elapsed();
    search::TuneResult r = search::tune(*j.job.explorer, builder, runner, db, turn, {}, &g_stop);
    int got = r.trials_resumed + r.trials_measured;
    j.trials += got;
    j.errors += r.errors;
    j.records.insert(j.records.end(), r.records.begin(), r.records.end());
    spent += got;
    if (r.best && (!j.best || r.best->mean < j.best->mean)) j.best = r.best;
    if (got < turn.trials && !g_stop && !out_of_time()) j.finished = r.stop_reason;
    bool task_done = true;
    for (const ModelJob& other : jobs) task_done = task_done && (other.task != j.task || !other.finished.empty());
    scheduler.report(k, got, task_best(jobs, j.task), task_done ? j.finished : "");
    char best[48] = "-";
    if (j.best) std::snprintf(best, sizeof best, "%.2f GFLOP/s", gflops_of(j.job.explorer->op(), j.best->mean));
    std::fprintf(stderr, "task %zu %-10s trials %d (+%d)  best %s  total %d/%d  latency %s  elapsed %s%s%s\n", j.task,
                 str("[", j.job.space, "]").c_str(), j.trials, got, best, spent, options.trials,
                 latency_text(model, jobs).c_str(), format_duration(elapsed()).c_str(),
                 scheduler.finished(k) ? "  done: " : "", scheduler.why_finished(k).c_str());
    report.after_batch();
  }
  // Each job's best few schedules measured again, so that their medians decide (tune.h).
  int confirmations = 0;
  for (ModelJob& j : jobs) {
    if (g_stop || j.records.empty()) continue;
    search::TuneResult confirmed;
    confirmed.records = std::move(j.records);
    search::confirm_best(*j.job.explorer, builder, runner, db, options, confirmed);
    confirmations += confirmed.confirmations;
    j.best = confirmed.best;
  }
  restore_stop_signals();

  std::printf("stopped    %s after %d trials in %s\n", stop_reason.c_str(), spent, format_duration(elapsed()).c_str());
  if (confirmations > 0) {
    std::printf("confirmed  each job's %d best schedules: %d more measurements; a schedule's time is its median\n",
                options.confirm_top, confirmations);
  }
  std::printf("task  space     trials  errors  best\n");
  // A job whose every trial failed is a failed job; one the budget never reached is not.
  bool all_failed_somewhere = false;
  int untried = 0;
  for (const ModelJob& j : jobs) {
    std::printf("%4zu  %-8s  %6d  %6d  ", j.task, j.job.space.c_str(), j.trials, j.errors);
    if (j.best) {
      std::printf("%.3f ms, %.2f GFLOP/s\n", j.best->mean * 1e3, gflops_of(j.job.explorer->op(), j.best->mean));
    } else if (j.trials == 0) {
      std::printf("none (no trials)\n");
      ++untried;
    } else {
      std::printf("none (every trial failed)\n");
      all_failed_somewhere = true;
    }
  }
  std::optional<std::pair<double, size_t>> fastest = fastest_way(model, jobs);
  if (fastest) {
    std::printf("latency    %s estimated: the tasks' best times weighted by how often the model runs them\n",
                latency_text(fastest->first).c_str());
  }
  if (several_ways) {
    std::printf(
        "layout     %s: builds with this log take %s\n", latency_text(model, jobs).c_str(),
        fastest ? model.layouts[fastest->second].activations().c_str() : "the target's block (no way has every best)");
  }
  std::printf("log        %s\n", db_path.c_str());
  report.finish();
  if (untried > 0 && g_signal == 0) {
    std::fprintf(stderr,
                 "warning: %d of %zu tuning jobs got no trials; builds use their defaults (give --trials %d or more "
                 "for %d per job)\n",
                 untried, jobs.size(), static_cast<int>(jobs.size()) * options.batch_size, options.batch_size);
  }
  if (g_signal != 0) return 128 + g_signal;
  return all_failed_somewhere ? 1 : 0;
}

int tune_model(const std::string& model_path, const graph::ImportOptions& import_options, const Target& target,
               const std::string& db_path, const TunerChoice& choice, const ModelTuneFlags& flags,
               const search::TuneOptions& options, const measure::BuilderOptions& builder_options,
               const measure::RunnerOptions& runner_options, TuneReport& report) {
  graph::Graph g = graph::import_onnx(model_path, import_options);
  std::vector<std::string> skipped;
  graph::LayoutTasks model =
      graph::extract_tasks_by_layout(g, target, &skipped, graph::parse_layout_choice(flags.layout));
  std::printf("model      %s: %zu nodes, %zu tasks\n", model_path.c_str(), g.nodes().size(), model.tasks.size());
  for (const std::string& why : skipped) std::printf("skipped    %s\n", why.c_str());
  if (model.tasks.empty()) {
    throw UserError(str(model_path,
                        " has no node that a tuning task serves (Conv, Gemm, MatMul, attention, Softmax, "
                        "LayerNormalization, Transpose); nothing to tune"));
  }
  int status = tune_tasks(model, target, db_path, choice, flags, options, builder_options, runner_options, report);
  if (flags.in_model > 0 && g_signal == 0) {
    if (target.is_gpu()) {
      std::printf("in model   not timed: models run on the host only (%s is a GPU target)\n",
                  target.to_string().c_str());
    } else {
      choose_in_model(g, target, db_path, flags, std::filesystem::path(model_path).filename().string());
    }
  }
  return status;
}

}  // namespace temper::cli
