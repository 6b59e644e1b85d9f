// The convolution and pooling templates (conv2d, depthwise_conv2d, max_pool2d,
// avg_pool2d): their spaces and default rules, and compiled code under the default,
// sampled and neighbouring configs against the reference implementations.
#include <gtest/gtest.h>

#include "correctness/template_test_util.h"

namespace temper::schedule_space {
namespace {

using nlohmann::json;
using template_testing::expect_config_json_replays_the_same_schedule;
using template_testing::expect_correct;
using template_testing::expect_sampled_configs_correct;
using template_testing::task_of;
using template_testing::workload_test_name;

Target avx2() {
  return Target::parse("llvm -mcpu=haswell");
}

// The config with one knob changed.
Config with_knob(const Task& task, const Config& c, const std::string& knob, const json& value) {
  json j = c.to_json();
  j["knobs"][knob] = value;
  return task.space().from_json(j);
}

// Stride 2, padding 0/1/2 and asymmetric, odd and prime sizes, N=2, 1x1 and 5x5
// kernels, dilation, a channel multiplier, int32.
const char* kWorkloads[] = {
    "conv2d:N=1,C=16,H=14,W=14,K=32,R=3,S=3,stride=1,pad=1",
    "conv2d:N=2,C=8,H=15,W=13,K=24,R=3,S=3,stride=2,pad=0",
    "conv2d:N=1,C=3,H=17,W=17,K=16,R=5,S=5,stride=2,pad=2",
    "conv2d:N=1,C=12,H=7,W=7,K=20,R=1,S=1",
    "conv2d:N=1,C=4,H=12,W=11,K=8,R=3,S=3,pad=2,dilation=2",
    "conv2d:N=1,C=5,H=9,W=9,K=13,R=3,S=2,stride=1x2,pad=1x0x0x1",
    "conv2d:N=1,C=8,H=10,W=10,K=16,R=3,S=3,pad=1,dtype=int32",
    "depthwise_conv2d:N=1,C=16,H=14,W=14,R=3,S=3,stride=1,pad=1",
    "depthwise_conv2d:N=2,C=8,H=15,W=15,R=3,S=3,stride=2,pad=1,multiplier=2",
    "depthwise_conv2d:N=1,C=6,H=9,W=11,R=5,S=5,pad=0",
    "max_pool2d:N=1,C=8,H=16,W=16,kernel=3,stride=2,pad=1",
    "max_pool2d:N=2,C=4,H=9,W=9,kernel=2,stride=2",
    "max_pool2d:N=1,C=3,H=13,W=13,kernel=3,stride=1,pad=1,dtype=int32",
    "avg_pool2d:N=1,C=8,H=16,W=16,kernel=2,stride=2",
    "avg_pool2d:N=2,C=4,H=9,W=9,kernel=3,stride=2,pad=1",
    "avg_pool2d:N=1,C=5,H=11,W=11,kernel=3,stride=1,pad=1,count_include_pad=1",
};

class ConvTemplateDefaults : public ::testing::TestWithParam<const char*> {};

TEST_P(ConvTemplateDefaults, DefaultConfigIsValidAndCorrect) {
  std::unique_ptr<Task> task = task_of(GetParam());
  Config c = task->default_config();
  EXPECT_TRUE(task->space().is_valid(c)) << c.to_string() << ": " << task->space().why_invalid(c);
  expect_correct(*task, c);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvTemplateDefaults, ::testing::ValuesIn(kWorkloads), workload_test_name);

TEST(ConvTemplate, Conv2dSpaceAndDefaultOnAvx2) {
  std::unique_ptr<Task> task = task_of("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1", avx2());
  EXPECT_EQ(task->tmpl().name, "conv2d.cpu");
  const ConfigSpace& space = task->space();
  std::vector<std::string> names;
  for (const Knob& k : space.knobs()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"layout", "tile_k", "tile_q", "outer_order", "unroll_rx", "pad"}));
  EXPECT_EQ(space.knob("tile_k").choices, (std::vector<json>{1, 2, 4, 8, 16, 32}));
  EXPECT_EQ(space.knob("tile_q").choices, (std::vector<json>{1, 2, 4, 7, 8, 14}));
  EXPECT_EQ(
      task->default_config().to_json()["knobs"],
      json::parse(
          R"({"layout": "NCHWc", "tile_k": 8, "tile_q": 7, "outer_order": "k_p", "unroll_rx": false, "pad": "root"})"));

  // 16 ymm registers. NCHWc: 7 columns x 2 vectors of channels = 14 accumulators + 2
  // weight vectors + 1 broadcast = 17. NCHW: 8 channels x 2 vectors of columns = 16 + 3.
  Config nchwc_big = with_knob(*task, with_knob(*task, task->default_config(), "tile_k", 16), "tile_q", 7);
  EXPECT_EQ(space.why_invalid(nchwc_big),
            "the tile's accumulators, one step's vector operand and a broadcast fit the 16 vector registers");
  Config nchw_big = with_knob(*task, with_knob(*task, nchwc_big, "layout", "NCHW"), "tile_q", 14);
  EXPECT_FALSE(space.is_valid(with_knob(*task, nchw_big, "tile_k", 8)));
  EXPECT_TRUE(space.is_valid(with_knob(*task, nchw_big, "tile_k", 4)));
}

TEST(ConvTemplate, Conv2dDefaultTileFollowsTheShape) {
  // ResNet-18's last 3x3 layer: 7 columns, one vector of channels.
  EXPECT_EQ(
      task_of("conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,pad=1", avx2())->default_config().to_json()["knobs"],
      json::parse(
          R"({"layout": "NCHWc", "tile_k": 8, "tile_q": 7, "outer_order": "k_p", "unroll_rx": false, "pad": "root"})"));
  // 13 columns (prime): few per tile, so two vectors of channels.
  EXPECT_EQ(
      task_of("conv2d:N=1,C=8,H=13,W=13,K=32,R=3,S=3,pad=1", avx2())->default_config().to_json()["knobs"],
      json::parse(
          R"({"layout": "NCHWc", "tile_k": 16, "tile_q": 1, "outer_order": "k_p", "unroll_rx": false, "pad": "root"})"));
  // Fewer output channels than a vector: the tile takes them all.
  EXPECT_EQ(task_of("conv2d:N=1,C=8,H=12,W=12,K=6,R=3,S=3,pad=1", avx2())->default_config().knob_int("tile_k"), 6);
  // AVX-512: 16 lanes, and 32 registers for two vectors of channels by 7 columns.
  std::unique_ptr<Task> avx512 =
      task_of("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1", Target::parse("llvm -mcpu=skylake-avx512"));
  EXPECT_EQ(avx512->default_config().knob_int("tile_k"), 32);
  EXPECT_EQ(avx512->default_config().knob_int("tile_q"), 7);
  // A 1x1 conv with few channels on one side writes NCHW directly: MobileNetV2's 16->96
  // expansion at 112x112, one vector of columns by 12 channels.
  EXPECT_EQ(task_of("conv2d:N=1,C=16,H=112,W=112,K=96,R=1,S=1", Target::parse("llvm -mcpu=skylake-avx512"))
                ->default_config()
                .to_json()["knobs"],
            json::parse(R"({"layout": "NCHW", "tile_k": 12, "tile_q": 16, "outer_order": "p_k", "unroll_rx": false,
                            "pad": "root"})"));
  EXPECT_EQ(task_of("conv2d:N=1,C=96,H=56,W=56,K=24,R=1,S=1", Target::parse("llvm -mcpu=skylake-avx512"))
                ->default_config()
                .knob_int("tile_q"),
            14);
  // 32 channels on both sides: NCHWc.
  EXPECT_EQ(task_of("conv2d:N=1,C=32,H=28,W=28,K=192,R=1,S=1", Target::parse("llvm -mcpu=skylake-avx512"))
                ->default_config()
                .knob_string("layout"),
            "NCHWc");
  // A K that two vectors do not divide keeps one.
  EXPECT_EQ(task_of("conv2d:N=1,C=8,H=14,W=14,K=48,R=3,S=3,pad=1", Target::parse("llvm -mcpu=skylake-avx512"))
                ->default_config()
                .knob_int("tile_k"),
            16);
}

TEST(ConvTemplate, WindowTemplatesSpaceAndDefaultOnAvx2) {
  std::unique_ptr<Task> dw = task_of("depthwise_conv2d:N=1,C=32,H=112,W=112,R=3,S=3,pad=1", avx2());
  EXPECT_EQ(dw->tmpl().name, "depthwise_conv2d.cpu");
  EXPECT_EQ(dw->space().knob("tile_q").choices, (std::vector<json>{1, 2, 4, 7, 8, 14, 16}));
  EXPECT_EQ(dw->default_config().to_json()["knobs"],
            json::parse(R"({"tile_p": 4, "tile_q": 16, "pad": "tile", "unroll_window": false})"));
  std::unique_ptr<Task> pool = task_of("max_pool2d:N=1,C=64,H=112,W=112,kernel=3,stride=2,pad=1", avx2());
  EXPECT_EQ(pool->tmpl().name, "max_pool2d.cpu");
  // Stride 2 over columns: one column per tile, no gathers.
  EXPECT_EQ(pool->default_config().to_json()["knobs"],
            json::parse(R"({"tile_p": 4, "tile_q": 1, "pad": "tile", "unroll_window": false})"));
  // 56 columns at stride 1: 8 is the widest whole number of vectors that divides them.
  EXPECT_EQ(task_of("max_pool2d:N=1,C=8,H=56,W=56,kernel=3,pad=1", avx2())->default_config().knob_int("tile_q"), 8);
  std::unique_ptr<Task> avg = task_of("avg_pool2d:N=1,C=8,H=7,W=7,kernel=3,pad=1", avx2());
  EXPECT_EQ(avg->tmpl().name, "avg_pool2d.cpu");
  EXPECT_EQ(avg->default_config().to_json()["knobs"],
            json::parse(R"({"tile_p": 1, "tile_q": 7, "pad": "tile", "unroll_window": false})"));
}

TEST(ConvTemplate, BothConv2dLayoutsAreCorrect) {
  for (const char* w : {"conv2d:N=2,C=6,H=11,W=10,K=16,R=3,S=3,stride=2,pad=1",
                        "conv2d:N=1,C=8,H=9,W=16,K=12,R=3,S=3,pad=1,dilation=2"}) {
    std::unique_ptr<Task> task = task_of(w);
    Config nchw = with_knob(*task, task->default_config(), "layout", "NCHW");
    ASSERT_TRUE(task->space().is_valid(nchw)) << task->space().why_invalid(nchw);
    expect_correct(*task, nchw);
  }
}

TEST(ConvTemplate, SampledConfigsAreCorrect) {
  std::mt19937_64 rng(2024);
  for (const char* w :
       {"conv2d:N=1,C=6,H=10,W=12,K=16,R=3,S=3,stride=1,pad=1", "conv2d:N=2,C=4,H=9,W=9,K=8,R=3,S=3,stride=2,pad=0",
        "depthwise_conv2d:N=1,C=8,H=12,W=12,R=3,S=3,pad=1", "max_pool2d:N=1,C=4,H=12,W=12,kernel=3,stride=2,pad=1",
        "avg_pool2d:N=1,C=4,H=10,W=10,kernel=3,stride=1,pad=1"}) {
    expect_sampled_configs_correct(*task_of(w), rng, 3);
  }
}

TEST(ConvTemplate, EveryNeighbourOfTheDefaultIsCorrect) {
  for (const char* w :
       {"conv2d:N=1,C=4,H=8,W=8,K=16,R=3,S=3,pad=1", "depthwise_conv2d:N=1,C=4,H=8,W=8,R=3,S=3,stride=2,pad=1",
        "avg_pool2d:N=1,C=4,H=8,W=8,kernel=3,stride=1,pad=1"}) {
    std::unique_ptr<Task> task = task_of(w);
    std::vector<Config> neighbours = task->space().neighbours(task->default_config());
    EXPECT_GE(neighbours.size(), 5u) << w;
    for (const Config& c : neighbours) expect_correct(*task, c);
  }
}

TEST(ConvTemplate, ConfigJsonReplaysTheSameSchedule) {
  expect_config_json_replays_the_same_schedule(*task_of("conv2d:N=1,C=8,H=14,W=14,K=16,R=3,S=3,pad=1"));
}

void expect_user_error(const std::string& workload, const std::string& message) {
  try {
    task_of(workload);
    FAIL() << workload << " should have been refused";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(ConvTemplate, UnservedShapesAreUserErrors) {
  expect_user_error("conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3,groups=2",
                    "the conv2d template serves groups=1 only, not groups=2");
  expect_user_error("conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3,layout=NHWC",
                    "the conv2d template serves layout=NCHW only, not layout=NHWC");
  expect_user_error("depthwise_conv2d:N=1,C=8,H=8,W=8,R=3,S=3,layout=NHWC",
                    "the depthwise_conv2d template serves layout=NCHW only, not layout=NHWC");
  expect_user_error("max_pool2d:N=1,C=8,H=8,W=8,kernel=2,layout=NHWC",
                    "the max_pool2d template serves layout=NCHW only, not layout=NHWC");
}

}  // namespace
}  // namespace temper::schedule_space
