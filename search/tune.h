// The tune loop: one place that owns a tuning job's policy -- the trial and time budgets,
// best-so-far, early stopping, the error threshold, resume, and stopping on request --
// around an Explorer (what to try: a template's tuner or the auto-scheduler, explorer.h),
// the measurer (builder + runner) and the log.
//
// Resume: the explorer's records of this workload and target already in the log count
// towards the trial budget, are never measured again, and their best is the starting
// best-so-far. So `temper tune ... --trials 200` killed after 120 trials and started
// again measures the 80 left. The explorer learns from those records too: a resumed xgb
// job starts with a trained model. A schedule's later records (confirmation's
// re-measurements, below) are neither trials nor offered to the explorer.
//
// The explorer's default (the template's default config, or the op's default schedule)
// is measured first unless the log has it: the tuned result is then never worse than
// what a build uses without a log.
//
// Targets: LLVM (candidates are shared libraries) and the GPU targets cuda and opencl
// (candidates run on the target's device); not C, whose code is for reading. Records of
// a GPU target carry the device's fingerprint (tuning_db::TargetInfo::device). Jobs for
// several targets may run at once on their own threads, each with its own tuner,
// builder, runner and log connection, sharing one measure::MachineShare.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "measure/builder.h"
#include "measure/machine_share.h"
#include "measure/runner.h"
#include "schedule_space/template.h"
#include "search/explorer.h"
#include "search/tuner.h"
#include "tuning_db/database.h"

namespace temper::search {

struct TuneOptions {
  int trials = 200;          // measured configs in all, earlier runs' included
  int batch_size = 8;        // configs built together and then timed one by one
  double time_budget_s = 0;  // stop starting batches after this long, the first one excepted (0: none)
  int early_stopping = 0;    // stop after this many trials without a better time (0: never)
  // Stop when this many trials in a row failed (0: never): a broken template or
  // environment, not a search worth continuing.
  int error_threshold = 64;
  // Jobs measuring at once in this process share the machine through this (null: the
  // job is alone). A CPU target's timings take it exclusively; builds and GPU timings share it.
  measure::MachineShare* machine_share = nullptr;
  // Confirmation: at the end of a job (not one stopped on request), its confirm_top best
  // schedules are measured again until each has confirm_measurements valid times, so
  // that they rank by their median (tuning_db/schedule_ranking.h) and a build applies a
  // schedule that is fast, not one timed at a lucky moment among many near-equal
  // candidates. 0 for either: no confirmation.
  int confirm_top = 3;
  int confirm_measurements = 3;
};

// UserError for a target whose candidates the measurer cannot run (the C target) or
// none of whose candidates would compile (an unknown -mcpu or -mattr; check_target in
// compiler/codegen/build.h); tune() checks it, and a job of several targets checks each before starting any.
void check_tunable_target(const Target& target);

struct TuneProgress {
  int trials_done = 0;   // in the log for this job: resumed ones included
  int trials_total = 0;  // the budget
  int errors = 0;        // failed trials in this run
  double best_gflops = 0;
  double elapsed_s = 0;
  double eta_s = -1;  // -1: unknown yet
};

struct TuneResult {
  int trials_resumed = 0;                       // found in the log at the start
  int trials_measured = 0;                      // in this run
  int errors = 0;                               // in this run
  // Over the log and this run: after confirmation, the schedule with the best median
  // (its median record); before it, and while the job runs, the fastest record.
  std::optional<tuning_db::TuningRecord> best;
  std::string stop_reason;                      // "trial budget reached", "time budget reached", ...
  double wall_s = 0;
  double compile_s = 0;  // time in the builder (wall)
  double run_s = 0;      // time in the runner (wall)
  // The best GFLOP/s after each measured trial of this run, in order.
  std::vector<double> best_curve;
  int confirmations = 0;  // re-measurements of the best schedules at the end
  // The job's records: those of the log it resumed and those of this run, re-measurements included.
  std::vector<tuning_db::TuningRecord> records;
};

// Runs the job until a budget is spent, early stopping or the error threshold triggers,
// the tuner runs out of configs, or *stop becomes true (checked between batches: the
// batch under way is finished and logged). Every measured config is committed to db as
// one transaction per batch.
TuneResult tune(Explorer& explorer, measure::Builder& builder, measure::Runner& runner, tuning_db::Database& db,
                const TuneOptions& options, const std::function<void(const TuneProgress&)>& on_progress = {},
                const std::atomic<bool>* stop = nullptr);
// tune()'s confirmation, for a job whose trials ran in several tune() calls with
// confirm_top 0 (the model tuner's turns): re-measures the best schedules among
// job.records as options ask, commits and appends the new records, adds their count to
// job.confirmations, and sets job.best to the best by median.
void confirm_best(const Explorer& explorer, measure::Builder& builder, measure::Runner& runner,
                  tuning_db::Database& db, const TuneOptions& options, TuneResult& job);
// tune with a TemplateExplorer of task and tuner.
TuneResult tune(const schedule_space::Task& task, Tuner& tuner, measure::Builder& builder, measure::Runner& runner,
                tuning_db::Database& db, const TuneOptions& options,
                const std::function<void(const TuneProgress&)>& on_progress = {},
                const std::atomic<bool>* stop = nullptr);

}  // namespace temper::search
