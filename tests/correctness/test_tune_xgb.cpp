// The model-guided tuner in the real tune loop: what it logs, and how a resumed job's
// model learns from the log before its first new batch.
#include <gtest/gtest.h>

#include <set>

#include "correctness/tune_test_util.h"
#include "search/model_tuner.h"
#include "search/tune.h"
#include "tuning_db/memory_database.h"

namespace temper::search {
namespace {

using tune_testing::quick_runner;
const Target kTarget = tune_testing::host();

TuneOptions trials(int n) {
  TuneOptions o;
  o.trials = n;
  o.batch_size = 8;
  return o;
}

struct Job {
  std::unique_ptr<schedule_space::Task> task =
      schedule_space::Task::create(ops::Workload::parse("matmul:M=128,N=128,K=128"), kTarget);
  measure::Builder builder;
  measure::Runner runner{quick_runner()};
  tuning_db::MemoryDatabase db;

  std::set<int64_t> logged_configs() {
    std::set<int64_t> configs;
    for (const tuning_db::TuningRecord& r : db.all_records()) configs.insert(task->space().from_json(r.config).index());
    return configs;
  }
};

TEST(TuneXgb, LogsEveryTrialOnceAndResumesWithATrainedModel) {
  Job job;
  std::unique_ptr<Tuner> first = make_tuner("xgb", *job.task, 1);
  TuneResult r = tune(*job.task, *first, job.builder, job.runner, job.db, trials(24));
  EXPECT_EQ(r.trials_measured, 24);
  EXPECT_EQ(r.stop_reason, "trial budget reached");
  ASSERT_EQ(job.db.size(), 24 + r.confirmations);
  EXPECT_EQ(job.logged_configs().size(), 24u) << "a trial measured a config again";
  ASSERT_TRUE(r.best.has_value());
  EXPECT_TRUE(r.best->is_valid()) << r.best->error_message;
  EXPECT_EQ(*r.best, job.db.top_k(r.best->workload, kTarget.to_string(), 1).at(0));
  const auto& model = dynamic_cast<ModelTuner&>(*first).model();
  EXPECT_TRUE(model.trained());
  EXPECT_EQ(model.num_samples(), 24) << "every measured trial is a sample";

  // Resume: the log's 24 trials reach the model before the first new batch is chosen
  // (tune reports progress once before it asks the tuner for anything); the
  // confirmation's re-measurements neither count as trials nor reach it.
  std::unique_ptr<Tuner> second = make_tuner("xgb", *job.task, 2);
  const auto& resumed_model = dynamic_cast<ModelTuner&>(*second).model();
  int64_t samples_before_first_batch = -1;
  bool trained_before_first_batch = false;
  auto on_progress = [&](const TuneProgress&) {
    if (samples_before_first_batch >= 0) return;
    samples_before_first_batch = resumed_model.num_samples();
    trained_before_first_batch = resumed_model.trained();
  };
  TuneResult again = tune(*job.task, *second, job.builder, job.runner, job.db, trials(40), on_progress);
  EXPECT_EQ(samples_before_first_batch, 24);
  EXPECT_TRUE(trained_before_first_batch);
  EXPECT_EQ(again.trials_resumed, 24);
  EXPECT_EQ(again.trials_measured, 16);
  EXPECT_EQ(resumed_model.num_samples(), 40);
  EXPECT_EQ(job.logged_configs().size(), 40u) << "the resumed job measured a config again";
  ASSERT_TRUE(again.best.has_value());
  EXPECT_LE(again.best->mean, r.best->mean);
}

}  // namespace
}  // namespace temper::search
