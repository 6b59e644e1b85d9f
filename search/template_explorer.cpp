#include "search/template_explorer.h"

#include <limits>

namespace temper::search {

std::string TemplateExplorer::describe() const {
  return str("template ", task_.tmpl().name, ", ", task_.space().size(), " configs");
}

bool TemplateExplorer::resume(const tuning_db::TuningRecord& record) {
  if (record.config.is_null()) return false;  // the auto-scheduler's
  schedule_space::Config c;
  try {
    c = task_.space().from_json(record.config);
  } catch (const UserError&) {
    return false;  // a config of another version of the template
  }
  if (tuner_.visited(c)) return false;
  tuner_.mark_visited(c);
  resumed_.push_back(c);
  resumed_costs_.push_back(record.is_valid() ? record.mean : std::numeric_limits<double>::infinity());
  return true;
}

void TemplateExplorer::resume_done() {
  // The tuner learns from the log once, as from a measured batch.
  if (!resumed_.empty()) tuner_.update(resumed_, resumed_costs_);
  resumed_.clear();
  resumed_costs_.clear();
}

std::optional<schedule_space::PrepackedSchedule> TemplateExplorer::prepacked(const nlohmann::json& config) const {
  if (config.is_null() || task_.target().is_gpu()) return std::nullopt;
  try {
    return task_.apply_prepacked(task_.space().from_json(config));
  } catch (const UserError&) {  // ScheduleError too: the candidate is measured as apply made it
    return std::nullopt;
  }
}

Proposal TemplateExplorer::propose(const schedule_space::Config& config) {
  pending_.push_back(config);
  Proposal p;
  p.config = config.to_json();
  try {
    p.schedule = task_.apply(config);
  } catch (const std::exception& e) {
    p.error = e.what();
  }
  return p;
}

std::optional<Proposal> TemplateExplorer::first() {
  schedule_space::Config def = task_.default_config();
  if (tuner_.visited(def)) return std::nullopt;
  tuner_.mark_visited(def);
  return propose(def);
}

std::vector<Proposal> TemplateExplorer::next_batch(int n) {
  std::vector<Proposal> out;
  if (n <= 0 || !tuner_.has_next()) return out;
  for (const schedule_space::Config& c : tuner_.next_batch(n)) out.push_back(propose(c));
  return out;
}

void TemplateExplorer::update(const std::vector<double>& costs) {
  TEMPER_CHECK(costs.size() == pending_.size(), "update: ", costs.size(), " costs for ", pending_.size(),
               " configs");
  tuner_.update(pending_, costs);
  pending_.clear();
}

}  // namespace temper::search
