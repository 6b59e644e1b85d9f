// The blocked-layout convolutions (ops/nchwc.h) and their templates (conv2d_nchwc,
// depthwise_conv2d_nchwc, depthwise_pointwise_nchwc): the host packing makes a blocked conv compute exactly the plain
// conv, tail lanes included; and compiled code under the default, sampled and
// neighbouring configs matches the reference, with channel counts that do not fill a
// block.
#include <gtest/gtest.h>

#include "compiler/ir/functor.h"
#include "compiler/lower/lower.h"
#include "compiler/ops/nchwc.h"
#include "compiler/ops/reference.h"
#include "correctness/template_test_util.h"

namespace temper::schedule_space {
namespace {

using template_testing::expect_correct;
using template_testing::expect_sampled_configs_correct;
using template_testing::task_of;
using template_testing::workload_test_name;

// Odd channel counts (20 of a block of 16, 12 of 8), a stem reading plain NCHW
// (in_block=1), strides, asymmetric padding, dilation, N=2; grouped convs with two groups
// per block (24 channels of 16: a tail), and with groups of two blocks.
const char* kWorkloads[] = {
    "conv2d_nchwc:N=1,C=32,H=14,W=14,K=32,R=3,S=3,pad=1,in_block=16,out_block=16",
    "conv2d_nchwc:N=2,C=20,H=9,W=11,K=24,R=3,S=3,stride=2,pad=1,in_block=16,out_block=16",
    "conv2d_nchwc:N=1,C=3,H=17,W=17,K=16,R=7,S=7,stride=2,pad=3,in_block=1,out_block=16",
    "conv2d_nchwc:N=1,C=12,H=7,W=7,K=20,R=1,S=1,in_block=8,out_block=8",
    "conv2d_nchwc:N=1,C=16,H=12,W=10,K=8,R=3,S=2,stride=1x2,pad=1x0x0x1,dilation=2x1,in_block=8,out_block=8",
    "group_conv2d_nchwc:N=1,C=24,H=9,W=9,K=24,R=3,S=3,pad=1,in_block=16,out_block=16,groups=3",
    "group_conv2d_nchwc:N=1,C=32,H=8,W=8,K=32,R=3,S=3,stride=2,pad=1,in_block=8,out_block=8,groups=2",
    "group_conv2d_nchwc:N=1,C=16,H=7,W=7,K=32,R=1,S=1,in_block=8,out_block=8,groups=2",
    "depthwise_conv2d_nchwc:N=1,C=32,H=14,W=14,R=3,S=3,pad=1,block=16",
    "depthwise_conv2d_nchwc:N=2,C=24,H=15,W=15,R=3,S=3,stride=2,pad=1,block=16",
    "depthwise_conv2d_nchwc:N=1,C=12,H=9,W=11,R=5,S=5,pad=2,dilation=1,block=8",
    "depthwise_pointwise_nchwc:N=1,C=24,H=14,W=14,R=3,S=3,pad=1,K=20,block=16,act=relu6",
    "depthwise_pointwise_nchwc:N=2,C=12,H=15,W=13,R=3,S=3,stride=2,pad=1,K=8,block=8,act=relu",
    "depthwise_pointwise_nchwc:N=1,C=16,H=7,W=9,R=5,S=3,pad=2x1,K=40,block=8",
    "depthwise_pointwise_nchwc:N=1,C=8,H=1,W=9,R=1,S=3,pad=0x1,K=4,block=8,act=relu6",
};

class NchwcTemplateDefaults : public ::testing::TestWithParam<const char*> {};

TEST_P(NchwcTemplateDefaults, DefaultConfigIsValidAndCorrect) {
  std::unique_ptr<Task> task = task_of(GetParam());
  Config c = task->default_config();
  EXPECT_TRUE(task->space().is_valid(c)) << c.to_string() << ": " << task->space().why_invalid(c);
  expect_correct(*task, c);
}

INSTANTIATE_TEST_SUITE_P(Shapes, NchwcTemplateDefaults, ::testing::ValuesIn(kWorkloads), workload_test_name);

// Below AVX-512 a block of 16 lanes takes two of 16 registers: the defaults' tiles shrink
// to fit, whatever machine runs the test (a default that breaks its space's constraint
// stops a tuning job on an AVX2 machine).
TEST(NchwcTemplate, EveryDefaultFitsSixteenRegistersOnAvx2) {
  Target avx2 = Target::parse("llvm -mcpu=haswell");
  for (const char* w : kWorkloads) {
    std::unique_ptr<Task> task = task_of(w, avx2);
    Config c = task->default_config();
    EXPECT_TRUE(task->space().is_valid(c)) << w << ": " << c.to_string() << ": " << task->space().why_invalid(c);
  }
  // 14 columns: 7 would take 7 x 2 accumulators + 2 weight vectors + a broadcast = 17.
  EXPECT_EQ(task_of(kWorkloads[0], avx2)->default_config().knob_int("tile_q"), 2);
}

TEST(NchwcTemplate, SampledConfigsAreCorrect) {
  std::mt19937_64 rng(7);
  for (const char* w : kWorkloads) expect_sampled_configs_correct(*task_of(w), rng, 2);
}

TEST(NchwcTemplate, EveryNeighbourOfTheDefaultIsCorrect) {
  for (const char* w : {"conv2d_nchwc:N=1,C=20,H=8,W=8,K=40,R=3,S=3,pad=1,in_block=8,out_block=8",
                        "depthwise_conv2d_nchwc:N=1,C=12,H=8,W=8,R=3,S=3,stride=2,pad=1,block=8",
                        "depthwise_pointwise_nchwc:N=1,C=20,H=8,W=8,R=3,S=3,stride=2,pad=1,K=12,block=8,act=relu6"}) {
    std::unique_ptr<Task> task = task_of(w);
    std::vector<Config> neighbours = task->space().neighbours(task->default_config());
    EXPECT_GE(neighbours.size(), 4u) << w;
    for (const Config& c : neighbours) expect_correct(*task, c);
  }
}

TEST(NchwcTemplate, DefaultTileOnAvx512) {
  std::unique_ptr<Task> task = task_of("conv2d_nchwc:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1,in_block=16,out_block=16",
                                       Target::parse("llvm -mcpu=skylake-avx512"));
  EXPECT_EQ(task->tmpl().name, "conv2d_nchwc.cpu");
  nlohmann::json knobs = task->default_config().to_json()["knobs"];
  EXPECT_EQ(knobs["tile_kb"], 2);  // 7 columns x 2 blocks: 14 of 32 zmm accumulate
  EXPECT_EQ(knobs["tile_q"], 7);
}

TEST(NchwcTemplate, PointwiseDefaultTileOnAvx512) {
  Target avx512 = Target::parse("llvm -mcpu=skylake-avx512");
  // One block of channels by up to 14 columns, rows outermost (a thread then reads the
  // rows it wrote in the kernel before); on a 7x7 map the input block's lanes unrolled.
  nlohmann::json wide = task_of("conv2d_nchwc:N=1,C=512,H=28,W=28,K=128,R=1,S=1,in_block=16,out_block=16", avx512)
                            ->default_config()
                            .to_json()["knobs"];
  EXPECT_EQ(wide["tile_kb"], 1);
  EXPECT_EQ(wide["tile_q"], 14);
  EXPECT_EQ(wide["outer_order"], "p_k");
  EXPECT_EQ(wide["unroll_ci"], false);
  nlohmann::json small = task_of("conv2d_nchwc:N=1,C=960,H=7,W=7,K=160,R=1,S=1,in_block=16,out_block=16", avx512)
                             ->default_config()
                             .to_json()["knobs"];
  EXPECT_EQ(small["tile_q"], 7);
  EXPECT_EQ(small["outer_order"], "p_k");
  EXPECT_EQ(small["unroll_ci"], true);
  // A strided projection keeps the two-block tile of the other convs.
  nlohmann::json strided =
      task_of("conv2d_nchwc:N=1,C=256,H=14,W=14,K=512,R=1,S=1,stride=2,in_block=16,out_block=16", avx512)
          ->default_config()
          .to_json()["knobs"];
  EXPECT_EQ(strided["tile_kb"], 2);
}

// A 1x1 conv whose weight outweighs its input (a classifier on a 3x3 map) splits its
// threads by channel blocks, each reading half the weight; on 3 columns it takes blocks
// until 8 accumulators hide the FMA latency; a squeeze-excite conv on a 1x1 map as well. A
// 3x3 conv keeps rows first, and so does a 1x1 conv on a large map.
TEST(NchwcTemplate, SmallMapDefaultsOnAvx512) {
  Target avx512 = Target::parse("llvm -mcpu=skylake-avx512");
  auto knobs = [&](const std::string& w) { return task_of(w, avx512)->default_config().to_json()["knobs"]; };
  nlohmann::json classifier = knobs("conv2d_nchwc:N=1,C=512,H=3,W=3,K=1008,R=1,S=1,in_block=16,out_block=16");
  EXPECT_EQ(classifier["outer_order"], "k_p");
  EXPECT_EQ(classifier["tile_q"], 3);
  EXPECT_EQ(classifier["tile_kb"], 3);  // 63 blocks: 3 x 3 accumulators
  nlohmann::json excite = knobs("conv2d_nchwc:N=1,C=104,H=1,W=1,K=64,R=1,S=1,in_block=16,out_block=16");
  EXPECT_EQ(excite["tile_q"], 1);
  EXPECT_EQ(excite["tile_kb"], 4);  // at most four vectors of channels
  EXPECT_EQ(knobs("conv2d_nchwc:N=1,C=512,H=7,W=7,K=512,R=3,S=3,pad=1,in_block=16,out_block=16")["outer_order"], "p_k");
  EXPECT_EQ(knobs("conv2d_nchwc:N=1,C=64,H=56,W=56,K=256,R=1,S=1,in_block=16,out_block=16")["outer_order"], "p_k");
  // The padding inline on maps of 7x7 and up; below, a root stage (kMinInlinePadMap).
  EXPECT_EQ(knobs("conv2d_nchwc:N=1,C=256,H=8,W=8,K=256,R=3,S=3,pad=1,in_block=16,out_block=16")["pad"], "inline");
  EXPECT_EQ(knobs("conv2d_nchwc:N=1,C=256,H=4,W=4,K=256,R=3,S=3,pad=1,in_block=16,out_block=16")["pad"], "root");
  EXPECT_EQ(knobs("conv2d_nchwc:N=1,C=256,H=14,W=14,K=512,R=3,S=3,stride=2,pad=1,in_block=16,out_block=16")["pad"],
            "inline");
}

// The default reads the padding inline, and lowering skips the taps that fall in it: no
// select is left, one guard per window row (the rows' taps depend on the parallel
// loop), and of the 7 columns x 3 window columns of each row's taps the 2 padded ones
// are gone from the unrolled tile -- 19 of 21 -- while the kernel stays correct. The
// parallel loop over the rows stays one loop (partitioned, its border rows would run on
// one thread).
TEST(NchwcTemplate, PaddedTapsAreSkipped) {
  const char* w = "conv2d_nchwc:N=1,C=32,H=7,W=7,K=32,R=3,S=3,pad=1,in_block=16,out_block=16";
  std::unique_ptr<Task> task = task_of(w, Target::parse("llvm -mcpu=skylake-avx512"));
  Config c = task->default_config();
  EXPECT_EQ(c.knob_string("pad"), "inline");
  PrimFunc f = lower(task->apply(c).func());
  int selects = 0, guards = 0, fmas = 0;
  post_order_visit(f.body, [&](const Node* n) {
    selects += n->kind == NodeKind::Select;
    guards += n->kind == NodeKind::IfThenElse;
    fmas += n->kind == NodeKind::Mul && static_cast<const ExprNode*>(n)->dtype.is_float();
  });
  EXPECT_EQ(selects, 0) << f;
  EXPECT_EQ(guards, 1) << f;
  // The input lanes' loop (rci) is not unrolled: one step's taps, 19 per block of the tile.
  EXPECT_FALSE(c["unroll_ci"].get<bool>());
  EXPECT_EQ(fmas, 19 * c.knob_int("tile_kb")) << f;
  expect_correct(*task, c);
}

// 24 input channels in blocks of 16: the last block's 8 tail lanes are not reduced over.
// Lowered, the input lanes' loop runs 16 steps for the full block and 8 for the last (or,
// unrolled, 24 multiply-adds per output vector instead of 32), with no guard or select
// left; run on an input whose tail lanes hold NaN, the kernel gives the plain conv's
// output (a kernel that read them would give NaN).
TEST(NchwcTemplate, InputTailLanesAreNotReduced) {
  const char* w = "conv2d_nchwc:N=1,C=24,H=6,W=7,K=32,R=1,S=1,in_block=16,out_block=16";
  std::unique_ptr<Task> task = task_of(w, Target::parse("llvm -mcpu=skylake-avx512"));
  for (bool unroll : {false, true}) {
    nlohmann::json j = task->default_config().to_json();
    j["knobs"]["unroll_ci"] = unroll;
    Config c = task->space().from_json(j);
    PrimFunc f = lower(task->apply(c).func());
    std::vector<int64_t> lane_loops;
    int selects = 0, guards = 0, fmas = 0;
    post_order_visit(f.body, [&](const Node* n) {
      selects += n->kind == NodeKind::Select;
      guards += n->kind == NodeKind::IfThenElse;
      fmas += n->kind == NodeKind::Mul && static_cast<const ExprNode*>(n)->dtype.is_float();
      if (n->kind != NodeKind::For) return;
      auto* loop = static_cast<const ForNode*>(n);
      if (auto* extent = loop->extent.as<IntImmNode>(); extent && loop->loop_var->name == "rci") {
        lane_loops.push_back(extent->value);
      }
    });
    EXPECT_EQ(selects, 0) << f;
    EXPECT_EQ(guards, 0) << f;
    int64_t tile = c.knob_int("tile_q") * c.knob_int("tile_kb");
    if (unroll) {
      EXPECT_TRUE(lane_loops.empty()) << f;
      EXPECT_EQ(fmas, 24 * tile) << f;
    } else {
      EXPECT_EQ(lane_loops, (std::vector<int64_t>{16, 8})) << f;
      EXPECT_EQ(fmas, 2 * tile) << f;
    }
  }

  std::unique_ptr<Task> host_task = task_of(w);
  BuildResult built = build({host_task->apply(host_task->default_config()).func()}, template_testing::host());
  NDArray x = NDArray::random({1, 24, 6, 7}, DataType::float32(), 3);
  NDArray weight = NDArray::random({32, 24, 1, 1}, DataType::float32(), 4);
  NDArray plain = NDArray::zeros({1, 32, 6, 7}, DataType::float32());
  ops::reference::conv2d(x.data_as<float>(), weight.data_as<float>(), plain.data_as<float>(), x.shape(),
                         weight.shape(), ops::Window2d{}, 1, ops::Layout::NCHW);
  NDArray blocked_x = ops::block_channels(x, 16);
  float* lanes = blocked_x.data_as<float>();
  for (int64_t pixel = 0; pixel < 42; ++pixel) {
    for (int64_t lane = 8; lane < 16; ++lane) lanes[(42 + pixel) * 16 + lane] = std::nanf("");
  }
  NDArray packed = ops::pack_conv_weight_nchwc(weight, 16, 16);
  NDArray y = NDArray::zeros({1, 2, 6, 7, 16}, DataType::float32());
  built.module->get_function(host_task->op().func.name)(std::vector<NDArray*>{&blocked_x, &packed, &y});
  Comparison cmp = compare(ops::unblock_channels(y, 32), plain, 1e-4, 1e-4);
  EXPECT_TRUE(cmp.ok()) << cmp.message;
}

// The plain conv of x and w, blocked, equals the blocked conv of the packed arrays: the
// packing puts every weight where the blocked kernel reads it, and the zero tails keep
// the padded channels out of the real ones.
void expect_packing_matches_plain(int64_t C, int64_t K, int64_t block, bool depthwise, int64_t groups = 1) {
  int64_t H = 9, W = 8, R = 3, S = 3;
  ops::Window2d window;
  window.padding = ops::Padding2d::uniform(1);
  NDArray x = NDArray::random({1, C, H, W}, DataType::float32(), 11);
  NDArray w = NDArray::random(depthwise ? std::vector<int64_t>{C, 1, R, S} : std::vector<int64_t>{K, C / groups, R, S},
                              DataType::float32(), 12);
  int64_t out_channels = depthwise ? C : K;
  NDArray plain = NDArray::zeros({1, out_channels, H, W}, DataType::float32());
  if (depthwise) {
    ops::reference::depthwise_conv2d(x.data_as<float>(), w.data_as<float>(), plain.data_as<float>(), x.shape(),
                                     w.shape(), window, ops::Layout::NCHW);
  } else {
    ops::reference::conv2d(x.data_as<float>(), w.data_as<float>(), plain.data_as<float>(), x.shape(), w.shape(), window,
                           groups, ops::Layout::NCHW);
  }
  std::string workload =
      depthwise ? str("depthwise_conv2d_nchwc:N=1,C=", C, ",H=", H, ",W=", W, ",R=3,S=3,pad=1,block=", block)
                : str(groups > 1 ? "group_conv2d_nchwc" : "conv2d_nchwc", ":N=1,C=", C, ",H=", H, ",W=", W, ",K=", K,
                      ",R=3,S=3,pad=1,in_block=", block, ",out_block=", block,
                      groups > 1 ? str(",groups=", groups) : std::string());
  std::unique_ptr<Task> task = task_of(workload);
  BuildResult built = build({task->apply(task->default_config()).func()}, template_testing::host());
  NDArray blocked_x = ops::block_channels(x, block);
  NDArray packed =
      depthwise ? ops::pack_depthwise_weight_nchwc(w, block) : ops::pack_conv_weight_nchwc(w, block, block, groups);
  NDArray blocked_y = ops::block_channels(plain, block);
  NDArray y = NDArray::random(blocked_y.shape(), DataType::float32(), 13);  // overwritten in full
  built.module->get_function(task->op().func.name)(std::vector<NDArray*>{&blocked_x, &packed, &y});
  Comparison cmp = compare(y, blocked_y, 1e-4, 1e-4);
  EXPECT_TRUE(cmp.ok()) << workload << ": " << cmp.message;
  // Tail lanes are exactly 0 in the output too: what the next conv's zero weights expect.
  NDArray back = ops::unblock_channels(y, out_channels);
  EXPECT_TRUE(compare(back, plain, 1e-4, 1e-4).ok());
}

TEST(NchwcPacking, BlockedConvOfPackedArraysIsThePlainConv) {
  expect_packing_matches_plain(20, 24, 16, false);
  expect_packing_matches_plain(16, 8, 8, false);
  expect_packing_matches_plain(12, 12, 8, true);
}

// Grouped: two groups per block (the packed weight zero between them), a tail of 8 lanes
// past 24 channels, groups of whole blocks, more output than input channels per group.
TEST(NchwcPacking, GroupedConvOfPackedArraysIsThePlainGroupedConv) {
  expect_packing_matches_plain(24, 24, 16, false, 3);
  expect_packing_matches_plain(24, 24, 8, false, 6);
  expect_packing_matches_plain(32, 32, 8, false, 2);
  expect_packing_matches_plain(16, 32, 8, false, 2);
}

TEST(NchwcPacking, BlockGroupsOfGroupedConvs) {
  EXPECT_EQ(ops::nchwc_block_groups(64, 64, 1, 16, 16), 1);
  EXPECT_EQ(ops::nchwc_block_groups(64, 64, 2, 16, 16), 2);     // a group is two blocks
  EXPECT_EQ(ops::nchwc_block_groups(104, 104, 13, 16, 16), 7);  // two groups of 8 per block, a tail
  EXPECT_EQ(ops::nchwc_block_groups(24, 24, 2, 8, 8), 0);       // groups of 12 straddle blocks of 8
  EXPECT_EQ(ops::nchwc_block_groups(16, 32, 4, 8, 8), 0);       // 4 in, 8 out per group: blocks differ
  EXPECT_EQ(ops::nchwc_block_groups(24, 20, 3, 8, 8), 0);       // K not divisible
}

TEST(NchwcPacking, ConversionsRoundTripAndZeroTheTail) {
  NDArray x = NDArray::random({2, 5, 3, 4}, DataType::float32(), 1);
  NDArray blocked = ops::block_channels(x, 4);
  ASSERT_EQ(blocked.shape(), (std::vector<int64_t>{2, 2, 3, 4, 4}));
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t i = 0; i < 12; ++i) {
      for (int64_t lane = 1; lane < 4; ++lane) {
        EXPECT_EQ(blocked.get(((n * 2 + 1) * 12 + i) * 4 + lane), 0.0);  // channels 5..7
      }
    }
  }
  EXPECT_EQ(blocked.get(((1 * 2 + 1) * 12 + 7) * 4 + 0), x.get((1 * 5 + 4) * 12 + 7));  // n=1, c=4, pixel 7
  EXPECT_TRUE(compare(ops::unblock_channels(blocked, 5), x, 0, 0).ok());
}

}  // namespace
}  // namespace temper::schedule_space
