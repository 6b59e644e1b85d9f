// The last step of tuning a model (search/confirm_in_model.h) on a small conv graph and an
// in-memory log holding real, valid configs of its tasks: each task's choice holds the
// schedule of the candidate it names (the log's best, second or the default), a build then
// applies them (ApplyHistoryBest says so, and computes what the defaults compute), and a
// record measured after a choice makes the build go back to the log's best.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <sstream>

#include "compiler/graph/executor.h"
#include "compiler/graph/shape_inference.h"
#include "compiler/graph/task_extraction.h"
#include "schedule_space/template.h"
#include "search/apply_history_best.h"
#include "search/confirm_in_model.h"
#include "tuning_db/memory_database.h"

namespace temper::search {
namespace {

const DataType f32 = DataType::float32();

// x [1, 16, 14, 14] -> conv 3x3 (32) -> relu -> conv 1x1 (32) -> y.
graph::Graph two_convs() {
  graph::Graph g;
  g.name = "two_convs";
  graph::ValueId x = g.add_input("x", graph::TensorType{{1, 16, 14, 14}, f32});
  graph::ValueId w1 = g.add_constant("w1", NDArray::random({32, 16, 3, 3}, f32, 1));
  graph::ValueId w2 = g.add_constant("w2", NDArray::random({32, 32, 1, 1}, f32, 2));
  graph::Attributes window;
  window.set("kernel_shape", std::vector<int64_t>{3, 3});
  window.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  g.add_node("conv1", "Conv", window, {x, w1}, {"c1"});
  g.add_node("relu", "Relu", {}, {g.find("c1")}, {"r"});
  graph::Attributes pointwise;
  pointwise.set("kernel_shape", std::vector<int64_t>{1, 1});
  g.add_node("conv2", "Conv", pointwise, {g.find("r"), w2}, {"y"});
  g.mark_output(g.find("y"));
  graph::infer_types(g);
  return g;
}

class ConfirmInModelTest : public ::testing::Test {
 protected:
  graph::Graph g = two_convs();
  Target target = Target::parse("llvm -mcpu=native");
  graph::LayoutChoice layout = graph::parse_layout_choice("nchw16c");
  tuning_db::MemoryDatabase log;

  // Three valid configs of each task other than its default, as records measured here
  // at made-up times (the log's ranking is the measurer's, not the model's).
  void tune(int64_t timestamp) {
    graph::LayoutTasks model = graph::extract_tasks_by_layout(g, target, nullptr, layout);
    std::mt19937_64 rng(7);
    for (const graph::ExtractedTask& task : model.tasks) {
      std::unique_ptr<schedule_space::Task> t = schedule_space::Task::create(task.workload, target);
      std::set<int64_t> seen = {t->default_config().index()};
      for (int added = 0; added < 3;) {
        schedule_space::Config c = t->space().sample(rng);
        if (!t->space().is_valid(c) || !seen.insert(c.index()).second) continue;
        tuning_db::TuningRecord r;
        r.workload = tuning_db::WorkloadKey::from(task.workload);
        r.target = tuning_db::host_target_info(target);
        r.config = c.to_json();
        r.trace = t->apply(c).trace().to_json();
        r.mean = 1e-4 * (added + 1);
        r.costs = {r.mean};
        r.timestamp = timestamp;
        log.commit_record(r);
        ++added;
      }
    }
  }

  InModelOptions quick() {
    InModelOptions o;
    o.candidates = 2;
    o.rounds = 3;
    o.round_s = 0.005;
    o.margin = 100;  // the in-model choices kept whatever the last rounds say
    o.model_name = "two_convs.onnx";
    return o;
  }
};

TEST_F(ConfirmInModelTest, EachTaskTakesTheCandidateThatRanFastestInTheModel) {
  tune(100);
  InModelResult r = confirm_in_model(g, target, layout, log, quick(), nullptr);
  ASSERT_EQ(r.tasks.size(), 2u);  // the two convs
  ASSERT_EQ(r.choices.size(), r.tasks.size());
  EXPECT_EQ(r.kept, "in-model choices");
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    const InModelTask& task = r.tasks[i];
    EXPECT_GT(task.picked_s, 0);
    EXPECT_GT(task.log_best_s, 0);
    ASSERT_TRUE(task.default_s.has_value());
    const tuning_db::ModelChoice& choice = r.choices[i];
    EXPECT_EQ(choice.workload.workload, task.workload);
    EXPECT_EQ(choice.picked, task.picked);
    EXPECT_EQ(choice.model, "two_convs.onnx");
    EXPECT_EQ(choice.model_seconds, task.picked_s);
    EXPECT_EQ(choice.log_best_seconds, task.log_best_s);
    // The choice holds the schedule of the candidate it names.
    std::vector<tuning_db::TuningRecord> ranked = log.top_k(choice.workload, target.to_string(), 2);
    ASSERT_EQ(ranked.size(), 2u);
    std::unique_ptr<schedule_space::Task> t = schedule_space::Task::create(ops::Workload::parse(task.workload), target);
    if (task.picked == "log rank 1") {
      EXPECT_EQ(choice.config, ranked[0].config);
      EXPECT_EQ(choice.trace, ranked[0].trace);
    } else if (task.picked == "log rank 2") {
      EXPECT_EQ(choice.config, ranked[1].config);
      EXPECT_EQ(choice.trace, ranked[1].trace);
    } else {
      EXPECT_EQ(task.picked, "template default");
      EXPECT_EQ(choice.config, t->default_config().to_json());
      EXPECT_EQ(choice.trace, t->apply(t->default_config()).trace().to_json());
    }
  }
  EXPECT_GT(r.chosen_latency_s, 0);
  EXPECT_GT(r.log_best_latency_s, 0);
  EXPECT_GT(r.default_latency_s, 0);
}

TEST_F(ConfirmInModelTest, ABuildAppliesTheChoicesUntilTheLogHasANewerRecord) {
  tune(100);
  InModelResult r = confirm_in_model(g, target, layout, log, quick(), nullptr);
  ASSERT_FALSE(r.choices.empty());
  for (tuning_db::ModelChoice& choice : r.choices) choice.timestamp = 200;
  log.commit_model_choices(r.choices);

  std::ostringstream info;
  ApplyHistoryBest best(log, &info);
  graph::GraphExecutor chosen(g, target, graph::ExecutorOptions{.schedules = &best, .layout = layout});
  EXPECT_NE(info.str().find("applying the schedule chosen in model two_convs.onnx"), std::string::npos) << info.str();
  graph::GraphExecutor defaults(g, target, graph::ExecutorOptions{.layout = layout});
  std::map<std::string, NDArray> in = {{"x", NDArray::random({1, 16, 14, 14}, f32, 3)}};
  NDArray a = chosen.run(in).at(0), b = defaults.run(in).at(0);
  ASSERT_EQ(a.size(), b.size());
  for (int64_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a.get(i), b.get(i), 1e-3) << i;

  const tuning_db::ModelChoice& first = r.choices.front();
  ASSERT_TRUE(model_choice_for(log, first.workload, target).has_value());
  tune(300);  // tuned again since: the choices are older than the log's records
  EXPECT_FALSE(model_choice_for(log, first.workload, target).has_value());
  std::ostringstream again;
  ApplyHistoryBest after(log, &again);
  graph::GraphExecutor rebuilt(g, target, graph::ExecutorOptions{.schedules = &after, .layout = layout});
  EXPECT_EQ(again.str().find("chosen in model"), std::string::npos) << again.str();
  EXPECT_NE(again.str().find("applying the best of the log"), std::string::npos) << again.str();
}

TEST_F(ConfirmInModelTest, ALogWithoutTheModelsTasksGivesNothingToChoose) {
  InModelResult r = confirm_in_model(g, target, layout, log, quick(), nullptr);
  EXPECT_TRUE(r.tasks.empty());
  EXPECT_TRUE(r.choices.empty());
}

}  // namespace
}  // namespace temper::search
