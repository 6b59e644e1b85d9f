// The library examples in README.md, as written there: a scheduled matmul compiles and
// computes; a tuning job logs its trials and a build applies the best.
#include <gtest/gtest.h>

#include "compiler/codegen/build.h"
#include "compiler/schedule/schedule.h"
#include "compiler/te/te.h"
#include "search/apply_history_best.h"
#include "search/tune.h"
#include "tuning_db/sqlite_database.h"

namespace temper {
namespace {

TEST(ReadmeExample, ScheduledMatmulRuns) {
  te::Tensor A = te::placeholder({512, 512}, DataType::float32(), "A");
  te::Tensor B = te::placeholder({512, 512}, DataType::float32(), "B");
  IterVar k = te::reduce_axis({0, 512}, "k");
  te::Tensor C = te::compute({512, 512}, [&](Var i, Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");

  Schedule s(te::create_prim_func({A, B, C}, "matmul"));
  BlockRV c = s.get_block("C");
  std::vector<LoopRV> l = s.get_loops(c);
  std::vector<LoopRV> i = s.split(l[0], {std::nullopt, 8});
  s.parallel(i[0]);
  BuildResult built = build({s.func()}, Target::parse("llvm -mcpu=native"));
  PackedFunc f = built.module->get_function("matmul");

  NDArray a = NDArray::random({512, 512}, DataType::float32(), 1);
  NDArray b = NDArray::random({512, 512}, DataType::float32(), 2);
  NDArray out = NDArray::zeros({512, 512}, DataType::float32());
  f({&a, &b, &out});
  for (int64_t row : {0, 77, 511}) {
    for (int64_t col : {0, 300, 511}) {
      double expected = 0;
      for (int64_t x = 0; x < 512; ++x) expected += a.get(row * 512 + x) * b.get(x * 512 + col);
      EXPECT_NEAR(out.get(row * 512 + col), expected, 1e-3) << "C[" << row << ", " << col << "]";
    }
  }
}

TEST(ReadmeExample, TuningJobLogsTrialsAndABuildAppliesTheBest) {
  std::string path = ::testing::TempDir() + "/readme_tuning.db";
  std::remove(path.c_str());
  auto task = schedule_space::Task::create(ops::Workload::parse("matmul:M=512,N=512,K=512"),
                                           Target::parse("llvm -mcpu=native"));
  auto tuner = search::make_tuner("ga", *task, /*seed=*/0);
  tuning_db::SQLiteDatabase db(path);
  measure::Builder builder;
  measure::Runner runner;
  search::TuneOptions options;
  options.trials = 4;  // the README says 64; a test keeps it short
  search::TuneResult result = search::tune(*task, *tuner, builder, runner, db, options);
  EXPECT_EQ(result.trials_measured, 4);
  EXPECT_EQ(db.size(), 4 + result.confirmations);  // the trials and the best ones measured again
  ASSERT_TRUE(result.best.has_value());

  Schedule s = search::ApplyHistoryBest(db, nullptr).schedule_for(task->workload(), task->op(), task->target()).schedule;
  EXPECT_EQ(s.trace().to_json(), result.best->trace);
}

}  // namespace
}  // namespace temper
