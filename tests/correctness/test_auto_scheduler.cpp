// The auto-scheduler end to end: every sampled candidate, and every mutation of one,
// lowers, compiles and matches the reference (on the CPU; on GPU targets, on the OpenCL
// device, PoCL here, and through NVRTC to PTX); the bounded sampler gives up with a clear
// message; the tune loop logs auto-scheduled records that ApplyHistoryBest replays, next
// to a template's in the same log.
#include <gtest/gtest.h>

#include <random>

#include "compiler/codegen/build.h"
#include "compiler/codegen/gpu/device_program.h"
#include "compiler/codegen/gpu/nvrtc.h"
#include "compiler/lower/lower.h"
#include "compiler/runtime/gpu/gpu_device.h"
#include "compiler/ir/printer.h"
#include "compiler/ops/op_data.h"
#include "correctness/template_test_util.h"
#include "correctness/tune_test_util.h"
#include "cost_model/cost_model.h"
#include "search/apply_history_best.h"
#include "search/auto_explorer.h"
#include "search/mutation.h"
#include "search/tune.h"
#include "tuning_db/memory_database.h"

namespace temper::search {
namespace {

using schedule_space::AutoCandidate;
using schedule_space::AutoSpace;

const Target kTarget = tune_testing::host();

void expect_correct(const AutoSpace& space, const AutoCandidate& c, uint64_t seed) {
  BuildResult built = build({c.schedule.func()}, space.target());
  ops::OpData data = ops::make_op_data(space.op(), seed);
  Comparison cmp = ops::run_and_check(built.module->get_function(space.op().func.name), data);
  EXPECT_TRUE(cmp.ok()) << space.workload().to_string() << " from sketch '"
                        << space.sketches()[c.sketch].description << "': " << cmp.message << "\n"
                        << to_string(c.schedule.func());
}

class SampledCandidates : public ::testing::TestWithParam<const char*> {};

TEST_P(SampledCandidates, AndTheirMutationsMatchTheReference) {
  AutoSpace space(ops::Workload::parse(GetParam()), kTarget);
  std::mt19937_64 rng(11);
  std::vector<AutoCandidate> sampled = space.sample(6, rng, [](const AutoCandidate&) { return true; });
  ASSERT_EQ(sampled.size(), 6u);
  int mutated = 0;
  for (size_t i = 0; i < sampled.size(); ++i) {
    expect_correct(space, sampled[i], i);
    std::optional<schedule_space::Decisions> d = mutate(sampled[i], MutationWeights{}, rng);
    if (!d) continue;
    AutoCandidate m = space.instantiate(sampled[i].sketch, *d, rng());
    // A mutation changes decisions, never the sketch: its trace starts with the sketch's
    // and replays to the same program.
    EXPECT_TRUE(schedule_space::same_structure(space.sketches()[m.sketch].trace, m.schedule.trace()));
    EXPECT_EQ(to_string(m.schedule.trace().replay(space.op().func).func()), to_string(m.schedule.func()));
    expect_correct(space, m, 100 + i);
    ++mutated;
  }
  // Workloads without a decision to change (a lone elementwise op on one core) are fine.
  if (!space.sketches()[0].trace.instructions().empty()) {
    EXPECT_GT(mutated, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Workloads, SampledCandidates,
                         ::testing::Values("matmul:M=24,N=40,K=36", "dense:M=8,N=24,K=16,bias=1,act=relu",
                                           "batch_matmul:B=2,M=8,N=12,K=16,transpose_b=1",
                                           "conv2d:N=1,C=3,H=9,W=9,K=8,R=3,S=3,stride=2,pad=1",
                                           "fused_conv2d:N=1,C=4,H=8,W=8,K=8,R=3,S=3,pad=1,residual=1,act=relu",
                                           "depthwise_conv2d:N=1,C=8,H=10,W=10,R=3,S=3,pad=1",
                                           "softmax:shape=4x96,axis=1", "softmax:shape=32x16,axis=1",
                                           "layer_norm:shape=6x40,axis=1", "max_pool2d:N=1,C=4,H=9,W=9,kernel=3,stride=2,pad=1",
                                           "add:A=4x8x6,B=8x1", "transpose:shape=4x6x8,perm=2x0x1"),
                         schedule_space::template_testing::workload_test_name);

// GPU sketches: candidates within the device's limits (what the search keeps) run on the
// OpenCL device and match the reference, and compile through NVRTC for sm_80. PoCL
// compiles each program in about a second: two candidates per workload.
class GpuSampledCandidates : public ::testing::TestWithParam<const char*> {};

TEST_P(GpuSampledCandidates, MatchTheReferenceOnOpenClAndCompileForCuda) {
  const Target opencl = Target::parse("opencl");
  AutoSpace space(ops::Workload::parse(GetParam()), opencl);
  CandidateLimits limits = candidate_limits(opencl);
  std::mt19937_64 rng(5);
  std::vector<AutoCandidate> sampled =
      space.sample(2, rng, [&](const AutoCandidate& c) { return evaluate(c, limits).has_value(); });
  ASSERT_EQ(sampled.size(), 2u);
  std::string why;
  bool have_nvrtc = nvrtc_available(&why);
  AutoSpace cuda_space(ops::Workload::parse(GetParam()), Target::parse("cuda -arch=sm_80"));
  for (size_t i = 0; i < sampled.size(); ++i) {
    if (have_nvrtc) {
      // The same sketch and decisions for CUDA's limits (1024 threads where OpenCL's default is 256).
      AutoCandidate on_cuda = cuda_space.instantiate(sampled[i].sketch, sampled[i].decisions(), 0);
      std::string ptx = emit_device_code({lower(on_cuda.schedule.func())}, cuda_space.target(), "ptx");
      EXPECT_NE(ptx.find(".entry"), std::string::npos);
    }
    try {
      open_gpu_device(opencl);
    } catch (const UserError& e) {
      GTEST_SKIP() << "SKIP: no OpenCL device: " << e.what();
    }
    expect_correct(space, sampled[i], i);
  }
  if (!have_nvrtc) GTEST_SKIP() << "SKIP: PTX not checked: " << why;
}

INSTANTIATE_TEST_SUITE_P(Workloads, GpuSampledCandidates,
                         ::testing::Values("matmul:M=32,N=24,K=16", "dense:M=8,N=16,K=12,bias=1,act=relu",
                                           "conv2d:N=1,C=3,H=8,W=8,K=8,R=3,S=3,pad=1", "softmax:shape=6x40,axis=1"),
                         schedule_space::template_testing::workload_test_name);

TEST(BoundedSampling, AnImpossibleConstraintEndsWithAMessageNotAHang) {
  AutoSpace space(ops::Workload::parse("matmul:M=16,N=16,K=16"), kTarget);
  std::mt19937_64 rng(1);
  try {
    space.sample(8, rng, [](const AutoCandidate&) { return false; });
    FAIL() << "no error";
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("no valid candidate for matmul:M=16,N=16,K=16"), std::string::npos) << m;
    EXPECT_NE(m.find("in 128 random draws from 6 sketches"), std::string::npos) << m;
  }
}

TEST(AutoTune, LogsReplayableRecordsThatApplyHistoryBestBuilds) {
  AutoSpace space(ops::Workload::parse("matmul:M=32,N=32,K=32"), kTarget);
  tuning_db::MemoryDatabase db;
  measure::Builder builder;
  measure::Runner runner(tune_testing::quick_runner());
  TuneOptions options;
  options.trials = 12;
  options.batch_size = 4;
  {
    AutoExplorer explorer(space, cost_model::make_cost_model("xgb", {}), 3);
    TuneResult r = tune(explorer, builder, runner, db, options);
    EXPECT_EQ(r.trials_measured, 12);
    EXPECT_EQ(r.errors, 0);
    ASSERT_TRUE(r.best.has_value());
    EXPECT_TRUE(explorer.search().model().trained());
  }
  std::vector<tuning_db::TuningRecord> records = db.all_records();
  ASSERT_GT(records.size(), 12u) << "the best were measured again";
  std::set<std::string> programs;
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_TRUE(records[i].config.is_null());
    EXPECT_EQ(records[i].tuner, "xgb");  // the cost model that guided the search
    Schedule s = Trace::from_json(records[i].trace).replay(space.op().func);
    bool is_new = programs.insert(to_string(s.func())).second;
    EXPECT_EQ(is_new, i < 12) << "record " << i << ": a trial measured a program again, or a re-measurement a new one";
  }

  // A resumed job counts the log's records and measures only what is left.
  {
    AutoExplorer explorer(space, cost_model::make_cost_model("xgb", {}), 4);
    options.trials = 16;
    TuneResult r = tune(explorer, builder, runner, db, options);
    EXPECT_EQ(r.trials_resumed, 12);
    EXPECT_EQ(r.trials_measured, 4);
  }

  // The log's best, an auto-scheduled record, is what a build applies.
  ApplyHistoryBest best(db, nullptr);
  Schedule applied = best.schedule_for(space.workload(), space.op(), kTarget).schedule;
  EXPECT_EQ(best.last_source(), "log");
  EXPECT_TRUE(best.last_record().config.is_null());
  EXPECT_EQ(applied.trace().to_json(), best.last_record().trace);
  BuildResult built = build({applied.func()}, kTarget);
  ops::OpData data = ops::make_op_data(space.op(), 5);
  EXPECT_TRUE(ops::run_and_check(built.module->get_function(space.op().func.name), data).ok());
}

TEST(AutoTune, TemplateAndAutoRecordsShareALogAndTheFastestIsApplied) {
  ops::Workload w = ops::Workload::parse("matmul:M=32,N=32,K=32");
  tuning_db::MemoryDatabase db;
  measure::Builder builder;
  measure::Runner runner(tune_testing::quick_runner());
  TuneOptions options;
  options.trials = 6;
  options.batch_size = 3;
  std::unique_ptr<schedule_space::Task> task = schedule_space::Task::create(w, kTarget);
  std::unique_ptr<Tuner> tuner = make_tuner("random", *task, 1);
  TuneResult by_template = tune(*task, *tuner, builder, runner, db, options);
  AutoSpace space(w, kTarget);
  AutoExplorer explorer(space, cost_model::make_cost_model("xgb", {}), 1);
  TuneResult by_auto = tune(explorer, builder, runner, db, options);
  // Every proposal of both compiled in the builder's compile workers, rebuilt from its
  // recipe: a config's, a trace's.
  EXPECT_EQ(builder.forked_compiles(), 0);
  // Each explorer counts only its own records: neither resumed the other's.
  EXPECT_EQ(by_template.trials_measured, 6);
  EXPECT_EQ(by_auto.trials_resumed, 0);
  EXPECT_EQ(by_auto.trials_measured, 6);
  ASSERT_EQ(db.all_records().size(), 12u + by_template.confirmations + by_auto.confirmations);

  // Each job's best is its best schedule's median record; the build takes the better.
  ApplyHistoryBest best(db, nullptr);
  best.schedule_for(w, space.op(), kTarget);
  ASSERT_TRUE(by_template.best && by_auto.best);
  bool template_won = by_template.best->mean < by_auto.best->mean;
  EXPECT_EQ(best.last_record().config.is_null(), !template_won);
  EXPECT_EQ(best.last_record(), template_won ? *by_template.best : *by_auto.best);
}

}  // namespace
}  // namespace temper::search
