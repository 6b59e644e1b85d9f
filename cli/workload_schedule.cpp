#include "cli/workload_schedule.h"

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "compiler/ops/gpu_schedules.h"
#include "search/apply_history_best.h"
#include "tuning_db/sqlite_database.h"

namespace po = boost::program_options;

namespace temper::cli {

void add_machine_option(po::options_description& desc, bool& any_machine) {
  desc.add_options()("any-machine", po::bool_switch(&any_machine),
                     "with --db: where the log has no record measured on this machine (its CPU model and features, "
                     "or its GPU), apply another machine's, named on stderr; without it they are not applied");
}

search::MachineMatch machine_match(bool any_machine) {
  return any_machine ? search::MachineMatch::AnyMachine : search::MachineMatch::ThisMachine;
}

void add_schedule_options(po::options_description& desc, ScheduleChoice& choice) {
  add_machine_option(desc, choice.any_machine);
  desc.add_options()("db", po::value(&choice.db),
                     "apply the best record of this tuning log (the default schedule if it has none)")(
      "trace", po::value(&choice.trace_file), "replay the schedule trace (JSON) in this file")(
      "schedule", po::value(&choice.schedule)->default_value("default"),
      "without --db or --trace: 'naive' (the loop nest as defined; on GPU targets one thread per output "
      "element) or 'default' (the template's default config, or the op's hand-written schedule)");
}

ChosenSchedule make_schedule(const ops::Workload& workload, const ops::OpInstance& op, const ScheduleChoice& choice,
                             const Target& target) {
  if (!choice.db.empty() && !choice.trace_file.empty()) throw UserError("give --db or --trace, not both");
  if (choice.any_machine && choice.db.empty()) throw UserError("--any-machine chooses among a log's records: give --db");
  if (!choice.db.empty()) {
    tuning_db::SQLiteDatabase db(choice.db, tuning_db::OpenMode::ReadOnly);
    search::ApplyHistoryBest best(db, &std::cerr, machine_match(choice.any_machine));
    ops::SourcedSchedule sourced = best.schedule_for(workload, op, target);
    std::string unreadable = tuning_db::unreadable_records_warning(db);
    if (!unreadable.empty()) std::cerr << unreadable << "\n";
    if (best.last_source() == "log") return {std::move(sourced), "tuned (log " + choice.db + ")", true};
    return {std::move(sourced), best.last_source() + " (log " + choice.db + " has no record that applies)", false};
  }
  if (!choice.trace_file.empty()) {
    std::ifstream in(choice.trace_file);
    if (!in) throw UserError(str("cannot read trace file '", choice.trace_file, "'"));
    nlohmann::json json;
    try {
      json = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw UserError(str("trace file '", choice.trace_file, "' is not valid JSON: ", e.what()));
    }
    try {
      return {{Trace::from_json(json).replay(op.func), nullptr}, "trace " + choice.trace_file};
    } catch (const ScheduleError& e) {
      // A template config that re-expresses the op (B packed into panels, a blocked conv
      // layout) schedules another function than the op's own, which its trace alone cannot name.
      throw UserError(str("trace file '", choice.trace_file, "' does not replay on ", op.func.name,
                          "'s definition: ", e.what(),
                          ". A trace of a template config that re-expresses the op (B in panels, a blocked "
                          "layout) replays only with its config: apply its record with --db LOG"));
    }
  }
  // On a GPU nothing runs outside bound loops: the naive schedule is one thread per output element.
  if (choice.schedule == "naive") {
    return {{target.is_gpu() ? ops::schedule_gpu_default(op) : Schedule(op.func), nullptr}, "naive"};
  }
  if (choice.schedule == "default") return {search::default_sourced_schedule(workload, op, target), "default"};
  throw UserError(str("unknown --schedule '", choice.schedule, "': use naive or default (or --trace FILE)"));
}

}  // namespace temper::cli
