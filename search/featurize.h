// The features of a task's config: the template applies it, the schedule is lowered, and
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

// The sample group of a task's measurements: "<workload string> @ <target string>", e.g.
// "matmul:M=64,N=64,K=64 @ llvm -mcpu=native". The second form builds the same string
// from a log record's workload key and target, so transfer samples group alike.
std::string sample_group(const schedule_space::Task& task);
std::string sample_group(const tuning_db::WorkloadKey& workload, const std::string& target);

}  // namespace temper::search
