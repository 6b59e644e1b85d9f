#include "search/candidate_recipe.h"

#include "compiler/ir/error.h"
#include "schedule_space/template.h"
#include "search/apply_history_best.h"

namespace temper::search {

std::string candidate_recipe(const nlohmann::json& config, const nlohmann::json& trace, bool prepacked) {
  return nlohmann::json{{"config", config}, {"trace", trace}, {"prepacked", prepacked}}.dump();
}

RebuiltCandidate rebuild_candidate(const ops::Workload& workload, const Target& target, const std::string& recipe) {
  nlohmann::json j = nlohmann::json::parse(recipe, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("config") || !j.contains("trace") ||
      !j.value("prepacked", nlohmann::json()).is_boolean()) {
    throw UserError(str("malformed candidate recipe (an object with config, trace and prepacked): ", recipe));
  }
  if (j["prepacked"].get<bool>()) {
    std::unique_ptr<schedule_space::Task> task = schedule_space::Task::create(workload, target);
    std::optional<schedule_space::PrepackedSchedule> p = task->apply_prepacked(task->space().from_json(j["config"]));
    if (!p) throw UserError(str("the recipe's config packs no input of ", workload.to_string()));
    return {p->compute.func(), p->pack.func(), p->input};
  }
  tuning_db::TuningRecord record;
  record.config = j["config"];
  record.trace = j["trace"];
  return {schedule_from_record(record, workload, ops::instantiate(workload), target).func(), std::nullopt, -1};
}

}  // namespace temper::search
