#include "search/auto_explorer.h"

#include <limits>

#include "compiler/ops/cpu_schedules.h"
#include "compiler/ops/gpu_schedules.h"
#include "compiler/runtime/file_io.h"
#include "search/featurize.h"

namespace temper::search {

AutoExplorer::AutoExplorer(const schedule_space::AutoSpace& space, std::unique_ptr<cost_model::CostModel> model,
                           uint64_t seed, EvolutionOptions options)
    : space_(space),
      search_(space, std::move(model), sample_group(tuning_db::WorkloadKey::from(space.workload()),
                                                    space.target().to_string()),
              seed, options),
      default_schedule_(space.target().is_gpu() ? ops::schedule_gpu_default(space.op())
                                                : ops::schedule_cpu_default(space.op(), space.target())),
      default_trace_(default_schedule_.trace().to_json()) {}

std::string AutoExplorer::describe() const {
  return str("auto, ", space_.sketches().size(), " sketches");
}

bool AutoExplorer::resume(const tuning_db::TuningRecord& record) {
  // A template's record, or one this explorer knows (measured by it, or taken in an
  // earlier resume: a model job resumes before each of its turns).
  if (!record.config.is_null() || record.trace.is_null()) return false;
  if (!known_traces_.insert(fnv1a(record.trace.dump())).second) return false;
  if (record.trace == default_trace_) {
    default_measured_ = true;
    return true;
  }
  Trace trace;
  try {
    trace = Trace::from_json(record.trace);
  } catch (const UserError&) {
    return true;
  }
  if (std::optional<schedule_space::AutoCandidate> c = space_.from_trace(trace)) {
    resumed_.push_back(std::move(*c));
    resumed_costs_.push_back(record.is_valid() ? record.mean : std::numeric_limits<double>::infinity());
  }
  return true;
}

void AutoExplorer::resume_done() {
  if (!resumed_.empty()) search_.add_measured(resumed_, resumed_costs_);
  resumed_.clear();
  resumed_costs_.clear();
}

std::optional<Proposal> AutoExplorer::first() {
  if (default_measured_) return std::nullopt;
  default_measured_ = true;
  pending_default_ = true;
  if (std::optional<ScoredCandidate> c = evaluate({-1, default_schedule_, {}})) search_.mark_measured(c->hash);
  known_traces_.insert(fnv1a(default_trace_.dump()));
  return Proposal{nullptr, default_schedule_, ""};
}

std::vector<Proposal> AutoExplorer::next_batch(int n) {
  std::vector<Proposal> out;
  for (schedule_space::AutoCandidate& c : search_.next_batch(n)) {
    known_traces_.insert(fnv1a(c.schedule.trace().to_json().dump()));
    out.push_back({nullptr, c.schedule, ""});
    pending_.push_back(std::move(c));
  }
  if (out.empty()) exhausted_ = true;
  return out;
}

void AutoExplorer::update(const std::vector<double>& costs) {
  size_t skip = pending_default_ ? 1 : 0;
  TEMPER_CHECK(costs.size() == pending_.size() + skip, "update: ", costs.size(), " costs for ",
               pending_.size() + skip, " candidates");
  search_.add_measured(pending_, std::vector<double>(costs.begin() + skip, costs.end()));
  pending_.clear();
  pending_default_ = false;
}

}  // namespace temper::search
