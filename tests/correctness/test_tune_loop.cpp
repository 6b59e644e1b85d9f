// The tune loop with the real measurer on small workloads: what it logs, how it resumes,
// when it stops, and what ApplyHistoryBest then builds.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "compiler/codegen/build.h"
#include "compiler/ops/op_data.h"
#include "correctness/tune_test_util.h"
#include "search/apply_history_best.h"
#include "search/tune.h"
#include "tuning_db/memory_database.h"
#include "tuning_db/schedule_ranking.h"

namespace temper::search {
namespace {

using tune_testing::quick_runner;
const Target kTarget = tune_testing::host();

struct Job {
  std::unique_ptr<schedule_space::Task> task;
  measure::Builder builder;
  measure::Runner runner{quick_runner()};
  tuning_db::MemoryDatabase db;

  explicit Job(const std::string& workload) : task(schedule_space::Task::create(ops::Workload::parse(workload), kTarget)) {}

  TuneResult run(const std::string& tuner_name, TuneOptions options, const std::atomic<bool>* stop = nullptr) {
    std::unique_ptr<Tuner> tuner = make_tuner(tuner_name, *task, 1);
    return tune(*task, *tuner, builder, runner, db, options, {}, stop);
  }
  std::set<int64_t> logged_configs() {
    std::set<int64_t> configs;
    for (const tuning_db::TuningRecord& r : db.all_records()) {
      configs.insert(task->space().from_json(r.config).index());
    }
    return configs;
  }
};

TuneOptions trials(int n, int batch = 4) {
  TuneOptions o;
  o.trials = n;
  o.batch_size = batch;
  return o;
}

TEST(TuneLoop, LogsEveryTrialMeasuringTheDefaultConfigFirst) {
  Job job("matmul:M=48,N=32,K=16");
  TuneResult r = job.run("random", trials(10));
  EXPECT_EQ(r.trials_measured, 10);
  EXPECT_EQ(r.trials_resumed, 0);
  EXPECT_EQ(r.stop_reason, "trial budget reached");
  // The trials, then the confirmation's re-measurements of the best three.
  EXPECT_GE(r.confirmations, 6);
  ASSERT_EQ(job.db.size(), 10 + r.confirmations);
  std::vector<tuning_db::TuningRecord> records = job.db.all_records();
  EXPECT_EQ(records[0].config, job.task->default_config().to_json());
  EXPECT_EQ(job.logged_configs().size(), 10u) << "a trial measured a config again";
  for (const tuning_db::TuningRecord& rec : records) {
    EXPECT_TRUE(rec.is_valid()) << rec.error_message;
    EXPECT_EQ(rec.costs.size(), 2u);
    EXPECT_EQ(rec.target.target, kTarget.to_string());
    EXPECT_FALSE(rec.trace.is_null());
    EXPECT_EQ(rec.tuner, "random");  // re-measurements too: the job's tuner found them
  }
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(*r.best, job.db.top_k(r.best->workload, kTarget.to_string(), 1).at(0));
  EXPECT_EQ(r.best_curve.size(), 10u);
  EXPECT_TRUE(std::is_sorted(r.best_curve.begin(), r.best_curve.end()));
}

TEST(TuneLoop, AResumedJobSkipsWhatTheLogHasAndCountsItTowardsTheBudget) {
  Job job("matmul:M=32,N=24,K=8");
  job.run("ga", trials(6));
  TuneResult again = job.run("ga", trials(11));
  // The first job's re-measurements are not trials.
  EXPECT_EQ(again.trials_resumed, 6);
  EXPECT_EQ(again.trials_measured, 5);
  EXPECT_EQ(job.logged_configs().size(), 11u) << "the resumed job measured a config again";
  TuneResult done = job.run("ga", trials(11));
  EXPECT_EQ(done.trials_measured, 0);
  EXPECT_EQ(done.stop_reason, "trial budget reached");
}

TEST(TuneLoop, AStopRequestEndsTheJobAfterTheCurrentBatch) {
  Job job("matmul:M=16,N=16,K=16");
  std::atomic<bool> stop{true};
  TuneResult r = job.run("random", trials(50, 3), &stop);
  EXPECT_EQ(r.stop_reason, "stopped on request");
  EXPECT_EQ(r.trials_measured, 0);
  stop = false;
  std::atomic<bool> later{false};
  // Ask for the stop from the progress callback after the first batch.
  std::unique_ptr<Tuner> tuner = make_tuner("random", *job.task, 1);
  r = tune(*job.task, *tuner, job.builder, job.runner, job.db, trials(50, 3),
           [&](const TuneProgress& p) { later = p.trials_done > 0; }, &later);
  EXPECT_EQ(r.stop_reason, "stopped on request");
  EXPECT_EQ(r.trials_measured, 3);
  EXPECT_EQ(r.confirmations, 0) << "a stopped job is not kept waiting";
  EXPECT_EQ(job.db.size(), 3);
}

TEST(TuneLoop, TheBestSchedulesAreMeasuredAgainAndRankByTheirMedian) {
  Job job("matmul:M=40,N=24,K=16");
  TuneOptions o = trials(8);
  o.confirm_top = 2;
  o.confirm_measurements = 4;
  TuneResult r = job.run("random", o);
  EXPECT_GE(r.confirmations, 6);
  ASSERT_EQ(job.db.size(), 8 + r.confirmations);
  EXPECT_EQ(r.records.size(), static_cast<size_t>(job.db.size()));
  std::string target = kTarget.to_string();
  tuning_db::WorkloadKey key = tuning_db::WorkloadKey::from(job.task->workload());
  // The re-measurements repeat the trials' schedules exactly, and the best two now have
  // four times each: their ranks are their medians.
  std::vector<tuning_db::TuningRecord> records = job.db.records_for(key, target);
  std::set<std::string> trial_schedules;
  for (int i = 0; i < 8; ++i) trial_schedules.insert(tuning_db::schedule_identity(records[i]));
  for (size_t i = 8; i < records.size(); ++i) {
    EXPECT_TRUE(trial_schedules.count(tuning_db::schedule_identity(records[i]))) << "record " << i;
  }
  std::vector<tuning_db::RankedSchedule> top = tuning_db::rank_schedules(records, 2);
  ASSERT_EQ(top.size(), 2u);
  for (const tuning_db::RankedSchedule& t : top) {
    EXPECT_EQ(t.measurements, 4);
    int faster = 0;
    for (const tuning_db::TuningRecord& rec : records) {
      if (tuning_db::schedule_identity(rec) == tuning_db::schedule_identity(t.record)) faster += rec.mean < t.record.mean;
    }
    EXPECT_EQ(faster, 2) << "of four times, the slower middle one";
  }
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(*r.best, top[0].record);
  EXPECT_EQ(job.db.top_k(key, target, 1).at(0), top[0].record);

  // Resumed, the re-measurements count as nothing: the budget is spent, nothing is measured.
  TuneResult again = job.run("random", o);
  EXPECT_EQ(again.trials_resumed, 8);
  EXPECT_EQ(again.trials_measured, 0);
  EXPECT_EQ(job.logged_configs().size(), 8u);

  // Without confirmation the log holds the trials alone.
  Job plain("matmul:M=40,N=24,K=16");
  o.confirm_top = 0;
  TuneResult unconfirmed = plain.run("random", o);
  EXPECT_EQ(unconfirmed.confirmations, 0);
  EXPECT_EQ(plain.db.size(), 8);
}

TEST(TuneLoop, TheTimeBudgetEndsTheJob) {
  Job job("matmul:M=16,N=16,K=16");
  TuneOptions o = trials(100, 2);
  o.time_budget_s = 1e-3;
  TuneResult r = job.run("random", o);
  EXPECT_EQ(r.stop_reason, "time budget reached");
  EXPECT_EQ(r.trials_measured, 2);
}

TEST(TuneLoop, ASmallSpaceIsExhausted) {
  Job job("dense:M=1,N=8,K=4");
  int64_t space = job.task->space().size();
  ASSERT_LT(space, 200) << "pick a workload with a smaller space";
  TuneResult r = job.run("grid", trials(1000, 8));
  EXPECT_EQ(r.stop_reason, "the search space is exhausted");
  EXPECT_LE(r.trials_measured, space);
}

TEST(TuneLoop, BadBudgetsAreUserErrors) {
  Job job("matmul:M=16,N=16,K=16");
  EXPECT_THROW(job.run("random", trials(0)), UserError);
  EXPECT_THROW(job.run("random", trials(5, 0)), UserError);
}

TEST(ApplyHistoryBest, UsesTheTemplateDefaultWithOneInfoLineThenTheLogsBest) {
  Job job("matmul:M=40,N=32,K=24");
  const ops::Workload& w = job.task->workload();
  const ops::OpInstance& op = job.task->op();
  std::ostringstream info;
  {
    ApplyHistoryBest best(job.db, &info);
    best.schedule_for(w, op, kTarget);
    best.schedule_for(w, op, kTarget);
    EXPECT_EQ(best.last_source(), "template default");
  }
  std::string text = info.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_NE(text.find("no valid record"), std::string::npos) << text;

  TuneResult r = job.run("random", trials(6));
  ASSERT_TRUE(r.best.has_value());
  ApplyHistoryBest best(job.db, nullptr);
  Schedule s = best.schedule_for(w, op, kTarget).schedule;
  EXPECT_EQ(best.last_source(), "log");
  EXPECT_EQ(best.last_record().config, r.best->config);
  EXPECT_EQ(s.trace().to_json(), r.best->trace);
  // The tuned build computes what the reference does.
  BuildResult built = build({s.func()}, kTarget);
  ops::OpData data = ops::make_op_data(op, 5);
  Comparison c = ops::run_and_check(built.module->get_function(op.func.name), data);
  EXPECT_TRUE(c.ok()) << c.message;
}

TEST(ApplyHistoryBest, OpsWithoutATemplateGetTheirHandWrittenDefault) {
  tuning_db::MemoryDatabase db;
  ops::Workload w = ops::Workload::parse("relu:shape=8x16");
  ops::OpInstance op = ops::instantiate(w);
  ApplyHistoryBest best(db, nullptr);
  Schedule s = best.schedule_for(w, op, kTarget).schedule;
  EXPECT_EQ(best.last_source(), "default schedule");
  BuildResult built = build({s.func()}, kTarget);
  ops::OpData data = ops::make_op_data(op, 1);
  EXPECT_TRUE(ops::run_and_check(built.module->get_function(op.func.name), data).ok());
}

}  // namespace
}  // namespace temper::search
