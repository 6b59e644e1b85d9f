// Helpers the template correctness tests share (test_templates_gemm, test_templates_conv,
// test_templates_gpu): a task of a workload string, compiled code under a config checked
// against the op's reference implementation, sampled configs, and a config's JSON round
// trip. Header-only: each test file is an executable of its own.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "compiler/codegen/build.h"
#include "compiler/ir/printer.h"
#include "compiler/ops/op_data.h"
#include "schedule_space/template.h"

namespace temper::schedule_space::template_testing {

inline Target host() {
  return Target::parse("llvm -mcpu=native");
}

inline std::unique_ptr<Task> task_of(const std::string& workload, const Target& target = host()) {
  return Task::create(ops::Workload::parse(workload), target);
}

// Builds the task's schedule for config, for target, and checks its results against the
// reference.
inline void expect_correct(const Task& task, const Config& config, uint64_t seed = 3, const Target& target = host()) {
  Schedule s = task.apply(config);
  BuildResult built = build({s.func()}, target);
  ops::OpData data = ops::make_op_data(task.op(), seed);
  Comparison cmp = ops::run_and_check(built.module->get_function(task.op().func.name), data);
  EXPECT_TRUE(cmp.ok()) << task.workload().to_string() << " under " << config.to_string() << ": " << cmp.message
                        << "\nscheduled:\n"
                        << to_string(s.func());
}

// Draws `draws` configs of the task's space; each must be valid and compute correctly.
inline void expect_sampled_configs_correct(const Task& task, std::mt19937_64& rng, int draws) {
  for (int draw = 0; draw < draws; ++draw) {
    Config c = task.space().sample(rng);
    ASSERT_TRUE(task.space().is_valid(c)) << c.to_string();
    expect_correct(task, c, draw);
  }
}

// A sampled config read back from its JSON text is the same config and replays the same trace.
inline void expect_config_json_replays_the_same_schedule(const Task& task) {
  std::mt19937_64 rng(5);
  Config c = task.space().sample(rng);
  Config back = task.space().from_json(nlohmann::json::parse(c.to_json().dump()));
  EXPECT_EQ(back, c);
  EXPECT_EQ(task.apply(back).trace().to_json(), task.apply(c).trace().to_json());
}

// A workload string as a test name: every character but letters and digits becomes '_'.
inline std::string workload_test_name(const ::testing::TestParamInfo<const char*>& info) {
  std::string name = info.param;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

}  // namespace temper::schedule_space::template_testing
