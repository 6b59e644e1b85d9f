// Every operator, compiled through the LLVM backend under three schedules (the op's
// default, tiled + vectorized + parallel, and staged with compute_at / cache_write),
// gives its reference implementation's results.
#include <gtest/gtest.h>

#include "compiler/codegen/build.h"
#include "compiler/ir/printer.h"
#include "compiler/lower/lower.h"
#include "compiler/ops/cpu_schedules.h"
#include "compiler/ops/op_data.h"

namespace temper {
namespace {

// Small instances of every op, each chosen so the schedules have something to do
// (extents that split by vector widths, and some that leave tails).
const char* kWorkloads[] = {
    "matmul:M=64,N=96,K=40",
    "matmul:M=30,N=48,K=17,transpose_a=1,transpose_b=1",
    "batch_matmul:B=2,M=16,N=32,K=24",
    "dense:M=8,N=64,K=32,bias=1,act=relu",
    "dense:M=12,N=40,K=16",
    "conv2d:N=1,C=8,H=14,W=14,K=16,R=3,S=3,stride=1,pad=1",
    "conv2d:N=1,C=8,H=15,W=15,K=8,R=3,S=3,stride=2,pad=1,dilation=1,groups=2",
    "conv2d:N=1,C=4,H=12,W=12,K=8,R=3,S=3,pad=2,dilation=2,layout=NHWC",
    "depthwise_conv2d:N=1,C=16,H=16,W=16,R=3,S=3,stride=1,pad=1",
    "max_pool2d:N=1,C=8,H=16,W=16,kernel=3,stride=2,pad=1",
    "avg_pool2d:N=1,C=8,H=16,W=16,kernel=2,stride=2",
    "global_avg_pool2d:N=2,C=16,H=7,W=7",
    "add:A=4x32,B=32",
    "mul:A=2x3x16,B=2x1x16",
    "div:A=4x16,B=4x16",
    "relu:shape=8x64",
    "relu6:shape=8x64",
    "sigmoid:shape=4x48",
    "tanh:shape=4x48",
    "gelu:shape=4x48",
    "softmax:shape=8x64,axis=1",
    "layer_norm:shape=8x64,axis=1",
    "softmax:shape=2x3x20x48,axis=3",
    "softmax:shape=64x8,axis=0",
    "layer_norm:shape=6x40,axis=1",
    "layer_norm:shape=2x4x8x16,axis=2",
    "batch_norm:shape=2x16x8x8",
    "transpose:shape=16x32x4,perm=2x0x1",
    "scale_bias:shape=2x8x4x4,axis=1",
    "avg_pool2d:N=1,C=4,H=9,W=9,kernel=3,stride=2,pad=1",
    "reshape:shape=16x32,newshape=8x64",
    "pad:shape=3x16,before=1x2,after=2x0",
    "concat:shape=4x48,sizes=16x32,axis=1",
};

using ScheduleFn = Schedule (*)(const ops::OpInstance&);

struct Case {
  std::string workload;
  std::string schedule;
  ScheduleFn fn;
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const char* w : kWorkloads) {
    cases.push_back({w, "default", &ops::schedule_cpu_default});
    cases.push_back({w, "tiled", &ops::schedule_cpu_tiled});
    cases.push_back({w, "staged", &ops::schedule_cpu_staged});
  }
  return cases;
}

// Names the case in failure messages instead of GoogleTest's byte dump.
void PrintTo(const Case& c, std::ostream* os) { *os << c.workload << " under " << c.schedule; }

class OpsUnderSchedules : public ::testing::TestWithParam<Case> {};

TEST_P(OpsUnderSchedules, MatchesReference) {
  const Case& c = GetParam();
  ops::OpInstance op = ops::instantiate(ops::Workload::parse(c.workload));
  Schedule s = c.fn(op);
  BuildResult built = build({s.func()}, Target::parse("llvm -mcpu=native"));
  ops::OpData data = ops::make_op_data(op, /*seed=*/7);
  Comparison cmp = ops::run_and_check(built.module->get_function(op.func.name), data);
  EXPECT_TRUE(cmp.ok()) << c.workload << " under " << c.schedule << ": " << cmp.message << "\nscheduled:\n"
                        << s.func();
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.workload + "_" + info.param.schedule;
  for (char& ch : n) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return n + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpsUnderSchedules, ::testing::ValuesIn(all_cases()), case_name);

// The C backend, given the same scheduled programs, also gives the reference's results:
// the two backends agree on every op.
class OpsOnCBackend : public ::testing::TestWithParam<const char*> {};

TEST_P(OpsOnCBackend, MatchesReference) {
  ops::OpInstance op = ops::instantiate(ops::Workload::parse(GetParam()));
  Schedule s = ops::schedule_cpu_default(op);
  BuildResult built = build({s.func()}, Target::parse("c"));
  ops::OpData data = ops::make_op_data(op, /*seed=*/11);
  Comparison cmp = ops::run_and_check(built.module->get_function(op.func.name), data);
  EXPECT_TRUE(cmp.ok()) << GetParam() << " on the C backend: " << cmp.message;
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpsOnCBackend, ::testing::ValuesIn(kWorkloads),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string n = info.param;
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n + "_" + std::to_string(info.index);
                         });

// The expert GEMM's tile depends on the target's vector width (AVX-512: 8 x 32, AVX2:
// 6 x 16, SSE: 6 x 8). Each tiling is checked here whatever the host: scheduled for that
// target, compiled for the host.
TEST(OpsUnderSchedules, GemmTilingsOfEveryVectorWidthAreCorrect) {
  for (const char* target : {"llvm -mcpu=skylake-avx512", "llvm -mcpu=haswell", "llvm"}) {
    for (const char* w : {"matmul:M=45,N=70,K=33", "dense:M=20,N=48,K=16,bias=1,act=gelu",
                          "batch_matmul:B=2,M=17,N=40,K=9,transpose_b=1"}) {
      ops::OpInstance op = ops::instantiate(ops::Workload::parse(w));
      Schedule s = ops::schedule_cpu_default(op, Target::parse(target));
      BuildResult built = build({s.func()}, Target::parse("llvm -mcpu=native"));
      ops::OpData data = ops::make_op_data(op, /*seed=*/5);
      Comparison cmp = ops::run_and_check(built.module->get_function(op.func.name), data);
      EXPECT_TRUE(cmp.ok()) << w << " tiled for " << target << ": " << cmp.message;
    }
  }
  EXPECT_EQ(ops::GemmTiling::for_target(Target::parse("llvm -mcpu=skylake-avx512"), 1024, 1024).mr, 8);
  EXPECT_EQ(ops::GemmTiling::for_target(Target::parse("llvm -mcpu=skylake-avx512"), 1024, 1024).nr, 32);
  EXPECT_EQ(ops::GemmTiling::for_target(Target::parse("llvm -mcpu=haswell"), 1024, 1024).nr, 16);
  EXPECT_EQ(ops::GemmTiling::for_target(Target::parse("llvm -mcpu=haswell"), 1024, 40).nr, 8);
  // One row (a batch-1 classifier): two vectors' width and a tail, not one FMA chain.
  EXPECT_EQ(ops::GemmTiling::for_target(Target::parse("llvm -mcpu=skylake-avx512"), 1, 1000).nr, 32);
  EXPECT_EQ(ops::GemmTiling::for_target(Target::parse("llvm -mcpu=skylake-avx512"), 1, 1000).mr, 1);
  // Narrower than two vectors: one vector and a tail, as before.
  EXPECT_EQ(ops::GemmTiling::for_target(Target::parse("llvm"), 1, 5).nr, 4);
  EXPECT_EQ(ops::GemmTiling::for_target(Target::parse("llvm"), 4, 8).mr, 4);
}

// The three schedules really differ in structure: the tiled one vectorizes and
// parallelizes, the staged one moves blocks (compute_at) or caches (cache_write).
TEST(OpsUnderSchedules, SchedulesHaveTheirStructure) {
  ops::OpInstance mm = ops::instantiate(ops::Workload::parse("matmul:M=64,N=96,K=40"));
  std::string tiled = to_string(ops::schedule_cpu_tiled(mm).func());
  EXPECT_NE(tiled.find("parallel for"), std::string::npos) << tiled;
  EXPECT_NE(tiled.find("vectorized for"), std::string::npos) << tiled;
  std::string staged = to_string(ops::schedule_cpu_staged(mm).func());
  EXPECT_NE(staged.find("matmul_local"), std::string::npos) << staged;
  ops::OpInstance sm = ops::instantiate(ops::Workload::parse("softmax:shape=8x64,axis=1"));
  Schedule s = ops::schedule_cpu_staged(sm);
  nlohmann::json trace = s.trace().to_json()["instructions"];
  bool has_compute_at = false;
  for (const auto& inst : trace) has_compute_at |= inst["kind"] == "ComputeAt";
  EXPECT_TRUE(has_compute_at) << s.func();
}

// Softmax and layer norm over rows: one parallel loop over the rows, the reductions
// vectorized through per-lane partial results (rfactor), no buffer of the input's size.
TEST(OpsUnderSchedules, RowReductionsRunInOneParallelLoopOverTheRows) {
  for (const char* w : {"softmax:shape=12x128x128,axis=2", "layer_norm:shape=128x384,axis=1"}) {
    ops::OpInstance op = ops::instantiate(ops::Workload::parse(w));
    std::string lowered = to_string(lower(ops::schedule_cpu_default(op).func()));
    size_t first = lowered.find("parallel for");
    EXPECT_NE(first, std::string::npos) << w << lowered;
    EXPECT_EQ(lowered.find("parallel for", first + 1), std::string::npos) << w << lowered;
    EXPECT_NE(lowered.find("_rf[ramp(0, 1, 16)] = broadcast"), std::string::npos) << w << lowered;
    EXPECT_EQ(lowered.find("float32[196608]"), std::string::npos) << w << lowered;
  }
  // A softmax along the outer axis is no row reduction: one loop nest per stage.
  ops::OpInstance columns = ops::instantiate(ops::Workload::parse("softmax:shape=64x8,axis=0"));
  std::string lowered = to_string(lower(ops::schedule_cpu_default(columns).func()));
  EXPECT_EQ(lowered.find("_rf"), std::string::npos) << lowered;
}

// A function that returns without writing its output.
int32_t writes_nothing(const TemperTensor*, int32_t) { return 0; }

TEST(RunAndCheck, AnOutputElementTheFunctionNeverWritesIsAMismatch) {
  for (const char* dtype : {"float32", "int32"}) {
    ops::OpInstance op = ops::instantiate(ops::Workload::parse(str("relu:shape=4x8,dtype=", dtype)));
    ops::OpData data = ops::make_op_data(op, 1);
    // Negative inputs: every expected output is 0, which a zero-filled output would match.
    data.inputs[0].fill(-1.0);
    data.expected[0].fill(0.0);
    Comparison c = ops::run_and_check(PackedFunc("relu", writes_nothing, nullptr), data);
    EXPECT_EQ(c.mismatches, 32) << dtype << ": " << c.message;
  }
}

}  // namespace
}  // namespace temper
