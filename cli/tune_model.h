// temper tune MODEL.onnx: the model's tasks (graph/task_extraction.h), each tuned in the
// spaces --space gives it, share one trial budget and one time budget; the task
// scheduler (search/task_scheduler.h) gives the tasks turns, by expected gain or
// round-robin, and a task tuned in two spaces passes its turns to its two explorers in
// alternation, its best being the better of theirs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/tune_job.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/task_extraction.h"
#include "measure/builder.h"
#include "measure/runner.h"
#include "search/task_scheduler.h"

namespace temper::cli {

class TuneReport;

struct ModelTuneFlags {
  std::string space;             // --space ("" : a template where one serves the task, else auto)
  std::string scheduler;         // --task-scheduler: "gradient" or "round-robin"
  std::string layout = "nchwc";  // --layout: the layout the model's builds will use (its tasks follow it;
                                 // with the block open, the tasks of each candidate block)
  int in_model = 5;              // --in-model: each task's best schedules timed in the model at the end (0: off)
};

// --task-scheduler's value as a strategy; UserError naming the two there are.
search::TaskSchedulerStrategy parse_strategy(const std::string& name);

// Tunes the model's tasks (workloads, each with how often each way of building the model
// runs it) in the spaces flags.space gives each, sharing options.trials and
// options.time_budget_s, the turns following the way estimated fastest; per-task
// early stopping is options.early_stopping. Returns the exit status: 0 when every job that
// had trials has a best, 1 when some job's trials all failed, 128 + the signal after a
// stop request. `temper tune WORKLOAD --space both` is this with one task of count 1.
int tune_tasks(const graph::LayoutTasks& model, const Target& target, const std::string& db_path,
               const TunerChoice& choice, const ModelTuneFlags& flags, const search::TuneOptions& options,
               const measure::BuilderOptions& builder_options, const measure::RunnerOptions& runner_options,
               TuneReport& report);

// Imports the model, extracts its tasks, and tune_tasks them; then, with flags.in_model,
// times each task's flags.in_model best schedules and its default in builds of the model
// and keeps in the log the one that ran fastest there (search/confirm_in_model.h).
int tune_model(const std::string& model_path, const graph::ImportOptions& import_options, const Target& target,
               const std::string& db_path, const TunerChoice& choice, const ModelTuneFlags& flags,
               const search::TuneOptions& options, const measure::BuilderOptions& builder_options,
               const measure::RunnerOptions& runner_options, TuneReport& report);

}  // namespace temper::cli
