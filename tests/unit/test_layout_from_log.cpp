// The block a build takes from its log (search/layout_from_log.h), on a small conv graph
// and an in-memory log: the block whose every task has a record and whose estimate is
// least, the target's block when no block is fully tuned, and a fixed block as it is.
#include <gtest/gtest.h>

#include "compiler/graph/shape_inference.h"
#include "compiler/graph/task_extraction.h"
#include "search/layout_from_log.h"
#include "tuning_db/memory_database.h"

namespace temper::search {
namespace {

const DataType f32 = DataType::float32();

// x [1, 16, 14, 14] -> conv 3x3 stride 2 (32) -> relu -> conv 1x1 (32) -> y.
graph::Graph two_convs() {
  graph::Graph g;
  g.name = "two_convs";
  graph::ValueId x = g.add_input("x", graph::TensorType{{1, 16, 14, 14}, f32});
  graph::ValueId w1 = g.add_constant("w1", NDArray::random({32, 16, 3, 3}, f32, 1));
  graph::ValueId w2 = g.add_constant("w2", NDArray::random({32, 32, 1, 1}, f32, 2));
  graph::Attributes strided;
  strided.set("kernel_shape", std::vector<int64_t>{3, 3});
  strided.set("strides", std::vector<int64_t>{2, 2});
  strided.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  g.add_node("conv1", "Conv", strided, {x, w1}, {"c1"});
  g.add_node("relu", "Relu", {}, {g.find("c1")}, {"r"});
  graph::Attributes pointwise;
  pointwise.set("kernel_shape", std::vector<int64_t>{1, 1});
  g.add_node("conv2", "Conv", pointwise, {g.find("r"), w2}, {"y"});
  g.mark_output(g.find("y"));
  graph::infer_types(g);
  return g;
}

class LayoutFromLogTest : public ::testing::Test {
 protected:
  graph::Graph g = two_convs();
  Target target = Target::parse("llvm -mcpu=skylake-avx512");
  graph::LayoutTasks model = graph::extract_tasks_by_layout(g, target);
  tuning_db::MemoryDatabase log;

  // A record of `seconds` for each task of the way with this block.
  void tune_block(int64_t block, double seconds) {
    for (size_t w = 0; w < model.layouts.size(); ++w) {
      if (model.layouts[w].block != block) continue;
      for (size_t t = 0; t < model.tasks.size(); ++t) {
        if (model.counts[w][t] == 0) continue;
        tuning_db::TuningRecord r;
        r.workload = tuning_db::WorkloadKey::from(model.tasks[t].workload);
        r.target = tuning_db::host_target_info(target);  // measured here, as a build applies
        r.trace = nlohmann::json::object();
        r.config = nlohmann::json::object({{"seconds", seconds}});
        r.costs = {seconds};
        r.mean = seconds;
        log.commit_record(r);
      }
    }
  }
};

TEST_F(LayoutFromLogTest, TheFullyTunedBlockWithTheLeastEstimateWins) {
  ASSERT_EQ(model.layouts.size(), 2u);
  tune_block(8, 2e-4);
  // Only block 8 has every task: it wins although 16 is the target's.
  LayoutFromLog chosen = layout_from_log(g, target, graph::LayoutChoice::Blocked, log);
  EXPECT_EQ(chosen.layout.block, 8);
  EXPECT_EQ(chosen.layout.kind, graph::LayoutChoice::Blocked);
  EXPECT_NE(chosen.why.find("NCHW8c, the log's fastest: 0.400 ms estimated against 2 tasks untuned for NCHW16c"),
            std::string::npos)
      << chosen.why;
  tune_block(16, 1e-4);
  chosen = layout_from_log(g, target, graph::LayoutChoice::BlockedDirect, log);
  EXPECT_EQ(chosen.layout.block, 16);
  EXPECT_EQ(chosen.layout.kind, graph::LayoutChoice::BlockedDirect);
  EXPECT_NE(chosen.why.find("NCHW16c, the log's fastest: 0.200 ms estimated against 0.400 ms for NCHW8c"),
            std::string::npos)
      << chosen.why;
}

TEST_F(LayoutFromLogTest, WithoutAFullyTunedBlockTheTargetsBlock) {
  LayoutFromLog chosen = layout_from_log(g, target, graph::LayoutChoice::Blocked, log);
  EXPECT_EQ(chosen.layout.block, 16);
  EXPECT_NE(chosen.why.find("every block has tasks the log lacks (2 of NCHW16c, 2 of NCHW8c)"), std::string::npos)
      << chosen.why;
}

TEST_F(LayoutFromLogTest, AFixedBlockOrNchwIsLeftAsItIs) {
  tune_block(8, 1e-5);
  LayoutFromLog fixed = layout_from_log(g, target, graph::parse_layout_choice("nchw16c"), log);
  EXPECT_EQ(fixed.layout.block, 16);
  EXPECT_EQ(fixed.why, "");
  LayoutFromLog plain = layout_from_log(g, target, graph::LayoutChoice::Nchw, log);
  EXPECT_EQ(plain.layout.kind, graph::LayoutChoice::Nchw);
  EXPECT_EQ(plain.why, "");
}

}  // namespace
}  // namespace temper::search
