#include "cli/tune_job.h"

#include <chrono>
#include <csignal>
#include <cstdio>

#include "compiler/ir/duration.h"
#include "search/auto_explorer.h"
#include "search/featurize.h"
#include "search/model_tuner.h"
#include "search/template_explorer.h"
#include "search/transfer.h"

namespace temper::cli {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};

namespace {

void request_stop(int sig) {
  if (g_stop.exchange(true)) {
    // A second signal: the user insists. What was committed stays in the log.
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
  g_signal = sig;
}

}  // namespace

void watch_stop_signals() {
  g_stop = false;
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
}

void restore_stop_signals() {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

std::vector<std::string> spaces_for(const ops::Workload& workload, const Target& target, const std::string& flag) {
  bool templated = schedule_space::find_template(workload.op, target) != nullptr;
  if (flag.empty()) return {templated ? "template" : "auto"};
  if (flag == "auto") return {"auto"};
  if (flag == "template" || flag == "both") {
    if (!templated && flag == "both") return {"auto"};
    if (!templated) {
      std::string ops;
      for (const std::string& op : schedule_space::ops_with_templates(target)) ops += (ops.empty() ? "" : ", ") + op;
      throw UserError(str("no template serves ", workload.op, " on ", target.to_string(), " (templates: ", ops,
                          "); tune it with --space auto"));
    }
    return flag == "both" ? std::vector<std::string>{"template", "auto"} : std::vector<std::string>{"template"};
  }
  throw UserError(str("unknown --space '", flag, "': template (the op's template), auto (the auto-scheduler) or both"));
}

const cost_model::CostModel* TuneJob::guiding_model() const {
  if (auto* a = dynamic_cast<const search::AutoExplorer*>(explorer.get())) return &a->search().model();
  if (auto* m = dynamic_cast<const search::ModelTuner*>(tuner.get())) return &m->model();
  return nullptr;
}

TuneJob prepare_job(const ops::Workload& workload, const Target& target, const std::string& space,
                    const TunerChoice& choice) {
  TuneJob job;
  job.space = space;
  if (!choice.model_path.empty()) {
    job.model = cost_model::load_cost_model(choice.model_path);
    job.model_line = str("loaded from ", choice.model_path, " (trained on ", job.model->num_samples(), " samples)");
  }
  if (space == "auto") {
    if (choice.name != "xgb" && choice.name != "random") {
      throw UserError(str("the auto-scheduler's evolutionary search is guided by a cost model: give --tuner xgb, or "
                          "--tuner random for a model that scores at random (not '", choice.name, "')"));
    }
    if (choice.transfer) {
      throw UserError("--transfer pre-trains on template records; with --space auto, give a saved model: --model FILE");
    }
    job.auto_space = std::make_unique<schedule_space::AutoSpace>(workload, target);
    if (!job.model) {
      cost_model::ModelOptions options;
      options.seed = choice.seed;
      job.model = cost_model::make_cost_model(choice.name, options);
      if (choice.name == "random") job.model_line = "random scores";
    }
    return job;
  }
  job.task = schedule_space::Task::create(workload, target);
  if (!job.model && !choice.transfer) job.tuner = search::make_tuner(choice.name, *job.task, choice.seed);
  return job;
}

void finish_job(TuneJob& job, const TunerChoice& choice, const tuning_db::Database& db) {
  if (job.space == "auto") {
    job.explorer = std::make_unique<search::AutoExplorer>(*job.auto_space, std::move(job.model), choice.seed);
    return;
  }
  const schedule_space::Task& task = *job.task;
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
  if (!job.tuner) {
    if (job.model) {
      job.tuner = std::make_unique<search::ModelTuner>(
          task.space(), [&task](const schedule_space::Config& c) { return search::config_features(task, c); },
          search::sample_group(task), std::move(job.model), choice.seed);
    } else {
      job.tuner = search::make_tuner(choice.name, task, choice.seed);
    }
  }
  job.explorer = std::make_unique<search::TemplateExplorer>(task, *job.tuner);
}

std::string progress_text(const search::TuneProgress& p) {
  char best[48] = "-";
  if (p.best_gflops > 0) std::snprintf(best, sizeof best, "%.2f GFLOP/s", p.best_gflops);
  std::string eta = p.eta_s < 0 ? "?" : format_duration(p.eta_s);
  char line[256];
  std::snprintf(line, sizeof line, "trials %d/%d  best %s  errors %d  elapsed %s  eta %s", p.trials_done,
                p.trials_total, best, p.errors, format_duration(p.elapsed_s).c_str(), eta.c_str());
  return line;
}

double gflops_of(const ops::OpInstance& op, double seconds) {
  return op.flops > 0 ? op.flops / seconds * 1e-9 : 0;
}

}  // namespace temper::cli
