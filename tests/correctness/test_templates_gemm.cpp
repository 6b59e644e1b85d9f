// The GEMM-family templates (matmul, batch_matmul, dense): their spaces, their default
// configs (the expert schedule of ops::schedule_cpu_default, with B stored [N, K]
// transposed by the op's re-expression), and compiled code under default, sampled and
// neighbouring configs against the reference implementations.
#include <gtest/gtest.h>

#include "compiler/ops/cpu_schedules.h"
#include "correctness/template_test_util.h"

namespace temper::schedule_space {
namespace {

using nlohmann::json;
using template_testing::expect_config_json_replays_the_same_schedule;
using template_testing::expect_correct;
using template_testing::expect_sampled_configs_correct;
using template_testing::host;
using template_testing::task_of;
using template_testing::workload_test_name;

// Shapes that leave tails in every loop, degenerate extents, transposes, int32, and
// dense's fused epilogues.
const char* kWorkloads[] = {
    "matmul:M=1,N=7,K=3",
    "matmul:M=33,N=50,K=17",
    "matmul:M=30,N=48,K=17,transpose_a=1,transpose_b=1",
    "matmul:M=1,N=7,K=3,transpose_b=1",
    "matmul:M=33,N=50,K=17,transpose_b=1",
    "matmul:M=20,N=24,K=8,dtype=int32",
    "batch_matmul:B=3,M=13,N=20,K=9,transpose_b=1",
    "batch_matmul:B=1,M=1,N=1,K=1",
    "batch_matmul:B=2,M=8,N=16,K=5,transpose_a=1,dtype=int32",
    "batch_matmul:B=2,M=5,N=9,K=4,transpose_b=1,dtype=int32",
    "dense:M=1,N=7,K=3,bias=1,act=relu",
    "dense:M=1,N=7,K=3",
    "dense:M=19,N=40,K=24,bias=1,act=gelu",
    "dense:M=33,N=50,K=17,bias=1",
    "dense:M=12,N=40,K=16",
    "dense:M=7,N=1,K=1,act=tanh",
};

bool b_stored_transposed(const Task& task) {
  return task.workload().op == "dense" || task.workload().get_bool("transpose_b");
}

Config with_knob(const Config& c, const std::string& knob, const json& value) {
  json j = c.to_json();
  j["knobs"][knob] = value;
  return c.space().from_json(j);
}

class GemmTemplateDefaults : public ::testing::TestWithParam<const char*> {};

// dense's weight and matmul's [K, N] B are packed once into panels by default, read
// without per-panel copies; matmul's B stored [N, K] is transposed when more than one row
// tile reads a panel. Apart from B's layout (and the panel copies), the default is the
// op's hand-written schedule.
TEST_P(GemmTemplateDefaults, DefaultConfigIsTheExpertScheduleAndCorrect) {
  std::unique_ptr<Task> task = task_of(GetParam());
  Config c = task->default_config();
  EXPECT_TRUE(task->space().is_valid(c)) << c.to_string() << ": " << task->space().why_invalid(c);
  bool dense = task->workload().op == "dense";
  bool matmul_kn = task->workload().op == "matmul" && !b_stored_transposed(*task);
  Config expert = c;
  if (dense || matmul_kn) {
    EXPECT_EQ(c.knob_string("b_layout"), "panels");
    EXPECT_FALSE(c["pack_b"].get<bool>());
    ops::GemmTiling tiling =
        ops::GemmTiling::for_target(host(), task->workload().get_int("M"), task->workload().get_int("N"));
    expert = with_knob(with_knob(c, "b_layout", dense ? "NK" : "KN"), "pack_b", tiling.pack_b);
  } else if (b_stored_transposed(*task)) {
    bool one_row_tile = task->workload().get_int("M") <= c.knob_int("mr");
    EXPECT_EQ(c.knob_string("b_layout"), one_row_tile ? "NK" : "KN");
    expert = with_knob(c, "b_layout", "NK");
  }
  // The other layouts compute the same.
  for (const Knob& knob : c.space().knobs()) {
    if (knob.name != "b_layout") continue;
    for (const json& other : knob.choices) {
      if (other != c.knob_string("b_layout")) expect_correct(*task, with_knob(c, "b_layout", other));
    }
  }
  EXPECT_EQ(task->apply(expert).trace().to_json(), ops::schedule_cpu_default(task->op(), host()).trace().to_json());
  expect_correct(*task, c);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GemmTemplateDefaults, ::testing::ValuesIn(kWorkloads), workload_test_name);

TEST(GemmTemplate, SpaceOfALargeMatmulOnAvx2) {
  std::unique_ptr<Task> task = task_of("matmul:M=1024,N=1024,K=1024", Target::parse("llvm -mcpu=haswell"));
  EXPECT_EQ(task->tmpl().name, "matmul.cpu");
  const ConfigSpace& space = task->space();
  std::vector<std::string> names;
  for (const Knob& k : space.knobs()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"mr", "nr", "unroll_k", "pack_b", "parallel", "b_layout"}));
  EXPECT_EQ(space.knob("nr").choices, (std::vector<json>{8, 16, 32}));  // not 24: 3 vectors
  EXPECT_EQ(space.knob("b_layout").choices, (std::vector<json>{"KN", "panels"}));
  EXPECT_EQ(space.size(), 12 * 3 * 4 * 2 * 2 * 2);
  EXPECT_EQ(
      task->default_config().to_json()["knobs"],
      json::parse(R"({"mr": 6, "nr": 16, "unroll_k": 1, "pack_b": false, "parallel": true, "b_layout": "panels"})"));

  // 16 ymm registers: 6 x 16 needs 12 accumulators + 2 B vectors + 1 broadcast; 8 x 16 needs 19.
  Config big = space.from_json(
      {{"knobs", {{"mr", 8}, {"nr", 16}, {"unroll_k", 1}, {"pack_b", true}, {"parallel", true}, {"b_layout", "KN"}}}});
  EXPECT_EQ(space.why_invalid(big),
            "the mr x nr accumulators, the B vectors and the A broadcast fit the 16 vector registers");
  int valid = 0;
  for (int64_t i = 0; i < space.size(); ++i) valid += space.is_valid(space.get(i));
  // Tiles that fit: nr=8 with mr <= 14 (11 of 12), nr=16 with mr <= 6 (6), nr=32 with
  // mr <= 2 (2); times 4 x 2 x 2 x 2.
  EXPECT_EQ(valid, (11 + 6 + 2) * 32);
}

TEST(GemmTemplate, DefaultFollowsTheTargetsVectorWidth) {
  std::unique_ptr<Task> avx512 = task_of("matmul:M=1024,N=1024,K=1024", Target::parse("llvm -mcpu=skylake-avx512"));
  EXPECT_EQ(avx512->default_config().knob_int("mr"), 8);
  EXPECT_EQ(avx512->default_config().knob_int("nr"), 32);
  EXPECT_EQ(avx512->space().knob("nr").choices, (std::vector<json>{16, 32, 64}));
  // A constant 2-D B is packed once into contiguous panels, which no row tile copies.
  // Another B stored [N, K] is transposed only for several row tiles, and up to 128 rows
  // read each panel in place, more copy it first.
  EXPECT_FALSE(avx512->default_config()["pack_b"].get<bool>());
  EXPECT_EQ(avx512->default_config().knob_string("b_layout"), "panels");
  EXPECT_TRUE(task_of("matmul:M=1024,N=1024,K=1024,transpose_b=1", Target::parse("llvm -mcpu=skylake-avx512"))
                  ->default_config()["pack_b"]
                  .get<bool>());
  EXPECT_FALSE(task_of("matmul:M=128,N=1536,K=384,transpose_b=1", Target::parse("llvm -mcpu=skylake-avx512"))
                   ->default_config()["pack_b"]
                   .get<bool>());
  std::unique_ptr<Task> narrow = task_of("dense:M=3,N=7,K=2", Target::parse("llvm -mcpu=haswell"));
  EXPECT_EQ(
      narrow->default_config().to_json()["knobs"],
      json::parse(R"({"mr": 3, "nr": 7, "unroll_k": 1, "pack_b": false, "parallel": true, "b_layout": "panels"})"));
  EXPECT_EQ(task_of("dense:M=7,N=7,K=2", Target::parse("llvm -mcpu=haswell"))->default_config().knob_string("b_layout"),
            "panels");
  EXPECT_FALSE(task_of("dense:M=7,N=7,K=2", Target::parse("llvm -mcpu=haswell"))->default_config()["pack_b"].get<bool>());
  EXPECT_EQ(task_of("matmul:M=3,N=7,K=2,transpose_b=1", Target::parse("llvm -mcpu=haswell"))
                ->default_config()
                .knob_string("b_layout"),
            "NK");
  EXPECT_EQ(narrow->space().knob("mr").choices, (std::vector<json>{1, 2, 3}));
  // N = 20: 1 and 2 vectors, each leaving a tail.
  EXPECT_EQ(task_of("matmul:M=8,N=20,K=4", Target::parse("llvm -mcpu=haswell"))->space().knob("nr").choices,
            (std::vector<json>{8, 16}));
  EXPECT_EQ(narrow->space().knob("unroll_k").choices, (std::vector<json>{1, 2}));
  EXPECT_EQ(task_of("matmul:M=8,N=8,K=12")->space().knob("unroll_k").choices, (std::vector<json>{1, 2, 4}));
}

// Where B is stored [N, K], or is a matmul's 2-D B (a model's weight), the layout of its
// panels is a choice.
TEST(GemmTemplate, BLayoutIsAKnobWhereBIsStoredTransposedOrA2DMatmulWeight) {
  auto names = [](const char* w) {
    std::unique_ptr<Task> task = task_of(w);
    std::vector<std::string> names;
    for (const Knob& k : task->space().knobs()) names.push_back(k.name);
    return names;
  };
  const std::vector<std::string> gemm = {"mr", "nr", "unroll_k", "pack_b", "parallel"};
  std::vector<std::string> with_layout = gemm;
  with_layout.push_back("b_layout");
  EXPECT_EQ(names("matmul:M=8,N=8,K=8"), with_layout);
  EXPECT_EQ(names("matmul:M=8,N=8,K=8,transpose_a=1"), with_layout);
  EXPECT_EQ(names("batch_matmul:B=2,M=8,N=8,K=8"), gemm);
  EXPECT_EQ(names("matmul:M=8,N=8,K=8,transpose_b=1"), with_layout);
  EXPECT_EQ(names("batch_matmul:B=2,M=8,N=8,K=8,transpose_b=1"), with_layout);
  EXPECT_EQ(names("dense:M=8,N=8,K=8"), with_layout);
  EXPECT_EQ(task_of("dense:M=8,N=8,K=8")->space().knob("b_layout").choices,
            (std::vector<json>{"KN", "NK", "panels"}));
  EXPECT_EQ(task_of("matmul:M=8,N=8,K=8,transpose_b=1")->space().knob("b_layout").choices,
            (std::vector<json>{"KN", "NK"}));
  // A [K, N] B: as stored, or in [N/nr, K, nr] panels (a MatMul's weight, packed at build).
  EXPECT_EQ(task_of("matmul:M=8,N=8,K=8")->space().knob("b_layout").choices, (std::vector<json>{"KN", "panels"}));
}

// "KN" schedules the op re-expressed: W_pack writes W's K x NR panel as [K, N] under the
// parallel panel loop, the product reads it there, and dense's epilogue stays fused into
// the tile (no local accumulator). Without pack_b, W_pack runs whole, in parallel, first.
TEST(GemmTemplate, TransposedBIsPackedPerPanelByTheOpsOwnStage) {
  std::unique_ptr<Task> task = task_of("dense:M=24,N=64,K=32,bias=1,act=relu", Target::parse("llvm -mcpu=haswell"));
  Config c = with_knob(task->default_config(), "pack_b", true);
  Schedule s = task->apply(c);
  const PrimFunc& f = s.func();
  EXPECT_EQ(f.name, task->op().func.name);
  ASSERT_EQ(f.params.size(), task->op().func.params.size());
  for (size_t p = 0; p < f.params.size(); ++p) EXPECT_EQ(f.params[p]->name, task->op().func.params[p]->name);
  std::vector<LoopRV> pack = s.get_loops(s.get_block("W_pack"));
  std::vector<LoopRV> gemm = s.get_loops(s.get_block("dense_matmul"));
  std::vector<LoopRV> epilogue = s.get_loops(s.get_block("dense"));
  ASSERT_EQ(pack.size(), 3u);  // panel, k, the vectorized columns
  EXPECT_EQ(s.loop(pack[0]), s.loop(gemm[0]));
  EXPECT_EQ(s.loop(pack[0]), s.loop(epilogue[0]));
  EXPECT_EQ(s.loop(pack[0])->for_kind, ForKind::Parallel);
  EXPECT_EQ(*as_const_int(s.loop(pack[1])->extent), 32);
  EXPECT_EQ(*as_const_int(s.loop(pack[2])->extent), 16);
  EXPECT_EQ(s.loop(pack[2])->for_kind, ForKind::Vectorized);
  std::string printed = to_string(f);
  EXPECT_EQ(printed.find("dense_matmul.local"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("W_view"), std::string::npos) << printed;  // inlined

  Schedule whole = task->apply(with_knob(c, "pack_b", false));
  std::vector<LoopRV> root = whole.get_loops(whole.get_block("W_pack"));
  ASSERT_GE(root.size(), 2u);
  EXPECT_EQ(whole.loop(root[0])->for_kind, ForKind::Parallel);
  EXPECT_NE(whole.loop(root[0]), whole.loop(whole.get_loops(whole.get_block("dense_matmul"))[0]));
}

TEST(GemmTemplate, SampledConfigsAreCorrect) {
  std::mt19937_64 rng(2024);
  for (const char* w : {"matmul:M=37,N=45,K=19", "batch_matmul:B=2,M=11,N=24,K=7,transpose_a=1",
                        "dense:M=9,N=33,K=12,bias=1,act=sigmoid", "matmul:M=13,N=29,K=8,transpose_b=1",
                        "batch_matmul:B=3,M=6,N=19,K=6,transpose_a=1,transpose_b=1", "dense:M=1,N=45,K=9"}) {
    expect_sampled_configs_correct(*task_of(w), rng, 3);
  }
}

TEST(GemmTemplate, EveryNeighbourOfTheDefaultIsCorrect) {
  for (const char* w : {"dense:M=10,N=20,K=6,bias=1,act=relu", "matmul:M=9,N=13,K=4,transpose_b=1"}) {
    std::unique_ptr<Task> task = task_of(w);
    std::vector<Config> neighbours = task->space().neighbours(task->default_config());
    EXPECT_GE(neighbours.size(), 10u);
    for (const Config& c : neighbours) expect_correct(*task, c);
  }
}

// Knob values the draws above may miss: column tiles with a tail, B read in place
// (transposed too), B transposed whole before the GEMM, k unrolled by 8, one thread.
TEST(GemmTemplate, HandPickedConfigsAreCorrect) {
  struct Case {
    const char* workload;
    const char* knobs;
  };
  const Case cases[] = {
      {"matmul:M=5,N=20,K=16",
       R"({"mr": 4, "nr": 16, "unroll_k": 8, "pack_b": false, "parallel": false, "b_layout": "KN"})"},
      {"matmul:M=7,N=20,K=9",
       R"({"mr": 3, "nr": 16, "unroll_k": 1, "pack_b": false, "parallel": true, "b_layout": "panels"})"},
      {"matmul:M=12,N=48,K=8,transpose_a=1",
       R"({"mr": 4, "nr": 16, "unroll_k": 2, "pack_b": true, "parallel": true, "b_layout": "panels"})"},
      {"matmul:M=9,N=12,K=8,transpose_b=1",
       R"({"mr": 3, "nr": 8, "unroll_k": 4, "pack_b": false, "parallel": true, "b_layout": "NK"})"},
      {"batch_matmul:B=3,M=7,N=16,K=4", R"({"mr": 5, "nr": 16, "unroll_k": 2, "pack_b": true, "parallel": false})"},
      {"dense:M=3,N=21,K=16,bias=1,act=gelu",
       R"({"mr": 2, "nr": 8, "unroll_k": 8, "pack_b": true, "parallel": false, "b_layout": "KN"})"},
      {"dense:M=5,N=19,K=6,bias=1",
       R"({"mr": 4, "nr": 16, "unroll_k": 2, "pack_b": false, "parallel": true, "b_layout": "KN"})"},
      {"batch_matmul:B=2,M=3,N=12,K=4,transpose_b=1",
       R"({"mr": 3, "nr": 8, "unroll_k": 4, "pack_b": false, "parallel": false, "b_layout": "KN"})"},
      {"matmul:M=2,N=40,K=5,transpose_b=1",
       R"({"mr": 1, "nr": 32, "unroll_k": 1, "pack_b": true, "parallel": true, "b_layout": "KN"})"},
  };
  for (const Case& c : cases) {
    std::unique_ptr<Task> task = task_of(c.workload, Target::parse("llvm -mcpu=haswell"));
    Config config = task->space().from_json({{"knobs", json::parse(c.knobs)}});
    EXPECT_TRUE(task->space().is_valid(config)) << config.to_string();
    expect_correct(*task, config);
  }
}

TEST(GemmTemplate, ConfigJsonReplaysTheSameSchedule) {
  expect_config_json_replays_the_same_schedule(*task_of("matmul:M=64,N=64,K=64"));
  expect_config_json_replays_the_same_schedule(*task_of("dense:M=64,N=48,K=32,bias=1,act=relu"));
  // The default of a re-expressed op, through its JSON text.
  std::unique_ptr<Task> task = task_of("matmul:M=17,N=24,K=8,transpose_b=1");
  Config c = task->default_config();
  Config back = task->space().from_json(json::parse(c.to_json().dump()));
  EXPECT_EQ(back, c);
  EXPECT_EQ(task->apply(back).trace().to_json(), task->apply(c).trace().to_json());
}

TEST(GemmTemplate, OpsWithoutATemplateAreUserErrors) {
  EXPECT_NE(find_template("matmul", host()), nullptr);
  EXPECT_EQ(find_template("softmax", host()), nullptr);
  std::vector<std::string> ops = ops_with_templates(host());
  ASSERT_GE(ops.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(ops.begin(), ops.begin() + 3),
            (std::vector<std::string>{"matmul", "batch_matmul", "dense"}));
  try {
    task_of("softmax:shape=8x64,axis=1");
    FAIL() << "softmax has no template";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no tuning template for op 'softmax' on target 'llvm -mcpu=native'; "
                                         "templates exist for: matmul, batch_matmul, dense"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace temper::schedule_space
