#include "search/tune.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>

#include "compiler/ir/error.h"

namespace temper::search {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double gflops(const schedule_space::Task& task, double seconds) {
  return seconds > 0 && task.op().flops > 0 ? task.op().flops / seconds * 1e-9 : 0;
}

// The candidates of one batch: the configs that the template could apply are measured;
// the others already have their result.
struct Batch {
  std::vector<schedule_space::Config> configs;
  std::vector<measure::MeasureResult> results;
  std::vector<nlohmann::json> traces;
};

void measure_batch(const schedule_space::Task& task, measure::Builder& builder, measure::Runner& runner,
                   measure::MachineShare* share, Batch& batch, TuneResult& out) {
  std::vector<measure::MeasureInput> inputs;
  std::vector<size_t> which;
  batch.results.assign(batch.configs.size(), {});
  batch.traces.assign(batch.configs.size(), nlohmann::json());
  for (size_t i = 0; i < batch.configs.size(); ++i) {
    try {
      Schedule s = task.apply(batch.configs[i]);
      batch.traces[i] = s.trace().to_json();
      inputs.push_back({task.workload(), task.target(), s.func()});
      which.push_back(i);
    } catch (const std::exception& e) {
      batch.results[i].error = measure::MeasureError::InstantiationError;
      batch.results[i].message = e.what();
    }
  }
  if (inputs.empty()) return;
  auto in_turn = [share](bool exclusive, const std::function<void()>& work) {
    if (share) {
      share->run(exclusive, work);
    } else {
      work();
    }
  };
  std::vector<measure::BuildArtifact> artifacts;
  std::vector<measure::MeasureResult> results;
  Clock::time_point t0 = Clock::now();
  in_turn(false, [&] { artifacts = builder.build(inputs); });
  Clock::time_point t1 = Clock::now();
  in_turn(!task.target().is_gpu(), [&] { results = runner.run(inputs, artifacts); });
  out.compile_s += std::chrono::duration<double>(t1 - t0).count();
  out.run_s += seconds_since(t1);
  for (size_t k = 0; k < which.size(); ++k) batch.results[which[k]] = results[k];
}

tuning_db::TuningRecord make_record(const schedule_space::Task& task, const tuning_db::TargetInfo& target,
                                    const schedule_space::Config& config, const nlohmann::json& trace,
                                    const measure::MeasureResult& result) {
  tuning_db::TuningRecord r;
  r.workload = tuning_db::WorkloadKey::from(task.workload());
  r.target = target;
  r.trace = trace;  // null when the template could not apply the config
  r.config = config.to_json();
  r.costs = result.costs;
  r.mean = result.error == measure::MeasureError::None ? result.mean : std::numeric_limits<double>::infinity();
  r.error = tuning_db::parse_error_kind(measure::error_name(result.error));
  r.error_message = result.message;
  r.timestamp = tuning_db::now_timestamp();
  r.temper_version = tuning_db::temper_version();
  return r;
}

}  // namespace

void check_tunable_target(const Target& target) {
  if (target.kind == Target::Kind::C) {
    // The measurer runs shared libraries (LLVM) and device programs (GPU targets).
    throw UserError(str("tuning measures llvm, cuda and opencl targets, not '", target.to_string(),
                        "'; the C backend is for reading the generated code"));
  }
}

TuneResult tune(const schedule_space::Task& task, Tuner& tuner, measure::Builder& builder, measure::Runner& runner,
                tuning_db::Database& db, const TuneOptions& options,
                const std::function<void(const TuneProgress&)>& on_progress, const std::atomic<bool>* stop) {
  if (options.trials < 1) throw UserError(str("the trial budget must be at least 1, got ", options.trials));
  if (options.batch_size < 1) throw UserError(str("the batch size must be at least 1, got ", options.batch_size));
  check_tunable_target(task.target());
  Clock::time_point start = Clock::now();
  TuneResult out;
  const schedule_space::ConfigSpace& space = task.space();
  tuning_db::WorkloadKey key = tuning_db::WorkloadKey::from(task.workload());
  tuning_db::TargetInfo target_info = tuning_db::host_target_info(task.target());
  db.commit_workload(key);

  // Resume: what the log already holds for this workload and target. The tuner learns
  // from it once, as from a measured batch (a model tuner fits its model on it).
  std::vector<schedule_space::Config> resumed;
  std::vector<double> resumed_costs;
  for (const tuning_db::TuningRecord& r : db.records_for(key, target_info.target)) {
    if (r.config.is_null()) continue;
    try {
      schedule_space::Config c = space.from_json(r.config);
      if (tuner.visited(c)) continue;
      tuner.mark_visited(c);
      resumed.push_back(c);
      resumed_costs.push_back(r.is_valid() ? r.mean : std::numeric_limits<double>::infinity());
    } catch (const UserError&) {
      continue;  // a config of another version of the template
    }
    ++out.trials_resumed;
    if (r.is_valid() && (!out.best || r.mean < out.best->mean)) out.best = r;
  }
  if (!resumed.empty()) tuner.update(resumed, resumed_costs);

  std::optional<schedule_space::Config> first;
  schedule_space::Config def = task.default_config();
  if (!tuner.visited(def)) {
    tuner.mark_visited(def);
    first = def;
  }

  TuneProgress progress;
  progress.trials_total = options.trials;
  progress.trials_done = out.trials_resumed;
  progress.best_gflops = out.best ? gflops(task, out.best->mean) : 0;
  int since_improvement = 0;
  int errors_in_a_row = 0;
  auto report = [&] {
    progress.errors = out.errors;
    progress.elapsed_s = seconds_since(start);
    if (out.trials_measured > 0) {
      double per_trial = progress.elapsed_s / out.trials_measured;
      progress.eta_s = per_trial * std::max(0, options.trials - progress.trials_done);
      if (options.time_budget_s > 0) {
        progress.eta_s = std::min(progress.eta_s, std::max(0.0, options.time_budget_s - progress.elapsed_s));
      }
    }
    if (on_progress) on_progress(progress);
  };
  report();

  while (true) {
    int left = options.trials - progress.trials_done;
    if (left <= 0) {
      out.stop_reason = "trial budget reached";
      break;
    }
    if (stop && stop->load()) {
      out.stop_reason = "stopped on request";
      break;
    }
    // The first batch always runs, so that a job with a time budget makes progress
    // however slow its setup was.
    if (options.time_budget_s > 0 && out.trials_measured > 0 && seconds_since(start) >= options.time_budget_s) {
      out.stop_reason = "time budget reached";
      break;
    }
    if (options.early_stopping > 0 && since_improvement >= options.early_stopping) {
      out.stop_reason = str("early stopping: no better time in ", since_improvement, " trials");
      break;
    }
    if (options.error_threshold > 0 && errors_in_a_row >= options.error_threshold) {
      out.stop_reason = str("error threshold: the last ", errors_in_a_row, " trials all failed");
      break;
    }

    Batch batch;
    int want = std::min(left, options.batch_size);
    if (first) {
      batch.configs.push_back(*first);
      first.reset();
      --want;
    }
    if (want > 0 && tuner.has_next()) {
      for (schedule_space::Config& c : tuner.next_batch(want)) batch.configs.push_back(c);
    }
    if (batch.configs.empty()) {
      out.stop_reason = "the search space is exhausted";
      break;
    }

    measure_batch(task, builder, runner, options.machine_share, batch, out);
    std::vector<tuning_db::TuningRecord> records;
    std::vector<double> costs;
    for (size_t i = 0; i < batch.configs.size(); ++i) {
      tuning_db::TuningRecord r = make_record(task, target_info, batch.configs[i], batch.traces[i], batch.results[i]);
      costs.push_back(r.is_valid() ? r.mean : std::numeric_limits<double>::infinity());
      records.push_back(std::move(r));
    }
    db.commit_records(records);
    tuner.update(batch.configs, costs);

    for (const tuning_db::TuningRecord& r : records) {
      ++out.trials_measured;
      ++progress.trials_done;
      if (!r.is_valid()) {
        ++out.errors;
        ++errors_in_a_row;
      } else {
        errors_in_a_row = 0;
      }
      if (r.is_valid() && (!out.best || r.mean < out.best->mean)) {
        out.best = r;
        since_improvement = 0;
      } else {
        ++since_improvement;
      }
      progress.best_gflops = out.best ? gflops(task, out.best->mean) : 0;
      out.best_curve.push_back(progress.best_gflops);
    }
    report();
  }
  out.wall_s = seconds_since(start);
  return out;
}

}  // namespace temper::search
