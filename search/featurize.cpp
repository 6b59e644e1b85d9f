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

namespace {

// fn(i) for each i in [0, n), in parallel. An exception must not leave an OpenMP region:
// the first is kept and rethrown after all have finished.
template <typename Fn>
std::vector<std::vector<float>> parallel_features(int64_t n, Fn&& fn) {
  std::vector<std::vector<float>> out(static_cast<size_t>(n));
  std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic)
  for (int64_t i = 0; i < n; ++i) {
    try {
      out[i] = fn(i);
    } catch (...) {
#pragma omp critical(temper_featurize_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace

std::vector<std::vector<float>> config_features(const schedule_space::Task& task,
                                                const std::vector<schedule_space::Config>& configs) {
  return parallel_features(static_cast<int64_t>(configs.size()),
                           [&](int64_t i) { return config_features(task, configs[i]); });
}

std::vector<float> record_features(const ops::OpInstance& op, const schedule_space::Task* task,
                                   const tuning_db::TuningRecord& record) {
  if (!record.config.is_null()) {
    if (!task) return {};
    try {
      return config_features(*task, task->space().from_json(record.config));
    } catch (const UserError&) {
      return {};  // a config of another version of the template
    }
  }
  if (record.trace.is_null()) return {};
  PrimFunc lowered;
  try {
    lowered = lower(Trace::from_json(record.trace).replay(op.func).func());
  } catch (const UserError&) {
    return {};  // a trace of another version of the rules, or one that no longer lowers
  }
  return cost_model::candidate_features(lowered);
}

std::vector<std::vector<float>> record_features(const ops::OpInstance& op, const schedule_space::Task* task,
                                                const std::vector<const tuning_db::TuningRecord*>& records) {
  return parallel_features(static_cast<int64_t>(records.size()),
                           [&](int64_t i) { return record_features(op, task, *records[i]); });
}

std::string sample_group(const tuning_db::WorkloadKey& workload, const std::string& target) {
  return workload.workload + " @ " + target;
}

std::string sample_group(const schedule_space::Task& task) {
  return sample_group(tuning_db::WorkloadKey::from(task.workload()), task.target().to_string());
}

}  // namespace temper::search
