// The auto-scheduler as an explorer (explorer.h): the sketches of an AutoSpace searched by
// EvolutionarySearch under a cost model. Its records have a null config and a trace that
// replays on op.func.
//
// Its first candidate is the op's hand-written default schedule (ops::schedule_cpu_default,
// or ops::schedule_gpu_default on GPU targets, on op.func) -- what a build without a
// template uses, and a baseline any tuned result must beat. Resume takes every record of the log with a null config and a trace, once:
// those whose trace comes from a sketch of the space seed the search and train the
// model; the rest (the default schedule, another version's sketches) only count towards
// the budget.
#pragma once

#include <memory>
#include <unordered_set>

#include "cost_model/cost_model.h"
#include "schedule_space/auto_space.h"
#include "search/evolutionary_search.h"
#include "search/explorer.h"

namespace temper::search {

class AutoExplorer : public Explorer {
 public:
  // space must outlive the explorer.
  AutoExplorer(const schedule_space::AutoSpace& space, std::unique_ptr<cost_model::CostModel> model, uint64_t seed,
               EvolutionOptions options = {});

  const ops::Workload& workload() const override { return space_.workload(); }
  const ops::OpInstance& op() const override { return space_.op(); }
  const Target& target() const override { return space_.target(); }
  std::string describe() const override;
  // The cost model guiding its evolutionary search.
  std::string tuner() const override { return search_.model().kind(); }

  bool resume(const tuning_db::TuningRecord& record) override;
  void resume_done() override;
  std::optional<Proposal> first() override;
  bool has_next() const override { return !exhausted_; }
  std::vector<Proposal> next_batch(int n) override;
  void update(const std::vector<double>& costs) override;

  const EvolutionarySearch& search() const { return search_; }

 private:
  const schedule_space::AutoSpace& space_;
  EvolutionarySearch search_;
  Schedule default_schedule_;
  nlohmann::json default_trace_;  // default_schedule_'s, as the log stores it
  bool default_measured_ = false;
  std::unordered_set<uint64_t> known_traces_;  // FNV-1a of the trace JSON of records it has counted
  bool exhausted_ = false;
  std::vector<schedule_space::AutoCandidate> resumed_;
  std::vector<double> resumed_costs_;
  // Handed out, not yet updated: the default first when it is among them.
  bool pending_default_ = false;
  std::vector<schedule_space::AutoCandidate> pending_;
};

}  // namespace temper::search
