// Explorers: where the tune loop's candidates come from (tune.h). One tuning stack, two
// ways to propose: a template's ConfigSpace walked by a Tuner (TemplateExplorer, AutoTVM)
// and the auto-scheduler's sketches under evolutionary search (AutoExplorer, Ansor).
// Both hand the loop scheduled programs of the same workload; the loop measures them and
// logs each as a record -- with its config for a template, with a null config for the
// auto-scheduler (whose trace replays on op.func) -- so one log holds both, and
// ApplyHistoryBest takes the fastest whichever explorer found it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/ops/workload.h"
#include "compiler/schedule/schedule.h"
#include "compiler/target/target.h"
#include "schedule_space/template.h"
#include "tuning_db/record.h"

namespace temper::search {

struct Proposal {
  nlohmann::json config;             // the template config; null for an auto-scheduled candidate
  std::optional<Schedule> schedule;  // nullopt when the candidate could not be instantiated
  std::string error;                 // why not (recorded as an instantiation error)
};

class Explorer {
 public:
  virtual ~Explorer() = default;
  virtual const ops::Workload& workload() const = 0;
  virtual const ops::OpInstance& op() const = 0;
  virtual const Target& target() const = 0;
  // "template matmul.cpu, 9216 configs" / "auto, 3 sketches": for the job's header.
  virtual std::string describe() const = 0;
  // What proposes its candidates, as its records name it (TuningRecord::tuner).
  virtual std::string tuner() const = 0;
  // The candidate of a template config as a model build runs it: with a constant input
  // packed once ahead of time (a conv2d's weight in NCHWc blocks; Task::apply_prepacked),
  // which the measurer then packs untimed. nullopt where it packs nothing.
  virtual std::optional<schedule_space::PrepackedSchedule> prepacked(const nlohmann::json& config) const {
    (void)config;
    return std::nullopt;
  }

  // Resume: offered each record of the log for this workload and target, then told that
  // they are all in (resume_done), to learn from them at once. True when the record is
  // one of this explorer's: it counts towards the job's budget and is never proposed again.
  virtual bool resume(const tuning_db::TuningRecord& record) = 0;
  virtual void resume_done() {}

  // The job's first candidate: the schedule a build uses without a log, unless the log
  // has it already -- so a tuned result is never worse than that.
  virtual std::optional<Proposal> first() = 0;
  // False once nothing is left to propose.
  virtual bool has_next() const = 0;
  // At most n candidates, none proposed or measured before.
  virtual std::vector<Proposal> next_batch(int n) = 0;
  // The costs in seconds of the candidates handed out since the last update (first()'s
  // included), in that order; +infinity for a failed one.
  virtual void update(const std::vector<double>& costs) = 0;
};

}  // namespace temper::search
