#include "search/tune.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>

#include "compiler/ir/error.h"
#include "search/template_explorer.h"

namespace temper::search {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double gflops(const ops::OpInstance& op, double seconds) {
  return seconds > 0 && op.flops > 0 ? op.flops / seconds * 1e-9 : 0;
}

// Measures the proposals that have a schedule; the others already have their result.
std::vector<measure::MeasureResult> measure_batch(const Explorer& explorer, measure::Builder& builder,
                                                  measure::Runner& runner, measure::MachineShare* share,
                                                  const std::vector<Proposal>& batch, TuneResult& out) {
  std::vector<measure::MeasureInput> inputs;
  std::vector<size_t> which;
  std::vector<measure::MeasureResult> results(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i].schedule) {
      inputs.push_back({explorer.workload(), explorer.target(), batch[i].schedule->func()});
      which.push_back(i);
    } else {
      results[i].error = measure::MeasureError::InstantiationError;
      results[i].message = batch[i].error;
    }
  }
  if (inputs.empty()) return results;
  auto in_turn = [share](bool exclusive, const std::function<void()>& work) {
    if (share) {
      share->run(exclusive, work);
    } else {
      work();
    }
  };
  std::vector<measure::BuildArtifact> artifacts;
  std::vector<measure::MeasureResult> measured;
  Clock::time_point t0 = Clock::now();
  in_turn(false, [&] { artifacts = builder.build(inputs); });
  Clock::time_point t1 = Clock::now();
  in_turn(!explorer.target().is_gpu(), [&] { measured = runner.run(inputs, artifacts); });
  out.compile_s += std::chrono::duration<double>(t1 - t0).count();
  out.run_s += seconds_since(t1);
  for (size_t k = 0; k < which.size(); ++k) results[which[k]] = measured[k];
  return results;
}

tuning_db::TuningRecord make_record(const Explorer& explorer, const tuning_db::TargetInfo& target,
                                    const Proposal& proposal, const measure::MeasureResult& result) {
  tuning_db::TuningRecord r;
  r.workload = tuning_db::WorkloadKey::from(explorer.workload());
  r.target = target;
  // Null when the candidate could not be instantiated.
  if (proposal.schedule) r.trace = proposal.schedule->trace().to_json();
  r.config = proposal.config;
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
  TemplateExplorer explorer(task, tuner);
  return tune(explorer, builder, runner, db, options, on_progress, stop);
}

TuneResult tune(Explorer& explorer, measure::Builder& builder, measure::Runner& runner, tuning_db::Database& db,
                const TuneOptions& options, const std::function<void(const TuneProgress&)>& on_progress,
                const std::atomic<bool>* stop) {
  if (options.trials < 1) throw UserError(str("the trial budget must be at least 1, got ", options.trials));
  if (options.batch_size < 1) throw UserError(str("the batch size must be at least 1, got ", options.batch_size));
  check_tunable_target(explorer.target());
  Clock::time_point start = Clock::now();
  TuneResult out;
  const ops::OpInstance& op = explorer.op();
  tuning_db::WorkloadKey key = tuning_db::WorkloadKey::from(explorer.workload());
  tuning_db::TargetInfo target_info = tuning_db::host_target_info(explorer.target());
  db.commit_workload(key);

  for (const tuning_db::TuningRecord& r : db.records_for(key, target_info.target)) {
    if (!explorer.resume(r)) continue;
    ++out.trials_resumed;
    if (r.is_valid() && (!out.best || r.mean < out.best->mean)) out.best = r;
  }
  explorer.resume_done();
  std::optional<Proposal> first = explorer.first();

  TuneProgress progress;
  progress.trials_total = options.trials;
  progress.trials_done = out.trials_resumed;
  progress.best_gflops = out.best ? gflops(op, out.best->mean) : 0;
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

    std::vector<Proposal> batch;
    int want = std::min(left, options.batch_size);
    if (first) {
      batch.push_back(std::move(*first));
      first.reset();
      --want;
    }
    if (want > 0 && explorer.has_next()) {
      for (Proposal& p : explorer.next_batch(want)) batch.push_back(std::move(p));
    }
    if (batch.empty()) {
      out.stop_reason = "the search space is exhausted";
      break;
    }

    std::vector<measure::MeasureResult> results =
        measure_batch(explorer, builder, runner, options.machine_share, batch, out);
    std::vector<tuning_db::TuningRecord> records;
    std::vector<double> costs;
    for (size_t i = 0; i < batch.size(); ++i) {
      tuning_db::TuningRecord r = make_record(explorer, target_info, batch[i], results[i]);
      costs.push_back(r.is_valid() ? r.mean : std::numeric_limits<double>::infinity());
      records.push_back(std::move(r));
    }
    db.commit_records(records);
    explorer.update(costs);

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
      progress.best_gflops = out.best ? gflops(op, out.best->mean) : 0;
      out.best_curve.push_back(progress.best_gflops);
    }
    report();
  }
  out.wall_s = seconds_since(start);
  return out;
}

}  // namespace temper::search
