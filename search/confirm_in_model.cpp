#include "search/confirm_in_model.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>

#include "compiler/graph/executor.h"
#include "compiler/ir/duration.h"
#include "compiler/ir/error.h"
#include "compiler/ir/text.h"
#include "schedule_space/template.h"
#include "search/layout_from_log.h"

namespace temper::search {
namespace {

// A schedule a build may give a workload: one of the log's records, or the template default.
struct Candidate {
  std::string label;                              // "log rank 2", "template default"
  std::optional<tuning_db::TuningRecord> record;  // none for the default
};

// What a build gives each workload: its log's rank-th best record (its best when it has
// fewer), or with rank < 0 its template default; or, with `chosen`, that workload's choice.
class RankSource : public ops::ScheduleSource {
 public:
  RankSource(const tuning_db::Database& db, MachineMatch match, int candidates, int rank,
             const std::map<std::string, Candidate>* chosen)
      : db_(db), match_(match), candidates_(candidates), rank_(rank), chosen_(chosen) {}

  ops::SourcedSchedule schedule_for(const ops::Workload& workload, const ops::OpInstance& op,
                                    const Target& target) override {
    std::string name = workload.to_string();
    Candidate candidate = candidate_for(workload, target);
    if (candidate.record) {
      try {
        Schedule s = schedule_from_record(*candidate.record, workload, op, target);
        bool templated = !candidate.record->config.is_null() && schedule_space::find_template(workload.op, target);
        used_[name] = candidate;
        return {std::move(s), templated ? candidate.record->config : nlohmann::json()};
      } catch (const UserError&) {
        // A record that no longer applies: its build runs the default in its place, and
        // the default is what gets timed under its label.
      }
    }
    ops::SourcedSchedule s = default_sourced_schedule(workload, op, target);
    tuning_db::TuningRecord as_record;
    as_record.trace = s.schedule.trace().to_json();
    as_record.config = s.config;
    used_[name] = {"template default", as_record};
    return s;
  }

  // Per workload, the candidate the build took.
  const std::map<std::string, Candidate>& used() const { return used_; }

 private:
  Candidate candidate_for(const ops::Workload& workload, const Target& target) {
    if (chosen_) {
      auto it = chosen_->find(workload.to_string());
      if (it != chosen_->end()) return it->second;
    }
    if (rank_ < 0) return {"template default", std::nullopt};
    std::vector<tuning_db::TuningRecord> best =
        best_records(db_, tuning_db::WorkloadKey::from(workload), target, candidates_, match_).best;
    if (best.empty()) return {"template default", std::nullopt};
    size_t rank = std::min(static_cast<size_t>(rank_), best.size() - 1);
    return {str("log rank ", rank + 1), best[rank]};
  }

  const tuning_db::Database& db_;
  MachineMatch match_;
  int candidates_;
  int rank_;
  const std::map<std::string, Candidate>* chosen_;
  std::map<std::string, Candidate> used_;
};

struct Build {
  std::string name;
  std::unique_ptr<RankSource> source;
  std::unique_ptr<graph::GraphExecutor> executor;
  // Per round: per run, its latency and (when timed per call) each call's time.
  std::vector<std::vector<double>> run_s;
  std::vector<std::vector<std::vector<double>>> call_s;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Runs each build `runs` times per round, the builds in turn and rotated from round to
// round so that none always follows the same other; each build's first run of a round is
// not timed (it finds the caches as the previous build left them). Many short rounds:
// this host's slow spells last about as long as a few rounds, and a comparison within
// each round (paired_ratio) leaves them out.
void run_rounds(const std::vector<Build*>& builds, const std::map<std::string, NDArray>& inputs, int rounds, int runs,
                bool per_call) {
  std::vector<double> calls;
  for (Build* b : builds) {
    b->run_s.assign(static_cast<size_t>(rounds), {});
    b->call_s.assign(per_call ? static_cast<size_t>(rounds) : 0, {});
  }
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < builds.size(); ++i) {
      Build& b = *builds[(i + static_cast<size_t>(r)) % builds.size()];
      b.executor->run(inputs);
      for (int k = 0; k < runs; ++k) {
        auto start = std::chrono::steady_clock::now();
        b.executor->run(inputs, per_call ? &calls : nullptr);
        b.run_s[r].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        if (per_call) b.call_s[r].push_back(calls);
      }
    }
  }
}

// Per round, per workload: the median over the round's runs of its kernels' summed times.
std::vector<std::map<std::string, double>> workload_times(const Build& b) {
  const graph::ExecutionPlan& plan = b.executor->plan();
  std::vector<std::map<std::string, double>> out;
  for (const std::vector<std::vector<double>>& runs : b.call_s) {
    std::map<std::string, std::vector<double>> sums;
    for (const std::vector<double>& calls : runs) {
      std::map<std::string, double> run;
      for (size_t c = 0; c < plan.calls.size() && c < calls.size(); ++c) {
        if (!plan.calls[c].workload.empty()) run[plan.calls[c].workload] += calls[c];
      }
      for (const auto& [w, t] : run) sums[w].push_back(t);
    }
    std::map<std::string, double> round;
    for (auto& [w, ts] : sums) round[w] = median(ts);
    out.push_back(std::move(round));
  }
  return out;
}

// Per round, the median of the round's runs.
std::vector<double> round_latencies(const Build& b) {
  std::vector<double> out;
  for (const std::vector<double>& runs : b.run_s) out.push_back(median(runs));
  return out;
}

// The median over the rounds of a's time over b's in the same round.
double paired_ratio(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> ratios;
  for (size_t r = 0; r < a.size() && r < b.size(); ++r) {
    if (a[r] > 0 && b[r] > 0) ratios.push_back(a[r] / b[r]);
  }
  return ratios.empty() ? 1.0 : median(ratios);
}

}  // namespace

InModelResult confirm_in_model(const graph::Graph& graph, const Target& target, graph::LayoutChoice layout,
                               const tuning_db::Database& db, const InModelOptions& options, std::ostream* progress) {
  InModelResult result;
  layout = layout_from_log(graph, target, layout, db, options.match).layout;
  auto make_build = [&](const std::string& name, int rank, const std::map<std::string, Candidate>* chosen) {
    auto b = std::make_unique<Build>();
    b->name = name;
    b->source = std::make_unique<RankSource>(db, options.match, options.candidates, rank, chosen);
    b->executor = std::make_unique<graph::GraphExecutor>(
        graph, target, graph::ExecutorOptions{.schedules = b->source.get(), .layout = layout});
    return b;
  };
  // The log's k-th best for every task, then the defaults.
  std::vector<std::unique_ptr<Build>> builds;
  for (int rank = 0; rank < options.candidates; ++rank)
    builds.push_back(make_build(str("rank ", rank + 1), rank, nullptr));
  builds.push_back(make_build("defaults", -1, nullptr));
  const RankSource& log_best = *builds.front()->source;
  bool any_logged = false;
  for (const auto& [w, c] : log_best.used()) any_logged = any_logged || c.label != "template default";
  if (!any_logged) return result;

  std::map<std::string, NDArray> inputs;
  uint64_t seed = 0;
  for (graph::ValueId v : graph.inputs()) {
    const graph::Value& value = graph.value(v);
    inputs[value.name] = NDArray::random(value.type.shape, value.type.dtype, seed++);
  }
  // Runs per round from one run's time, so that a large model is not run for minutes.
  auto start = std::chrono::steady_clock::now();
  builds.front()->executor->run(inputs);
  double once_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int runs = std::clamp(static_cast<int>(options.round_s / std::max(once_s, 1e-6)), 3, 20);
  if (progress) {
    *progress << "in model   " << builds.size() << " builds (the log's " << options.candidates
              << " best per task, the defaults), " << options.rounds << " rounds of " << runs << " runs each\n";
    progress->flush();
  }
  std::vector<Build*> timed;
  for (auto& b : builds) timed.push_back(b.get());
  run_rounds(timed, inputs, options.rounds, runs, /*per_call=*/true);
  if (progress) {
    std::string each;
    for (const auto& b : builds)
      each += str(each.empty() ? "" : ", ", b->name, " ", format_ms(median(round_latencies(*b))));
    *progress << "in model   whole model per build: " << each << "\n";
  }

  // Per workload, each distinct candidate's time per round: a candidate that several
  // builds ran (a task with fewer records than builds) takes the median of theirs.
  std::map<std::string, std::map<std::string, std::vector<std::vector<double>>>>
      samples;  // workload -> label -> round -> times
  std::map<std::string, std::map<std::string, Candidate>> candidates;
  for (const auto& b : builds) {
    std::vector<std::map<std::string, double>> rounds = workload_times(*b);
    for (const auto& [w, c] : b->source->used()) {
      std::vector<std::vector<double>>& by_round = samples[w][c.label];
      by_round.resize(rounds.size());
      for (size_t r = 0; r < rounds.size(); ++r) {
        auto it = rounds[r].find(w);
        if (it != rounds[r].end()) by_round[r].push_back(it->second);
      }
      candidates[w].emplace(c.label, c);
    }
  }
  auto per_round = [&](const std::string& w, const std::string& label) {
    std::vector<double> out;
    for (const std::vector<double>& ts : samples[w][label]) out.push_back(median(ts));
    return out;
  };
  std::map<std::string, Candidate> chosen;
  const graph::ExecutionPlan& plan = builds.front()->executor->plan();
  std::vector<std::string> order;  // workloads in plan order
  for (const graph::KernelCall& call : plan.calls) {
    if (!call.workload.empty() && std::find(order.begin(), order.end(), call.workload) == order.end())
      order.push_back(call.workload);
  }
  for (const std::string& w : order) {
    auto it = log_best.used().find(w);
    if (it == log_best.used().end() || it->second.label == "template default" || !samples.count(w)) continue;
    const std::string& best_label = it->second.label;
    std::vector<double> best_rounds = per_round(w, best_label);
    InModelTask task;
    task.workload = w;
    task.log_best_s = median(best_rounds);
    task.picked = best_label;
    task.picked_s = task.log_best_s;
    // Another candidate replaces the log's best only when it ran faster by the margin in
    // the median round: a tie stays with the measurer's ranking.
    double best_ratio = 1 - options.switch_margin;
    for (const auto& [label, unused] : samples[w]) {
      std::vector<double> rounds = per_round(w, label);
      if (label == "template default") task.default_s = median(rounds);
      double ratio = paired_ratio(rounds, best_rounds);
      if (label != best_label && ratio < best_ratio) {
        best_ratio = ratio;
        task.picked = label;
        task.picked_s = median(rounds);
      }
    }
    chosen[w] = candidates[w].at(task.picked);
    result.tasks.push_back(task);
  }

  // The whole model built with the choices, against the log's best and the defaults.
  std::unique_ptr<Build> with_choices = make_build("chosen", 0, &chosen);
  Build& best_build = *builds.front();
  Build& default_build = *builds.back();
  run_rounds({with_choices.get(), &best_build, &default_build}, inputs, options.rounds, runs, /*per_call=*/false);
  std::vector<double> chosen_rounds = round_latencies(*with_choices), best_rounds = round_latencies(best_build),
                      default_rounds = round_latencies(default_build);
  result.chosen_latency_s = median(chosen_rounds);
  result.log_best_latency_s = median(best_rounds);
  result.default_latency_s = median(default_rounds);
  result.kept = "in-model choices";
  bool defaults_better = paired_ratio(default_rounds, best_rounds) < 1;
  double against_better = paired_ratio(chosen_rounds, defaults_better ? default_rounds : best_rounds);
  if (against_better > 1 + options.margin) {
    result.kept = defaults_better ? "the template defaults" : "the log's best";
    for (InModelTask& task : result.tasks) {
      std::string label = defaults_better ? "template default" : log_best.used().at(task.workload).label;
      if (!candidates[task.workload].count(label)) continue;
      task.picked = label;
      task.picked_s = median(per_round(task.workload, label));
      chosen[task.workload] = candidates[task.workload].at(label);
    }
  }

  tuning_db::TargetInfo machine = tuning_db::host_target_info(target);
  int64_t now = tuning_db::now_timestamp();
  for (const InModelTask& task : result.tasks) {
    const Candidate& c = chosen.at(task.workload);
    tuning_db::ModelChoice choice;
    choice.workload = tuning_db::WorkloadKey::from(ops::Workload::parse(task.workload));
    choice.target = machine;
    choice.model = options.model_name;
    choice.trace = c.record->trace;
    choice.config = c.record->config;
    choice.picked = task.picked;
    choice.model_seconds = task.picked_s;
    choice.log_best_seconds = task.log_best_s;
    choice.timestamp = now;
    choice.temper_version = tuning_db::temper_version();
    result.choices.push_back(std::move(choice));
  }
  if (progress && result.kept == "in-model choices") {
    for (const InModelTask& task : result.tasks) {
      if (task.picked == "log rank 1") continue;
      *progress << "in model   " << task.workload << ": " << task.picked << ", " << format_ms(task.picked_s)
                << " in the model against " << format_ms(task.log_best_s) << " for the log's best\n";
    }
  }
  return result;
}

}  // namespace temper::search
