// The template explorer: a Task's ConfigSpace walked by a Tuner (tuner.h). Its records
// carry the config; resume takes the log's records that have one of this space.
#pragma once

#include "schedule_space/template.h"
#include "search/explorer.h"
#include "search/tuner.h"

namespace temper::search {

class TemplateExplorer : public Explorer {
 public:
  // task and tuner must outlive the explorer.
  TemplateExplorer(const schedule_space::Task& task, Tuner& tuner) : task_(task), tuner_(tuner) {}

  const ops::Workload& workload() const override { return task_.workload(); }
  const ops::OpInstance& op() const override { return task_.op(); }
  const Target& target() const override { return task_.target(); }
  std::string describe() const override;
  std::string tuner() const override { return tuner_.name(); }
  std::optional<schedule_space::PrepackedSchedule> prepacked(const nlohmann::json& config) const override;

  bool resume(const tuning_db::TuningRecord& record) override;
  void resume_done() override;
  std::optional<Proposal> first() override;
  bool has_next() const override { return tuner_.has_next(); }
  std::vector<Proposal> next_batch(int n) override;
  void update(const std::vector<double>& costs) override;

 private:
  const schedule_space::Task& task_;
  Tuner& tuner_;
  std::vector<schedule_space::Config> resumed_;
  std::vector<double> resumed_costs_;
  std::vector<schedule_space::Config> pending_;  // handed out, not yet updated

  Proposal propose(const schedule_space::Config& config);
};

}  // namespace temper::search
