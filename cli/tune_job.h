// What `temper tune` builds for one workload on one target before it measures: an
// explorer -- a template's space walked by the chosen tuner, or the auto-scheduler's
// sketches searched under a cost model -- and what they own. Shared by the workload,
// multi-target and model forms of the command (cmd_tune.cpp, tune_model.cpp), with the
// stop-on-signal flag and the progress text they print.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "cost_model/cost_model.h"
#include "schedule_space/auto_space.h"
#include "schedule_space/template.h"
#include "search/explorer.h"
#include "search/tune.h"
#include "search/tuner.h"
#include "tuning_db/database.h"

namespace temper::cli {

// Set by SIGINT/SIGTERM while a job runs (watch_stop_signals): the job stops after the
// batch under way, which is logged. A second signal ends the process at once.
extern std::atomic<bool> g_stop;
extern std::atomic<int> g_signal;
void watch_stop_signals();
void restore_stop_signals();

// The tuner flags: which tuner, and for xgb where its model starts.
struct TunerChoice {
  std::string name;
  uint64_t seed = 0;
  bool transfer = false;
  std::string model_path;
};

// The --space flag: "template", "auto", "both", or "" (a template where one serves the op
// on the target, the auto-scheduler otherwise). The spaces a workload is tuned in, in
// order; UserError for an unknown value, or "template" where no template serves.
std::vector<std::string> spaces_for(const ops::Workload& workload, const Target& target, const std::string& flag);

// One explorer and what it owns, made in two steps so that bad flags are refused before
// the log is created: prepare_job (no log), then finish_job (pre-training on the log for
// --transfer, and the explorer itself).
struct TuneJob {
  std::string space;                                    // "template" or "auto"
  std::unique_ptr<schedule_space::Task> task;           // template
  std::unique_ptr<schedule_space::AutoSpace> auto_space;  // auto
  std::unique_ptr<cost_model::CostModel> model;         // until finish_job hands it over
  std::unique_ptr<search::Tuner> tuner;                 // template
  std::unique_ptr<search::Explorer> explorer;
  std::string model_line = "untrained";

  // The cost model guiding the search (null for a template tuner without one).
  const cost_model::CostModel* guiding_model() const;
};

// UserError for a tuner the space cannot use (the auto-scheduler takes xgb, or random:
// a model that scores at random), a model file that does not load, --transfer with the
// auto-scheduler, a workload the space cannot serve.
TuneJob prepare_job(const ops::Workload& workload, const Target& target, const std::string& space,
                    const TunerChoice& choice);
void finish_job(TuneJob& job, const TunerChoice& choice, const tuning_db::Database& db);

// "trials 8/200  best 12.34 GFLOP/s  errors 0  elapsed 1m05s  eta 20m"
std::string progress_text(const search::TuneProgress& p);

double gflops_of(const ops::OpInstance& op, double seconds);

}  // namespace temper::cli
