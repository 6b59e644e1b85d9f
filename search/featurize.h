// The features of a task's config, or of a logged record: the template applies the config
// (or the record's trace is replayed), the schedule is lowered, and
// cost_model::candidate_features reads the lowered IR. Nothing is compiled or run.
#pragma once

#include <string>
#include <vector>

#include "schedule_space/template.h"
#include "tuning_db/record.h"

namespace temper::search {

// Empty when the template cannot apply the config (it would be an instantiation error) or
// lowering rejects the schedule (a UserError); an InternalError propagates. Safe to call
// from several threads at once on the same task.
std::vector<float> config_features(const schedule_space::Task& task, const schedule_space::Config& config);

// config_features of each config, computed in parallel (OpenMP). The first exception
// thrown by any of them is rethrown after all have finished.
std::vector<std::vector<float>> config_features(const schedule_space::Task& task,
                                                const std::vector<schedule_space::Config>& configs);

// The features of a logged record of `op`: its config re-applied through `task` (the
// op's template) when it has one, else its trace replayed on the op's function (an
// auto-scheduler record, or one of an op without a template: task may be null). Empty
// when neither applies any more (another version's config or trace) or the schedule does
// not lower. The second form featurizes records in parallel (OpenMP).
std::vector<float> record_features(const ops::OpInstance& op, const schedule_space::Task* task,
                                   const tuning_db::TuningRecord& record);
std::vector<std::vector<float>> record_features(const ops::OpInstance& op, const schedule_space::Task* task,
                                                const std::vector<const tuning_db::TuningRecord*>& records);

// The sample group of a task's measurements: "<workload string> @ <target string>", e.g.
// "matmul:M=64,N=64,K=64 @ llvm -mcpu=native". The second form builds the same string
// from a log record's workload key and target, so transfer samples group alike.
std::string sample_group(const schedule_space::Task& task);
std::string sample_group(const tuning_db::WorkloadKey& workload, const std::string& target);

}  // namespace temper::search
