// Reductions spread over a thread block (lower_cross_thread_reduction): row reductions
// scheduled with the reduction loop bound to threadIdx.x match the reference on the
// OpenCL device (PoCL here) -- thread counts that divide the row, that leave a tail, that
// are no power of two, and two reduction axes fused -- and compile through NVRTC to PTX;
// the lowered kernel combines the threads' partials in shared memory between barriers;
// schedules the lowering cannot take are errors naming the block and the loop.
#include <gtest/gtest.h>

#include "compiler/codegen/build.h"
#include "compiler/codegen/gpu/nvrtc.h"
#include "compiler/ir/printer.h"
#include "compiler/ops/block_info.h"
#include "compiler/ops/op_data.h"
#include "compiler/ops/workload.h"
#include "compiler/runtime/gpu/gpu_device.h"
#include "schedule_space/auto_space.h"

namespace temper {
namespace {

Target opencl() {
  return Target::parse("opencl");
}

// Every block on the GPU: a reduction's spatial loops fused into blockIdx.x and its
// reduction loops fused and split by `threads`, the inner part bound to threadIdx.x; any
// other block's loops fused and split over blockIdx.x x threadIdx.x (64).
Schedule schedule_rows(const ops::OpInstance& op, int64_t threads) {
  Schedule s(op.func);
  for (const ops::BlockInfo& b : ops::collect_blocks(s.func())) {
    BlockRV block = s.get_block(b.name);
    std::vector<LoopRV> loops = s.get_loops(block);
    std::vector<LoopRV> spatial;
    std::vector<LoopRV> reduce;
    for (size_t i = 0; i < loops.size(); ++i) (b.loop_is_reduce[i] ? reduce : spatial).push_back(loops[i]);
    if (reduce.empty()) {
      std::vector<LoopRV> parts = s.split(s.fuse(loops), {std::nullopt, 64});
      s.bind(parts[0], "blockIdx.x");
      s.bind(parts[1], "threadIdx.x");
      continue;
    }
    s.bind(spatial.size() == 1 ? spatial[0] : s.fuse(spatial), "blockIdx.x");
    std::vector<LoopRV> parts = s.split(reduce.size() == 1 ? reduce[0] : s.fuse(reduce), {std::nullopt, threads});
    s.bind(parts[1], "threadIdx.x");
  }
  return s;
}

bool has_opencl_device(std::string* why) {
  try {
    open_gpu_device(opencl());
    return true;
  } catch (const UserError& e) {
    *why = e.what();
    return false;
  }
}

struct Case {
  const char* workload;
  int64_t threads;
};

class CrossThreadReduction : public ::testing::TestWithParam<Case> {};

TEST_P(CrossThreadReduction, MatchesTheReferenceOnOpenCl) {
  std::string why;
  if (!has_opencl_device(&why)) GTEST_SKIP() << "SKIP: no OpenCL device: " << why;
  ops::OpInstance op = ops::instantiate(ops::Workload::parse(GetParam().workload));
  Schedule s = schedule_rows(op, GetParam().threads);
  BuildResult built = build({s.func()}, opencl());
  ops::OpData data = ops::make_op_data(op, 7);
  Comparison cmp = ops::run_and_check(built.module->get_function(op.func.name), data);
  EXPECT_TRUE(cmp.ok()) << cmp.message << "\nscheduled:\n" << to_string(s.func());
}

TEST_P(CrossThreadReduction, CompilesToPtx) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "SKIP: " << why;
  ops::OpInstance op = ops::instantiate(ops::Workload::parse(GetParam().workload));
  Schedule s = schedule_rows(op, GetParam().threads);
  EXPECT_NE(emit({s.func()}, Target::parse("cuda -arch=sm_80"), "ptx").find("bar.sync"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Rows, CrossThreadReduction,
                         ::testing::Values(Case{"softmax:shape=3x256,axis=1", 256},  // one element per thread
                                           Case{"softmax:shape=4x100,axis=1", 32},   // a tail
                                           Case{"softmax:shape=2x5x96,axis=2", 48},  // no power of two
                                           Case{"layer_norm:shape=6x768,axis=1", 128},
                                           Case{"global_avg_pool2d:N=2,C=3,H=7,W=7", 16}),  // two axes fused
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = std::string(info.param.workload) + "_t" +
                                              std::to_string(info.param.threads);
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// A 96-element row over 48 threads: each thread adds two elements into its partial, then
// 48 -> 24 -> 12 -> 6 -> 3 -> 2 -> 1 partials, each step after a barrier, and every
// thread stores the row's result.
TEST(CrossThreadReductionLowering, PartialsCombineInSharedMemoryBetweenBarriers) {
  ops::OpInstance op = ops::instantiate(ops::Workload::parse("softmax:shape=2x96,axis=1"));
  std::string code = emit({schedule_rows(op, 48).func()}, opencl(), "opencl");
  EXPECT_NE(code.find("__local float softmax_max_threads[48]"), std::string::npos) << code;
  EXPECT_NE(code.find("float softmax_max_partial[1]"), std::string::npos) << code;
  for (const char* step : {"< 24)", "< 12)", "< 6)", "< 3)", "< 1)"}) {
    EXPECT_NE(code.find(step), std::string::npos) << step << "\n" << code;
  }
  size_t barriers = 0;
  for (size_t at = code.find("barrier("); at != std::string::npos; at = code.find("barrier(", at + 1)) ++barriers;
  // Per reduction (max and sum): after the partials are stored, after each of 6 steps.
  EXPECT_GE(barriers, 2u * 7u) << code;
}

// The auto-scheduler's cross-thread-reduction rule: softmax's two row reductions each
// either share their rows among threads or not, four sketches; a sample of each,
// instantiated for OpenCL, matches the reference.
TEST(CrossThreadReductionSketch, EverySoftmaxSketchMatchesTheReferenceOnOpenCl) {
  schedule_space::AutoSpace space(ops::Workload::parse("softmax:shape=5x200,axis=1"), opencl());
  std::vector<std::string> described;
  for (const schedule_space::Sketch& sk : space.sketches()) described.push_back(sk.description);
  ASSERT_EQ(described.size(), 4u);
  EXPECT_EQ(described[0], "reduce softmax_sum across threads, reduce softmax_max across threads");
  std::string why;
  if (!has_opencl_device(&why)) GTEST_SKIP() << "SKIP: no OpenCL device: " << why;
  for (int k = 0; k < 4; ++k) {
    schedule_space::AutoCandidate c = space.instantiate(k, {}, 11 + k);
    BuildResult built = build({c.schedule.func()}, opencl());
    ops::OpData data = ops::make_op_data(space.op(), k);
    Comparison cmp = ops::run_and_check(built.module->get_function(space.op().func.name), data);
    EXPECT_TRUE(cmp.ok()) << described[k] << ": " << cmp.message << "\n" << to_string(c.schedule.func());
  }
}

TEST(CrossThreadReductionErrors, OnlyThreadIdxTakesAReductionLoop) {
  ops::OpInstance op = ops::instantiate(ops::Workload::parse("softmax:shape=2x96,axis=1"));
  Schedule s(op.func);
  std::vector<LoopRV> loops = s.get_loops(s.get_block("softmax_max"));
  try {
    s.bind(loops.back(), "blockIdx.x");
    FAIL() << "binding a reduction loop to blockIdx.x was accepted";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("binds the reduction variable vrk of block softmax_max"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("or bind it to threadIdx.*"), std::string::npos) << e.what();
  }
}

// The pooling sum's loops: n, c, then 1-extent h and w, then the reduction's ry, rx.
struct PoolLoops {
  Schedule s;
  std::vector<LoopRV> loops;
};
PoolLoops pool_loops() {
  ops::OpInstance op = ops::instantiate(ops::Workload::parse("global_avg_pool2d:N=1,C=4,H=4,W=4"));
  Schedule s(op.func);
  std::vector<LoopRV> loops = s.get_loops(s.get_block(ops::collect_blocks(s.func())[0].name));
  EXPECT_EQ(loops.size(), 6u);
  return {s, loops};
}

TEST(CrossThreadReductionErrors, ARowInsideAnotherThreadAxisIsRefusedNamingTheLoop) {
  auto [s, loops] = pool_loops();
  s.bind(loops[0], "blockIdx.x");
  s.bind(loops[1], "threadIdx.y");
  s.bind(s.fuse({loops[4], loops[5]}), "threadIdx.x");
  try {
    build({s.func()}, opencl());
    FAIL() << "a reduction across threadIdx.x inside threadIdx.y was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("bound to threadIdx.y; a cross-thread reduction must be the only use"),
              std::string::npos)
        << e.what();
  }
}

TEST(CrossThreadReductionErrors, TwoThreadAxesOverOneReductionAreRefused) {
  auto [s, loops] = pool_loops();
  s.bind(s.fuse({loops[0], loops[1]}), "blockIdx.x");
  s.bind(loops[4], "threadIdx.y");
  s.bind(loops[5], "threadIdx.x");
  try {
    build({s.func()}, opencl());
    FAIL() << "a reduction over threadIdx.y and threadIdx.x was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("reduces across two thread axes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace temper
