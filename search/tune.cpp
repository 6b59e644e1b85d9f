#include "search/tune.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <unordered_set>

#include "compiler/codegen/build.h"
#include "compiler/ir/error.h"
#include "search/apply_history_best.h"
#include "search/candidate_recipe.h"
#include "search/template_explorer.h"
#include "tuning_db/schedule_ranking.h"

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
      measure::MeasureInput input{explorer.workload(), explorer.target(), batch[i].schedule->func(), {}, -1, ""};
      // Measured as a model runs it: a constant input the schedule packs, packed once.
      std::optional<schedule_space::PrepackedSchedule> p = explorer.prepacked(batch[i].config);
      if (p) {
        input.func = p->compute.func();
        input.pack = p->pack.func();
        input.packed_input = p->input;
      }
      input.recipe = candidate_recipe(batch[i].config, batch[i].schedule->trace().to_json(), p.has_value());
      inputs.push_back(std::move(input));
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
  r.tuner = explorer.tuner();
  r.costs = result.costs;
  r.mean = result.error == measure::MeasureError::None ? result.mean : std::numeric_limits<double>::infinity();
  r.error = tuning_db::parse_error_kind(measure::error_name(result.error));
  r.error_message = result.message;
  r.timestamp = tuning_db::now_timestamp();
  r.temper_version = tuning_db::temper_version();
  return r;
}

// The records of one measured batch, committed in one transaction.
std::vector<tuning_db::TuningRecord> commit_batch(const Explorer& explorer, const tuning_db::TargetInfo& target,
                                                  const std::vector<Proposal>& batch,
                                                  const std::vector<measure::MeasureResult>& results,
                                                  tuning_db::Database& db) {
  std::vector<tuning_db::TuningRecord> records;
  for (size_t i = 0; i < batch.size(); ++i) records.push_back(make_record(explorer, target, batch[i], results[i]));
  db.commit_records(records);
  return records;
}

}  // namespace

void confirm_best(const Explorer& explorer, measure::Builder& builder, measure::Runner& runner, tuning_db::Database& db,
                  const TuneOptions& options, TuneResult& job) {
  if (options.confirm_top > 0 && options.confirm_measurements > 1) {
    tuning_db::TargetInfo target_info = tuning_db::host_target_info(explorer.target());
    // A schedule that the re-measurements push down lets the next one into the top: it
    // is confirmed in the next round. Among many near-equal candidates that takes a few
    // rounds; bounded, since a re-measurement may fail.
    constexpr int kMaxRounds = 8;
    for (int round = 0; round < kMaxRounds; ++round) {
      std::vector<Proposal> batch;
      std::vector<const tuning_db::TuningRecord*> originals;
      std::vector<tuning_db::RankedSchedule> top = tuning_db::rank_schedules(job.records, options.confirm_top);
      for (const tuning_db::RankedSchedule& r : top) {
        for (int i = r.measurements; i < options.confirm_measurements; ++i) {
          // A record the compiler can no longer replay stays as measured.
          try {
            batch.push_back({r.record.config,
                             schedule_from_record(r.record, explorer.workload(), explorer.op(), explorer.target()),
                             ""});
          } catch (const UserError&) {
            break;
          }
          originals.push_back(&r.record);
        }
      }
      if (batch.empty()) break;
      std::vector<measure::MeasureResult> results =
          measure_batch(explorer, builder, runner, options.machine_share, batch, job);
      std::vector<tuning_db::TuningRecord> records;
      for (size_t i = 0; i < batch.size(); ++i) {
        records.push_back(make_record(explorer, target_info, batch[i], results[i]));
        // The very schedule it re-measures, whatever the replay's trace would print.
        records.back().trace = originals[i]->trace;
      }
      db.commit_records(records);
      job.confirmations += static_cast<int>(records.size());
      job.records.insert(job.records.end(), records.begin(), records.end());
    }
  }
  std::vector<tuning_db::TuningRecord> best = tuning_db::best_schedules(job.records, 1);
  if (!best.empty()) job.best = best[0];
}

void check_tunable_target(const Target& target) {
  if (target.kind == Target::Kind::C) {
    // The measurer runs shared libraries (LLVM) and device programs (GPU targets).
    throw UserError(str("tuning measures llvm, cuda and opencl targets, not '", target.to_string(),
                        "'; the C backend is for reading the generated code"));
  }
  check_target(target);
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

  // A schedule's later records are re-measurements (confirm_best), not trials.
  std::unordered_set<std::string> offered, mine;
  for (const tuning_db::TuningRecord& r : db.records_for(key, target_info.target)) {
    std::string identity = tuning_db::schedule_identity(r);
    if (!r.trace.is_null() && !offered.insert(identity).second) {
      if (mine.count(identity)) out.records.push_back(r);
      continue;
    }
    if (!explorer.resume(r)) continue;
    mine.insert(identity);
    out.records.push_back(r);
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
    std::vector<tuning_db::TuningRecord> records = commit_batch(explorer, target_info, batch, results, db);
    std::vector<double> costs;
    for (const tuning_db::TuningRecord& r : records) {
      costs.push_back(r.is_valid() ? r.mean : std::numeric_limits<double>::infinity());
    }
    explorer.update(costs);
    out.records.insert(out.records.end(), records.begin(), records.end());

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
  if (!(stop && stop->load())) confirm_best(explorer, builder, runner, db, options, out);
  out.wall_s = seconds_since(start);
  return out;
}

}  // namespace temper::search
