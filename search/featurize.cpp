#include "search/featurize.h"

#include <exception>

#include "compiler/lower/lower.h"
#include "cost_model/features.h"
#include "tuning_db/record.h"

namespace temper::search {

// Thread safety: Task::apply reads the task (its op, workload, target, space) and builds a
// new schedule; IR nodes are immutable and shared by reference count; lowering and
// feature extraction keep their state on the stack. Nothing written is shared, which the
// unit test checks by comparing parallel and serial features.
std::vector<float> config_features(const schedule_space::Task& task, const schedule_space::Config& config) {
  PrimFunc lowered;
  try {
    lowered = lower(task.apply(config).func());
  } catch (const UserError&) {
    return {};  // ScheduleError included: the tune loop records an instantiation error
  }
  return cost_model::candidate_features(lowered);
}

std::vector<std::vector<float>> config_features(const schedule_space::Task& task,
                                                const std::vector<schedule_space::Config>& configs) {
  std::vector<std::vector<float>> out(configs.size());
  // An exception must not leave an OpenMP region: the first is kept and rethrown after it.
  std::exception_ptr failure;
  const int64_t n = static_cast<int64_t>(configs.size());
#pragma omp parallel for schedule(dynamic)
  for (int64_t i = 0; i < n; ++i) {
    try {
      out[i] = config_features(task, configs[i]);
    } catch (...) {
#pragma omp critical(temper_featurize_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return out;
}

std::string sample_group(const tuning_db::WorkloadKey& workload, const std::string& target) {
  return workload.workload + " @ " + target;
}

std::string sample_group(const schedule_space::Task& task) {
  return sample_group(tuning_db::WorkloadKey::from(task.workload()), task.target().to_string());
}

}  // namespace temper::search
