// The measurer on GPU targets: the builder writes DevicePrograms, the runner's worker runs
// them on the target's device, checks them against the reference and times them by the
// device's clock. The OpenCL cases run on whatever OpenCL device the machine has (PoCL's
// CPU device where there is no GPU) and print SKIP without one; the CUDA case expects a
// time where an NVIDIA GPU is present and "no CUDA device" elsewhere.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "compiler/codegen/gpu/device_program.h"
#include "compiler/codegen/gpu/nvrtc.h"
#include "compiler/runtime/gpu/gpu_device.h"
#include "compiler/schedule/schedule.h"
#include "compiler/te/te.h"
#include "measure/builder.h"
#include "measure/runner.h"
#include "schedule_space/template.h"
#include "search/tune.h"
#include "tuning_db/memory_database.h"
#include "tuning_db/record.h"
#include "unit/test_schedule_workloads.h"

namespace temper::measure {
namespace {

namespace fs = std::filesystem;

const Target kOpenCl = Target::parse("opencl");

// C[M, N] = sum over k < reduce of A[M, K] * B[K, N]: the matmul of a workload when
// reduce == K, something else of the same parameters otherwise.
PrimFunc matmul_func(int m, int n, int k, int reduce) {
  te::Tensor a = te::placeholder({m, k}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({k, n}, DataType::float32(), "B");
  IterVar r = te::reduce_axis({0, reduce}, "k");
  te::Tensor c = te::compute(
      {m, n}, [&](Var i, Var j) { return te::sum(a(i, r) * b(r, j), {r}); }, "C");
  return te::create_prim_func({a, b, c}, "matmul");
}

MeasureInput gpu_candidate(const Target& target, int reduce = 64) {
  MeasureInput input;
  input.workload = ops::Workload::parse("matmul:M=64,N=64,K=64");
  input.target = target;
  input.func = testing::gpu_matmul(matmul_func(64, 64, 64, reduce)).func();
  return input;
}

RunnerOptions quick_runner() {
  RunnerOptions options;
  options.repeat = 3;
  options.min_repeat_ms = 1;
  options.timeout_s = 60;
  return options;
}

// Every test gets its own program cache folder (the worker inherits it), and skips
// without an OpenCL device.
class MeasureGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "temper_measure_gpu_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    cache_dir_ = pattern;
    if (const char* old = std::getenv("TEMPER_CACHE_DIR")) old_cache_dir_ = old;
    setenv("TEMPER_CACHE_DIR", cache_dir_.c_str(), 1);
    try {
      open_gpu_device(kOpenCl);
    } catch (const UserError& e) {
      GTEST_SKIP() << "SKIP: no OpenCL device: " << e.what();
    }
  }
  void TearDown() override {
    if (old_cache_dir_) {
      setenv("TEMPER_CACHE_DIR", old_cache_dir_->c_str(), 1);
    } else {
      unsetenv("TEMPER_CACHE_DIR");
    }
    fs::remove_all(cache_dir_);
  }

  std::string cache_dir_;
  std::optional<std::string> old_cache_dir_;
};

TEST_F(MeasureGpuTest, AnOpenClCandidateIsBuiltCheckedAndTimedOnTheDevice) {
  MeasureInput input = gpu_candidate(kOpenCl);
  Builder builder({.n_parallel = 1, .timeout_s = 60, .work_dir = ""});
  std::vector<BuildArtifact> artifacts = builder.build({input});
  ASSERT_EQ(artifacts[0].error, MeasureError::None) << artifacts[0].message;
  EXPECT_TRUE(artifacts[0].library_path.ends_with(".gpu.json")) << artifacts[0].library_path;
  EXPECT_TRUE(fs::exists(artifacts[0].library_path));
  EXPECT_GT(artifacts[0].compile_seconds, 0);

  RunnerOptions options = quick_runner();
  options.repeat = 4;
  options.cooldown_ms = 20;
  options.flush_cache = true;
  Runner runner(options);
  MeasureResult r = runner.run({input}, artifacts)[0];
  EXPECT_EQ(r.error, MeasureError::None) << r.message;
  ASSERT_EQ(r.costs.size(), 4u);
  for (double c : r.costs) EXPECT_GT(c, 0);
  EXPECT_GT(r.mean, 0);
  EXPECT_GE(r.run_seconds, 3 * 0.020);  // three pauses between four groups
}

// Half of the reduction: every element of C is written, with another value.
TEST_F(MeasureGpuTest, AScheduleThatComputesSomethingElseIsAWrongResult) {
  std::vector<MeasureInput> inputs = {gpu_candidate(kOpenCl, /*reduce=*/32), gpu_candidate(kOpenCl)};
  Builder builder({.n_parallel = 2, .timeout_s = 60, .work_dir = ""});
  std::vector<BuildArtifact> artifacts = builder.build(inputs);
  ASSERT_EQ(artifacts[0].error, MeasureError::None) << artifacts[0].message;
  Runner runner(quick_runner());
  std::vector<MeasureResult> results = runner.run(inputs, artifacts);
  EXPECT_EQ(results[0].error, MeasureError::WrongResult);
  EXPECT_NE(results[0].message.find("elements differ"), std::string::npos) << results[0].message;
  EXPECT_TRUE(results[0].costs.empty());
  EXPECT_EQ(results[1].error, MeasureError::None) << results[1].message;
}

// 8x8 threads per block where the target allows 32: refused before any code is compiled.
TEST_F(MeasureGpuTest, ACandidateOverTheDevicesLimitsIsAnInstantiationError) {
  MeasureInput input = gpu_candidate(Target::parse("opencl -max_threads_per_block=32"));
  Builder builder({.n_parallel = 1, .timeout_s = 60, .work_dir = ""});
  std::vector<BuildArtifact> artifacts = builder.build({input});
  EXPECT_EQ(artifacts[0].error, MeasureError::InstantiationError);
  EXPECT_NE(artifacts[0].message.find("32"), std::string::npos) << artifacts[0].message;
  EXPECT_TRUE(artifacts[0].library_path.empty());
  Runner runner(quick_runner());
  MeasureResult r = runner.run({input}, artifacts)[0];
  EXPECT_EQ(r.error, MeasureError::InstantiationError);
  EXPECT_EQ(r.run_seconds, 0);
}

// A CUDA candidate between two OpenCL ones: timed where there is an NVIDIA GPU, a
// RuntimeError naming the missing device elsewhere; either way the batch goes on.
TEST_F(MeasureGpuTest, ACudaCandidateRunsOnlyWhereThereIsACudaDevice) {
  std::string no_nvrtc;
  if (!nvrtc_available(&no_nvrtc)) GTEST_SKIP() << "SKIP: " << no_nvrtc;
  Target cuda = Target::parse("cuda -arch=sm_80");
  bool has_cuda_device = true;
  try {
    open_gpu_device(cuda);
  } catch (const UserError&) {
    has_cuda_device = false;
  }
  std::vector<MeasureInput> inputs = {gpu_candidate(kOpenCl), gpu_candidate(cuda), gpu_candidate(kOpenCl)};
  Builder builder({.n_parallel = 2, .timeout_s = 60, .work_dir = ""});
  std::vector<BuildArtifact> artifacts = builder.build(inputs);
  ASSERT_EQ(artifacts[1].error, MeasureError::None) << artifacts[1].message;
  EXPECT_TRUE(artifacts[1].library_path.ends_with(".gpu.json"));
  Runner runner(quick_runner());
  std::vector<MeasureResult> results = runner.run(inputs, artifacts);
  if (has_cuda_device) {
    EXPECT_EQ(results[1].error, MeasureError::None) << results[1].message;
    EXPECT_GT(results[1].mean, 0);
  } else {
    EXPECT_EQ(results[1].error, MeasureError::RuntimeError);
    EXPECT_NE(results[1].message.find("no CUDA device"), std::string::npos) << results[1].message;
  }
  EXPECT_EQ(results[0].error, MeasureError::None) << results[0].message;
  EXPECT_EQ(results[2].error, MeasureError::None) << results[2].message;
}

// OpenCL C that does not compile on the device is the candidate's CompileError in the
// worker, which measures the next candidate as usual.
TEST_F(MeasureGpuTest, AProgramTheDeviceDoesNotBuildIsACompileError) {
  std::vector<MeasureInput> inputs = {gpu_candidate(kOpenCl), gpu_candidate(kOpenCl)};
  Builder builder({.n_parallel = 1, .timeout_s = 60, .work_dir = ""});
  std::vector<BuildArtifact> artifacts = builder.build(inputs);
  ASSERT_EQ(artifacts[0].error, MeasureError::None) << artifacts[0].message;
  DeviceProgram broken = DeviceProgram::load(artifacts[0].library_path);
  broken.code += "\nthis is not OpenCL C;\n";
  broken.save(artifacts[0].library_path);
  Runner runner(quick_runner());
  std::vector<MeasureResult> results = runner.run(inputs, artifacts);
  EXPECT_EQ(results[0].error, MeasureError::CompileError);
  EXPECT_NE(results[0].message.find("does not build"), std::string::npos) << results[0].message;
  EXPECT_EQ(results[1].error, MeasureError::None) << results[1].message;
}

// A launch the driver refuses (a work-group the kernel was not compiled for) is the
// candidate's RuntimeError with the driver's words; the next candidate gets a fresh
// worker, in case the failure left the device's context unusable.
TEST_F(MeasureGpuTest, ALaunchTheDeviceRefusesIsARuntimeErrorAndTheNextCandidateGetsAFreshWorker) {
  std::vector<MeasureInput> inputs = {gpu_candidate(kOpenCl), gpu_candidate(kOpenCl), gpu_candidate(kOpenCl)};
  Builder builder({.n_parallel = 1, .timeout_s = 60, .work_dir = ""});
  std::vector<BuildArtifact> artifacts = builder.build(inputs);
  ASSERT_EQ(artifacts[1].error, MeasureError::None) << artifacts[1].message;
  DeviceProgram refused = DeviceProgram::load(artifacts[1].library_path);
  KernelLaunch& launch = refused.functions.at(0).launches.at(0);
  launch.dims.block = {16, 16, 1};
  launch.dims.grid = {1, 1, 1};
  refused.save(artifacts[1].library_path);
  Runner runner(quick_runner());
  MeasureResult first = runner.run({inputs[0]}, {artifacts[0]})[0];
  EXPECT_EQ(first.error, MeasureError::None) << first.message;
  pid_t worker = runner.worker_pid();
  MeasureResult failed = runner.run({inputs[1]}, {artifacts[1]})[0];
  EXPECT_EQ(failed.error, MeasureError::RuntimeError);
  EXPECT_NE(failed.message.find("CL_INVALID_WORK_GROUP_SIZE"), std::string::npos) << failed.message;
  EXPECT_EQ(runner.worker_pid(), 0) << "the worker that saw the failure was kept";
  MeasureResult next = runner.run({inputs[2]}, {artifacts[2]})[0];
  EXPECT_EQ(next.error, MeasureError::None) << next.message;
  EXPECT_NE(runner.worker_pid(), worker);
}

// A GPU target's records name the device the times were taken on; a CPU target's do not.
TEST_F(MeasureGpuTest, AGpuTargetsFingerprintNamesItsDevice) {
  tuning_db::TargetInfo info = tuning_db::host_target_info(kOpenCl);
  EXPECT_EQ(info.target, "opencl");
  EXPECT_EQ(info.device, open_gpu_device(kOpenCl)->info().fingerprint());
  EXPECT_NE(info.device.find("OpenCL"), std::string::npos) << info.device;
  EXPECT_TRUE(tuning_db::host_target_info(Target::parse("llvm")).device.empty());
  // A device this machine does not have leaves the field empty rather than failing.
  EXPECT_TRUE(tuning_db::host_target_info(Target::parse("opencl -device=99")).device.empty());
}

// The tune loop on a GPU target: every trial measured on the device and logged with the
// device's fingerprint.
TEST_F(MeasureGpuTest, ATuningJobOnAnOpenClTargetLogsTheDevice) {
  if (!schedule_space::find_template("matmul", kOpenCl)) GTEST_SKIP() << "SKIP: no GPU template for matmul";
  auto task = schedule_space::Task::create(ops::Workload::parse("matmul:M=32,N=32,K=32"), kOpenCl);
  std::unique_ptr<search::Tuner> tuner = search::make_tuner("random", *task, 1);
  Builder builder({.n_parallel = 2, .timeout_s = 60, .work_dir = ""});
  Runner runner(quick_runner());
  tuning_db::MemoryDatabase db;
  search::TuneOptions options;
  options.trials = 4;
  options.batch_size = 2;
  search::TuneResult result = search::tune(*task, *tuner, builder, runner, db, options);
  EXPECT_EQ(result.trials_measured, 4);
  ASSERT_TRUE(result.best.has_value());
  // The trials, and the re-measurements of the best three (confirmation).
  std::vector<tuning_db::TuningRecord> records = db.all_records();
  EXPECT_GE(result.confirmations, 4);
  ASSERT_EQ(records.size(), 4u + result.confirmations);
  std::string fingerprint = open_gpu_device(kOpenCl)->info().fingerprint();
  for (const tuning_db::TuningRecord& r : records) {
    EXPECT_EQ(r.target.target, "opencl");
    EXPECT_EQ(r.target.device, fingerprint);
  }
}

}  // namespace
}  // namespace temper::measure
