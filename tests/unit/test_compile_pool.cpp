// The builder's compile workers (measure/compile_pool.h): long-lived processes that
// rebuild each candidate from its recipe (search/candidate_recipe.h) and compile it. The
// rebuilt PrimFuncs must be the builder's, or nothing is compiled there; a compile that
// ends its worker or outlives the time-out costs that candidate and a restart.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "compiler/ops/cpu_schedules.h"
#include "correctness/tune_test_util.h"
#include "measure/builder.h"
#include "measure/compile_pool.h"
#include "measure/runner.h"
#include "schedule_space/template.h"
#include "search/candidate_recipe.h"

namespace temper::measure {
namespace {

namespace fs = std::filesystem;
using search::tune_testing::quick_runner;

const Target kNative = Target::parse("llvm -mcpu=native");

// The template default of a workload, with its recipe (a config).
MeasureInput template_candidate(const std::string& workload_text) {
  auto task = schedule_space::Task::create(ops::Workload::parse(workload_text), kNative);
  schedule_space::Config config = task->default_config();
  Schedule s = task->apply(config);
  MeasureInput input{task->workload(), kNative, s.func(), std::nullopt, -1, ""};
  input.recipe = search::candidate_recipe(config.to_json(), s.trace().to_json(), false);
  return input;
}

// A schedule without a config: its recipe is its trace, replayed on the op.
MeasureInput trace_candidate(const std::string& workload_text) {
  ops::Workload workload = ops::Workload::parse(workload_text);
  Schedule s = ops::schedule_cpu_default(ops::instantiate(workload), kNative);
  MeasureInput input{workload, kNative, s.func(), std::nullopt, -1, ""};
  input.recipe = search::candidate_recipe(nullptr, s.trace().to_json(), false);
  return input;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / str("temper_test_compile_pool_", getpid());
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

// One worker compiles a config's candidate, a trace's and a prepacked one in turn, and
// stays the same process; what it compiled runs and matches the reference.
TEST(CompileWorker, CompilesCandidatesRebuiltFromTheirRecipesInOneProcess) {
  TempDir dir;
  auto conv =
      schedule_space::Task::create(ops::Workload::parse("conv2d:N=1,C=8,H=10,W=10,K=32,R=3,S=3,pad=1"), kNative);
  nlohmann::json blocked = conv->default_config().to_json();
  blocked["knobs"]["layout"] = "NCHWc";
  schedule_space::Config config = conv->space().from_json(blocked);
  std::optional<schedule_space::PrepackedSchedule> p = conv->apply_prepacked(config);
  ASSERT_TRUE(p.has_value());
  MeasureInput prepacked{conv->workload(), kNative, p->compute.func(), p->pack.func(), p->input, ""};
  prepacked.recipe = search::candidate_recipe(blocked, p->compute.trace().to_json(), true);

  std::vector<MeasureInput> inputs = {template_candidate("matmul:M=64,N=48,K=32"),
                                      trace_candidate("softmax:shape=4x32,axis=1"), prepacked};
  CompileWorker worker(find_compile_worker());
  EXPECT_EQ(worker.pid(), 0);  // started by the first compile
  std::vector<BuildArtifact> artifacts;
  pid_t pid = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::optional<BuildArtifact> a = worker.compile(inputs[i], dir.file(str("c", i, ".so")), 60);
    ASSERT_TRUE(a.has_value()) << inputs[i].workload.to_string() << ": the recipe did not reproduce the PrimFunc";
    EXPECT_EQ(a->error, MeasureError::None) << a->message;
    EXPECT_TRUE(fs::exists(a->library_path));
    EXPECT_EQ(a->function_name, inputs[i].func.name);
    if (i == 0) pid = worker.pid();
    EXPECT_EQ(worker.pid(), pid);
    artifacts.push_back(*a);
  }
  EXPECT_GT(pid, 0);
  EXPECT_EQ(artifacts[2].pack_function, p->pack.func().name);
  Runner runner(quick_runner());
  for (const MeasureResult& r : runner.run(inputs, artifacts)) EXPECT_EQ(r.error, MeasureError::None) << r.message;
}

// A recipe that rebuilds another PrimFunc than the input's (here add's PrimFunc under
// matmul's recipe) compiles nothing in the worker; the builder then compiles the input's
// own PrimFunc, which the runner finds wrong -- the worker's matmul would have passed.
TEST(CompileWorker, ARecipeThatDoesNotRebuildTheInputsPrimFuncCompilesNothing) {
  TempDir dir;
  MeasureInput impostor = template_candidate("matmul:M=64,N=64,K=64");
  impostor.func =
      ops::schedule_cpu_default(ops::instantiate(ops::Workload::parse("add:A=64x64,B=64x64")), kNative).func();
  CompileWorker worker(find_compile_worker());
  EXPECT_FALSE(worker.compile(impostor, dir.file("impostor.so"), 60).has_value());
  EXPECT_FALSE(fs::exists(dir.file("impostor.so")));

  MeasureInput malformed = template_candidate("matmul:M=8,N=8,K=8");
  malformed.recipe = "{\"config\": 3}";
  EXPECT_FALSE(worker.compile(malformed, dir.file("malformed.so"), 60).has_value());

  Builder builder({.n_parallel = 1, .timeout_s = 60, .work_dir = dir.file("builder")});
  std::vector<BuildArtifact> artifacts = builder.build({impostor});
  ASSERT_EQ(artifacts[0].error, MeasureError::None) << artifacts[0].message;
  EXPECT_EQ(builder.forked_compiles(), 1);
  Runner runner(quick_runner());
  EXPECT_EQ(runner.run({impostor}, artifacts)[0].error, MeasureError::WrongResult);
}

// A compile that ends its worker ($TEMPER_TEST_CRASH_IN_LLVM=F:exit: exit(70) inside LLVM)
// is that candidate's compile error, named; the next compile starts a new worker. A crash
// LLVM's recovery catches (a segfault) leaves the worker running.
TEST(CompileWorker, ACompileThatEndsItsWorkerIsACompileErrorAndTheNextStartsAnother) {
  TempDir dir;
  MeasureInput exiting = template_candidate("matmul:M=16,N=16,K=16");
  MeasureInput fine = template_candidate("conv2d:N=1,C=4,H=8,W=8,K=4,R=3,S=3,pad=1");
  CompileWorker worker(find_compile_worker());
  setenv("TEMPER_TEST_CRASH_IN_LLVM", (exiting.func.name + ":exit").c_str(), 1);
  std::optional<BuildArtifact> a = worker.compile(exiting, dir.file("exiting.so"), 60);
  unsetenv("TEMPER_TEST_CRASH_IN_LLVM");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->error, MeasureError::CompileError);
  EXPECT_NE(a->message.find("the compile worker exited with status 70 compiling " + exiting.func.name),
            std::string::npos)
      << a->message;
  EXPECT_TRUE(a->library_path.empty());
  EXPECT_EQ(worker.pid(), 0);
  a = worker.compile(exiting, dir.file("exiting_again.so"), 60);  // a new worker, without the variable
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->error, MeasureError::None) << a->message;

  pid_t pid = worker.pid();
  setenv("TEMPER_TEST_CRASH_IN_LLVM", fine.func.name.c_str(), 1);
  CompileWorker crashing(find_compile_worker());
  a = crashing.compile(fine, dir.file("crashing.so"), 60);
  unsetenv("TEMPER_TEST_CRASH_IN_LLVM");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->error, MeasureError::CompileError);
  EXPECT_NE(a->message.find("LLVM crashed compiling " + fine.func.name), std::string::npos) << a->message;
  EXPECT_GT(crashing.pid(), 0);  // recovered: still running
  EXPECT_EQ(worker.pid(), pid);
}

// A compile past the time-out kills its worker; the candidate is a CompileTimeout and
// leaves no library behind.
TEST(CompileWorker, ACompilePastTheTimeOutKillsItsWorker) {
  TempDir dir;
  CompileWorker worker(find_compile_worker());
  std::optional<BuildArtifact> a =
      worker.compile(template_candidate("matmul:M=64,N=64,K=64"), dir.file("slow.so"), 1e-3);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->error, MeasureError::CompileTimeout);
  EXPECT_NE(a->message.find("its compile worker was killed"), std::string::npos) << a->message;
  EXPECT_EQ(worker.pid(), 0);
  EXPECT_FALSE(fs::exists(dir.file("slow.so")));
}

}  // namespace
}  // namespace temper::measure
