// ApplyHistoryBest: the schedule source a build consults after tuning. For each workload
// it applies the schedule chosen for it inside a model (model_choice_for), else the
// fastest valid record of the log for the target, measured on this machine
// (best_records), that still applies (a record that no longer replays gives way to the
// next of the five best, with a warning); when the log has none, the template's
// default config (with a warning when another machine's records exist), or the hand-written
// default schedule for ops without a template. It says once per workload, on the info
// stream, which of these it used -- one line per workload, never one per call. A conv the
// log lacks but holds in another layout (a log tuned in NCHW applied to a build in the
// blocked layout, or another block size) gets a warning saying so: such records are
// never applied, since their schedules are of another kernel.
#pragma once

#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "compiler/ops/schedule_source.h"
#include "tuning_db/database.h"
#include "tuning_db/record.h"

namespace temper::search {

// Whose records a build applies.
enum class MachineMatch {
  ThisMachine,  // those measured on this machine (tuning_db::same_machine)
  AnyMachine,   // any machine's, those of this one first (--any-machine)
};

// The best records a build can apply for workload on target: the at most k fastest
// schedules (Database::top_k's ranking) among the records measured on this machine; with
// AnyMachine, when this machine has none, among the others'. A schedule ranks by its
// records on the machine chosen only.
struct MachineRecords {
  std::vector<tuning_db::TuningRecord> best;
  bool this_machine = true;  // best was measured here (false: another machine's, AnyMachine)
  // ThisMachine only: a fingerprint of another machine with valid records of the
  // workload, when this one has none (what --any-machine would apply); none otherwise.
  std::optional<tuning_db::TargetInfo> elsewhere;
};
MachineRecords best_records(const tuning_db::Database& db, const tuning_db::WorkloadKey& workload,
                            const Target& target, int k, MachineMatch match);

// The schedule chosen for workload on target in a model (tuning_db/model_choice.h,
// search/confirm_in_model.h) that a build applies: the newest of those timed on this
// machine, unless the log holds a record of the workload measured on this machine after it
// (tuned again since: the choice is made again at the end of that tuning).
std::optional<tuning_db::ModelChoice> model_choice_for(const tuning_db::Database& db,
                                                      const tuning_db::WorkloadKey& workload, const Target& target);

class ApplyHistoryBest : public ops::ScheduleSource {
 public:
  // info may be nullptr (silent).
  ApplyHistoryBest(const tuning_db::Database& db, std::ostream* info, MachineMatch match = MachineMatch::ThisMachine);

  ops::SourcedSchedule schedule_for(const ops::Workload& workload, const ops::OpInstance& op,
                                    const Target& target) override;

  // What the last schedule_for used: "log", "template default" or "default schedule".
  const std::string& last_source() const { return last_source_; }
  // The record the last schedule_for applied (meaningful when last_source() == "log").
  const tuning_db::TuningRecord& last_record() const { return last_record_; }

 private:
  const tuning_db::Database& db_;
  std::ostream* info_;
  MachineMatch match_;
  std::set<std::string> reported_;
  std::string last_source_;
  tuning_db::TuningRecord last_record_;

  void report(const std::string& workload, const std::string& line);
  // The workloads of the log (with a record for target) that are workload's convolution
  // in another layout or block size.
  std::vector<std::string> other_layouts(const ops::Workload& workload, const Target& target) const;
};

// The schedule a record stands for: its config applied through the workload's template
// when it has one, else its trace replayed on op.func. ScheduleError / UserError when the
// record does not fit the workload.
Schedule schedule_from_record(const tuning_db::TuningRecord& record, const ops::Workload& workload,
                              const ops::OpInstance& op, const Target& target);

// The schedule to use without a log: the template's default config when a template serves
// the workload, else ops::schedule_cpu_default (ops::schedule_gpu_default on GPU targets).
Schedule default_schedule(const ops::Workload& workload, const ops::OpInstance& op, const Target& target);
// The same with the template's default config (null for an op without a template).
ops::SourcedSchedule default_sourced_schedule(const ops::Workload& workload, const ops::OpInstance& op,
                                              const Target& target);

}  // namespace temper::search
