// The features of a task's config: the template applies it, the schedule is lowered, and
// cost_model::candidate_features reads the lowered IR. Nothing is compiled or run.
#pragma once

#include <string>
#include <vector>

#include "schedule_space/template.h"

namespace temper::search {

// Empty when the template cannot apply the config (it would be an instantiation error).
// Safe to call from several threads at once on the same task.
std::vector<float> config_features(const schedule_space::Task& task, const schedule_space::Config& config);

// config_features of each config, computed in parallel (OpenMP).
std::vector<std::vector<float>> config_features(const schedule_space::Task& task,
                                                const std::vector<schedule_space::Config>& configs);

// The sample group of a task's measurements: its workload key and target.
std::string sample_group(const schedule_space::Task& task);

}  // namespace temper::search
