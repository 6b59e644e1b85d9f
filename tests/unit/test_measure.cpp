// The measurer on real candidates: the builder compiles scheduled operators into shared
// libraries in parallel, the runner's worker process checks and times them; a wrong
// result, a compile error and a compile time-out are told apart.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <thread>

#include "compiler/ops/cpu_schedules.h"
#include "compiler/runtime/c_runtime_api.h"
#include "measure/builder.h"
#include "measure/cache_eviction.h"
#include "measure/machine_share.h"
#include "measure/runner.h"
#include "measure/worker_protocol.h"
#include "schedule_space/template.h"
#include "tuning_db/record.h"

namespace temper::measure {
namespace {

namespace fs = std::filesystem;

const Target kNative = Target::parse("llvm -mcpu=native");

MeasureInput default_candidate(const std::string& workload_text, const Target& target = kNative) {
  ops::Workload workload = ops::Workload::parse(workload_text);
  ops::OpInstance op = ops::instantiate(workload);
  return {workload, target, ops::schedule_cpu_default(op, target).func(), std::nullopt, -1, ""};
}

RunnerOptions quick_runner() {
  RunnerOptions options;
  options.repeat = 3;
  options.min_repeat_ms = 1;
  options.timeout_s = 20;
  return options;
}

// Builds input alone and measures it with options.
MeasureResult build_and_run(const MeasureInput& input, const RunnerOptions& options) {
  Builder builder({.n_parallel = 1, .timeout_s = 60, .work_dir = ""});
  std::vector<BuildArtifact> artifacts = builder.build({input});
  Runner runner(options);
  return runner.run({input}, artifacts)[0];
}

TEST(MeasureTypes, ErrorNamesAreTheTuningLogs) {
  for (int e = 0; e <= static_cast<int>(MeasureError::InstantiationError); ++e) {
    auto error = static_cast<MeasureError>(e);
    EXPECT_EQ(static_cast<int>(tuning_db::parse_error_kind(error_name(error))), e) << error_name(error);
    EXPECT_EQ(parse_error_name(error_name(error)), error);
  }
  EXPECT_STREQ(error_name(MeasureError::WrongResult), "WrongResult");
}

TEST(WorkerProtocol, RequestsAndRepliesRoundTripAsOneLine) {
  WorkerRequest request;
  request.workload = "matmul:M=2,N=3,K=4,transpose_a=0,transpose_b=0,dtype=float32";
  request.target = "opencl -device=1";
  request.library = "/tmp/x y/lib.so";
  request.function = "matmul";
  request.number = 4;
  request.repeat = 5;
  request.min_repeat_ms = 2.5;
  request.cooldown_ms = 1;
  request.flush_cache = true;
  request.cold_caches = true;
  request.threads = 2;
  request.token = "c0ffee";
  request.memory_limit_mb = 512;
  request.cpu_time_limit_s = 21.5;
  std::string line = encode_request(request);
  EXPECT_EQ(line.find("pack_function"), std::string::npos) << "no pack: no pack fields";
  EXPECT_EQ(line.find('\n'), std::string::npos);
  WorkerRequest back = decode_request(line);
  EXPECT_EQ(back.workload, request.workload);
  EXPECT_EQ(back.target, request.target);
  EXPECT_EQ(back.library, request.library);
  EXPECT_EQ(back.function, request.function);
  EXPECT_EQ(back.number, 4);
  EXPECT_EQ(back.repeat, 5);
  EXPECT_EQ(back.min_repeat_ms, 2.5);
  EXPECT_EQ(back.cooldown_ms, 1);
  EXPECT_TRUE(back.flush_cache);
  EXPECT_TRUE(back.cold_caches);
  EXPECT_EQ(back.threads, 2);
  EXPECT_EQ(back.token, "c0ffee");
  EXPECT_EQ(back.memory_limit_mb, 512);
  EXPECT_EQ(back.cpu_time_limit_s, 21.5);
  EXPECT_TRUE(back.pack_function.empty());
  request.pack_function = "conv2d_weight_pack";
  request.packed_input = 1;
  request.packed_shape = {2, 3, 3, 3, 16};
  back = decode_request(encode_request(request));
  EXPECT_EQ(back.pack_function, "conv2d_weight_pack");
  EXPECT_EQ(back.packed_input, 1);
  EXPECT_EQ(back.packed_shape, request.packed_shape);

  WorkerReply reply;
  reply.error = MeasureError::WrongResult;
  reply.message = "output 0: 3 of 4 elements differ\nsecond line";
  reply.token = "c0ffee";
  reply.restart = true;
  line = encode_reply(reply);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  WorkerReply reply_back = decode_reply(line);
  EXPECT_EQ(reply_back.error, MeasureError::WrongResult);
  EXPECT_EQ(reply_back.message, reply.message);
  EXPECT_EQ(reply_back.token, "c0ffee");
  EXPECT_TRUE(reply_back.restart);

  EXPECT_TRUE(is_ready(encode_ready("c0ffee"), "c0ffee"));
  EXPECT_FALSE(is_ready(encode_ready("beef"), "c0ffee"));  // another request's, or forged
  EXPECT_FALSE(is_ready(line, "c0ffee"));

  CompileRequest compile{
      7, "matmul:M=8,N=8,K=8", "llvm -mcpu=native", "{\"config\": null}", ~uint64_t{0}, 0, "/tmp/c.so", 2.5};
  line = encode_compile_request(compile);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  CompileRequest compile_back = decode_compile_request(line);
  EXPECT_EQ(compile_back.id, 7u);
  EXPECT_EQ(compile_back.recipe, compile.recipe);
  EXPECT_EQ(compile_back.func_hash, ~uint64_t{0});  // a 64-bit hash survives JSON
  EXPECT_EQ(compile_back.path, "/tmp/c.so");
  EXPECT_EQ(compile_back.timeout_s, 2.5);
  CompileReply compiled{7, true, MeasureError::CompileError, "LLVM said\nno", 0.25};
  CompileReply compiled_back = decode_compile_reply(encode_compile_reply(compiled));
  EXPECT_TRUE(compiled_back.rebuilt);
  EXPECT_EQ(compiled_back.error, MeasureError::CompileError);
  EXPECT_EQ(compiled_back.message, "LLVM said\nno");
  EXPECT_THROW(decode_compile_reply("{\"id\": 1}"), UserError);
  EXPECT_THROW(decode_compile_request("[]"), UserError);

  EXPECT_THROW(decode_reply("{\"costs\": [], \"error\": \"Oops\", \"message\": \"\"}"), UserError);
  EXPECT_THROW(decode_request("{\"workload\": \"matmul:M=1,N=1,K=1\"}"), UserError);
  EXPECT_THROW(decode_reply("not json"), UserError);
}

// Four candidates of two ops compiled on four threads at once, then checked and timed:
// parallel LLVM compiles produce correct code.
TEST(Measure, BuildsChecksAndTimesDefaultMatmulAndConv) {
  std::vector<MeasureInput> inputs = {
      default_candidate("matmul:M=64,N=48,K=32"),
      default_candidate("conv2d:N=1,C=8,H=12,W=12,K=16,R=3,S=3,pad=1"),
      default_candidate("matmul:M=33,N=17,K=9"),
      default_candidate("conv2d:N=1,C=4,H=9,W=9,K=8,R=3,S=3,stride=2"),
  };
  Builder builder({.n_parallel = 4, .timeout_s = 60, .work_dir = ""});
  std::vector<BuildArtifact> artifacts = builder.build(inputs);
  ASSERT_EQ(artifacts.size(), inputs.size());
  for (size_t i = 0; i < artifacts.size(); ++i) {
    SCOPED_TRACE(inputs[i].workload.to_string());
    EXPECT_EQ(artifacts[i].error, MeasureError::None) << artifacts[i].message;
    EXPECT_TRUE(fs::exists(artifacts[i].library_path));
    EXPECT_EQ(artifacts[i].function_name, inputs[i].workload.op);
    EXPECT_GT(artifacts[i].compile_seconds, 0);
  }

  Runner runner(quick_runner());
  std::vector<MeasureResult> results = runner.run(inputs, artifacts);
  ASSERT_EQ(results.size(), inputs.size());
  for (size_t i = 0; i < results.size(); ++i) {
    SCOPED_TRACE(inputs[i].workload.to_string());
    const MeasureResult& r = results[i];
    EXPECT_EQ(r.error, MeasureError::None) << r.message;
    ASSERT_EQ(r.costs.size(), 3u);
    for (double c : r.costs) EXPECT_GT(c, 0);
    EXPECT_DOUBLE_EQ(r.mean, std::accumulate(r.costs.begin(), r.costs.end(), 0.0) / 3);
    EXPECT_EQ(r.compile_seconds, artifacts[i].compile_seconds);
    EXPECT_GE(r.run_seconds, 3 * 1e-3);  // three groups of at least 1 ms
  }
  EXPECT_GT(runner.worker_pid(), 0);

  // The next batch replaces the libraries of this one.
  std::vector<BuildArtifact> next = builder.build({inputs[0]});
  EXPECT_EQ(next[0].error, MeasureError::None);
  EXPECT_NE(next[0].library_path, artifacts[0].library_path);
  EXPECT_FALSE(fs::exists(artifacts[0].library_path));
}

// The PrimFunc of add over A[64,64], B[64,64] takes exactly matmul's parameters: it runs,
// and its outputs are wrong.
TEST(Measure, AnotherOpWithTheSameParametersIsAWrongResult) {
  MeasureInput matmul = default_candidate("matmul:M=64,N=64,K=64");
  MeasureInput impostor = matmul;
  impostor.func =
      ops::schedule_cpu_default(ops::instantiate(ops::Workload::parse("add:A=64x64,B=64x64")), kNative).func();
  Builder builder({.n_parallel = 2, .timeout_s = 60, .work_dir = ""});
  std::vector<MeasureInput> inputs = {impostor, matmul};
  std::vector<BuildArtifact> artifacts = builder.build(inputs);
  ASSERT_EQ(artifacts[0].error, MeasureError::None) << artifacts[0].message;
  Runner runner(quick_runner());
  std::vector<MeasureResult> results = runner.run(inputs, artifacts);
  EXPECT_EQ(results[0].error, MeasureError::WrongResult);
  EXPECT_NE(results[0].message.find("elements differ"), std::string::npos) << results[0].message;
  EXPECT_TRUE(results[0].costs.empty());
  EXPECT_EQ(results[0].mean, 0);
  EXPECT_EQ(results[1].error, MeasureError::None) << results[1].message;
}

TEST(Measure, CompileErrorsAreReportedAndNotRun) {
  MeasureInput unknown_cpu = default_candidate("matmul:M=8,N=8,K=8");
  unknown_cpu.target = Target::parse("llvm -mcpu=nosuchcpu");
  MeasureInput c_target = default_candidate("matmul:M=8,N=8,K=8");
  c_target.target = Target::parse("c");
  Builder builder({.n_parallel = 2, .timeout_s = 60, .work_dir = ""});
  std::vector<MeasureInput> inputs = {unknown_cpu, c_target, default_candidate("matmul:M=8,N=8,K=8")};
  std::vector<BuildArtifact> artifacts = builder.build(inputs);
  EXPECT_EQ(artifacts[0].error, MeasureError::CompileError);
  EXPECT_NE(artifacts[0].message.find("unknown CPU 'nosuchcpu'"), std::string::npos) << artifacts[0].message;
  EXPECT_TRUE(artifacts[0].library_path.empty());
  EXPECT_EQ(artifacts[1].error, MeasureError::CompileError);
  EXPECT_NE(artifacts[1].message.find("needs an llvm target"), std::string::npos) << artifacts[1].message;
  EXPECT_EQ(artifacts[2].error, MeasureError::None) << artifacts[2].message;

  Runner runner(quick_runner());
  std::vector<MeasureResult> results = runner.run(inputs, artifacts);
  EXPECT_EQ(results[0].error, MeasureError::CompileError);
  EXPECT_EQ(results[0].message, artifacts[0].message);
  EXPECT_EQ(results[0].run_seconds, 0);
  EXPECT_EQ(results[1].error, MeasureError::CompileError);
  EXPECT_EQ(results[2].error, MeasureError::None) << results[2].message;
}

// A compile past the time-out is killed with its process: its library is not left
// behind, and the candidates behind it are compiled (here: time out) in turn.
TEST(Measure, ACompilePastTheTimeOutIsKilled) {
  fs::path dir = fs::temp_directory_path() / ("temper_test_measure_" + std::to_string(getpid()));
  fs::remove_all(dir);
  {
    Builder builder({.n_parallel = 1, .timeout_s = 1e-3, .work_dir = dir.string()});
    std::vector<MeasureInput> inputs = {default_candidate("matmul:M=64,N=64,K=64"),
                                        default_candidate("matmul:M=32,N=32,K=32")};
    std::vector<BuildArtifact> artifacts = builder.build(inputs);
    for (const BuildArtifact& a : artifacts) {
      EXPECT_EQ(a.error, MeasureError::CompileTimeout);
      EXPECT_NE(a.message.find("longer than the time-out of 0.001 s; its compile process was killed"),
                std::string::npos)
          << a.message;
      EXPECT_TRUE(a.library_path.empty());
      EXPECT_LT(a.compile_seconds, 5);
    }
    EXPECT_TRUE(fs::is_empty(dir)) << "a killed compile left its library behind";
  }
  fs::remove_all(dir);
}

// A crash inside LLVM while compiling one candidate (forced here by
// $TEMPER_TEST_CRASH_IN_LLVM) is that candidate's compile error: the tuning process, whose
// threads compile, goes on, and so do the other candidates and later builds.
TEST(Measure, ACrashInsideLLVMIsACompileErrorOfThatCandidate) {
  MeasureInput crashing = default_candidate("matmul:M=16,N=16,K=16");
  MeasureInput fine = default_candidate("conv2d:N=1,C=4,H=8,W=8,K=4,R=3,S=3,pad=1");
  ASSERT_NE(crashing.func.name, fine.func.name);
  setenv("TEMPER_TEST_CRASH_IN_LLVM", crashing.func.name.c_str(), 1);
  std::vector<BuildArtifact> artifacts;
  {
    Builder builder({.n_parallel = 2, .timeout_s = 60, .work_dir = ""});
    artifacts = builder.build({crashing, fine, crashing});
  }
  unsetenv("TEMPER_TEST_CRASH_IN_LLVM");
  for (int i : {0, 2}) {
    EXPECT_EQ(artifacts[i].error, MeasureError::CompileError);
    EXPECT_NE(artifacts[i].message.find("LLVM crashed compiling " + crashing.func.name + " (signal 11, "),
              std::string::npos)
        << artifacts[i].message;
  }
  EXPECT_EQ(artifacts[1].error, MeasureError::None) << artifacts[1].message;
  Builder again({.n_parallel = 1, .timeout_s = 60, .work_dir = ""});
  EXPECT_EQ(again.build({crashing})[0].error, MeasureError::None);
}

// A compile that ends its process (exit(), or a crash LLVM's recovery does not catch) is
// that candidate's compile error: each candidate compiles in a process of its own.
TEST(Measure, ACompileThatEndsItsProcessIsACompileErrorOfThatCandidate) {
  MeasureInput exiting = default_candidate("matmul:M=16,N=16,K=16");
  MeasureInput fine = default_candidate("conv2d:N=1,C=4,H=8,W=8,K=4,R=3,S=3,pad=1");
  setenv("TEMPER_TEST_CRASH_IN_LLVM", (exiting.func.name + ":exit").c_str(), 1);
  std::vector<BuildArtifact> artifacts;
  {
    Builder builder({.n_parallel = 2, .timeout_s = 60, .work_dir = ""});
    artifacts = builder.build({exiting, fine, exiting});
    EXPECT_TRUE(fs::exists(artifacts[1].library_path));
  }
  unsetenv("TEMPER_TEST_CRASH_IN_LLVM");
  for (int i : {0, 2}) {
    EXPECT_EQ(artifacts[i].error, MeasureError::CompileError);
    EXPECT_NE(artifacts[i].message.find("the process compiling " + exiting.func.name +
                                        " exited with status 70 before it answered"),
              std::string::npos)
        << artifacts[i].message;
    EXPECT_TRUE(artifacts[i].library_path.empty());
  }
  EXPECT_EQ(artifacts[1].error, MeasureError::None) << artifacts[1].message;
}

// A job killed by SIGKILL leaves its work directory; the next builder removes it, and
// leaves alone those of running processes and directories it did not name.
TEST(Measure, ABuilderRemovesTheWorkDirectoriesOfDeadProcesses) {
  fs::path temp = fs::temp_directory_path() / str("temper_stale_work_dirs_", getpid());
  fs::create_directories(temp);
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  waitpid(dead, nullptr, 0);
  fs::path stale = temp / str("temper-measure-", dead, "-abc123");
  fs::path alive = temp / str("temper-measure-", getppid(), "-def456");
  fs::path unnamed = temp / "temper-measure-Xy12Zw";
  for (const fs::path& dir : {stale, alive, unnamed}) {
    fs::create_directories(dir);
    std::ofstream(dir / "candidate.so") << "library";
  }
  const char* saved = std::getenv("TMPDIR");
  std::string saved_value = saved ? saved : "";
  setenv("TMPDIR", temp.c_str(), 1);
  fs::path own;
  {
    Builder builder({.n_parallel = 1, .timeout_s = 60, .work_dir = ""});
    for (const fs::directory_entry& entry : fs::directory_iterator(temp)) {
      if (entry.path().filename().string().rfind(str("temper-measure-", getpid(), "-"), 0) == 0) own = entry.path();
    }
  }
  saved ? setenv("TMPDIR", saved_value.c_str(), 1) : unsetenv("TMPDIR");
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(alive / "candidate.so"));
  EXPECT_TRUE(fs::exists(unnamed / "candidate.so"));
  EXPECT_FALSE(own.empty()) << "the builder's own directory is not named after its process";
  EXPECT_FALSE(fs::exists(own));
  fs::remove_all(temp);
}

TEST(Measure, AWorkloadTheWorkerCannotInstantiateIsAnInstantiationError) {
  MeasureInput input = default_candidate("matmul:M=8,N=8,K=8");
  Builder builder({.n_parallel = 1, .timeout_s = 60, .work_dir = ""});
  std::vector<BuildArtifact> artifacts = builder.build({input});
  input.workload.params[0].second = "0";  // M=0
  Runner runner(quick_runner());
  MeasureResult r = runner.run({input}, artifacts)[0];
  EXPECT_EQ(r.error, MeasureError::InstantiationError);
  EXPECT_NE(r.message.find("matmul:M=0"), std::string::npos) << r.message;
}

// The reference outputs of a 768^3 matmul take the worker about a second; the
// candidate's 0.5 s time-out starts only when they are ready.
TEST(Measure, TheTimeOutCoversTheCandidateNotTheWorkersPreparation) {
  RunnerOptions options = quick_runner();
  options.repeat = 1;
  options.min_repeat_ms = 0;
  options.timeout_s = 0.4;
  options.threads = 1;
  // The conv's reference is a naive loop nest (a second or more); the tuning template's
  // default config runs it in about 20 ms: a hundredfold margin on either side of the
  // time-out, which holds on a busy machine too.
  auto task =
      schedule_space::Task::create(ops::Workload::parse("conv2d:N=1,C=256,H=28,W=28,K=256,R=3,S=3,pad=1"), kNative);
  MeasureInput candidate{task->workload(), kNative, task->apply(task->default_config()).func(), std::nullopt, -1, ""};
  MeasureResult r = build_and_run(candidate, options);
  EXPECT_EQ(r.error, MeasureError::None) << r.message;
  EXPECT_GT(r.run_seconds, options.timeout_s) << "the reference was quick: the test shows nothing";
}

// A conv2d config that computes in NCHWc is measured as a model runs it: the worker packs
// the weight once with the candidate's pack function and times the compute function on
// the packed array, checked against the op's reference all the same. A pack function of
// another block size gives the compute function an array of the wrong shape: an error,
// never a time.
TEST(Measure, APrepackedCandidateRunsOnItsWeightPackedOnce) {
  auto task =
      schedule_space::Task::create(ops::Workload::parse("conv2d:N=1,C=8,H=10,W=10,K=32,R=3,S=3,pad=1"), kNative);
  auto prepacked_of = [&](int64_t kb) {
    nlohmann::json j = task->default_config().to_json();
    j["knobs"]["layout"] = "NCHWc";
    j["knobs"]["tile_k"] = kb;
    j["knobs"]["tile_q"] = 2;
    std::optional<schedule_space::PrepackedSchedule> p = task->apply_prepacked(task->space().from_json(j));
    EXPECT_TRUE(p.has_value());
    return *p;
  };
  schedule_space::PrepackedSchedule p16 = prepacked_of(16), p8 = prepacked_of(8);
  MeasureInput candidate{task->workload(), kNative, p16.compute.func(), p16.pack.func(), p16.input, ""};
  for (bool cold : {true, false}) {
    RunnerOptions options = quick_runner();
    options.cold_caches = cold;
    MeasureResult r = build_and_run(candidate, options);
    EXPECT_EQ(r.error, MeasureError::None) << r.message;
    EXPECT_EQ(r.costs.size(), 3u);
  }
  MeasureInput mismatched = candidate;
  mismatched.pack = p8.pack.func();
  MeasureResult r = build_and_run(mismatched, quick_runner());
  EXPECT_NE(r.error, MeasureError::None);
  EXPECT_TRUE(r.costs.empty());
}

TEST(Measure, TheOpsSayWhichInputsAreAModelsWeights) {
  auto weights = [](const std::string& w) { return ops::instantiate(ops::Workload::parse(w)).weight_inputs; };
  EXPECT_EQ(weights("conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3"), std::vector<int>{1});
  EXPECT_EQ(weights("depthwise_conv2d:N=1,C=8,H=8,W=8,R=3,S=3"), std::vector<int>{1});
  EXPECT_EQ(weights("dense:M=1,N=8,K=8,bias=1"), (std::vector<int>{1, 2}));
  EXPECT_EQ(weights("dense:M=1,N=8,K=8"), std::vector<int>{1});
  EXPECT_EQ(weights("matmul:M=8,N=8,K=8"), std::vector<int>{1});
  EXPECT_TRUE(weights("batch_matmul:B=2,M=8,N=8,K=8").empty());  // attention's operands are activations
  EXPECT_TRUE(weights("add:A=8x8,B=8x8").empty());
}

TEST(Measure, TimingOptionsReachTheWorker) {
  RunnerOptions options = quick_runner();
  options.repeat = 4;
  options.cooldown_ms = 20;
  options.flush_cache = true;
  options.threads = 1;
  MeasureResult r = build_and_run(default_candidate("matmul:M=16,N=16,K=16"), options);
  EXPECT_EQ(r.error, MeasureError::None) << r.message;
  EXPECT_EQ(r.costs.size(), 4u);
  EXPECT_GE(r.run_seconds, 3 * 0.020);  // three pauses between four groups
}

// Four jobs' phases, two of them exclusive (a CPU target's timings), through one
// MachineShare: an exclusive phase never overlaps another phase, shared phases do overlap.
TEST(MachineShare, AnExclusivePhaseRunsAloneAndSharedPhasesOverlap) {
  MachineShare share;
  std::atomic<int> running{0};
  std::atomic<int> exclusive_running{0};
  std::atomic<int> most_shared_at_once{0};
  std::atomic<bool> overlapped_an_exclusive{false};
  auto phase = [&](bool exclusive) {
    share.run(exclusive, [&] {
      int now = ++running;
      if (exclusive) ++exclusive_running;
      if (exclusive_running > 0 && now > 1) overlapped_an_exclusive = true;
      if (!exclusive) {
        int seen = most_shared_at_once;
        while (now > seen && !most_shared_at_once.compare_exchange_weak(seen, now)) {
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      if (exclusive) --exclusive_running;
      --running;
    });
  };
  std::vector<std::thread> jobs;
  for (int j = 0; j < 4; ++j) {
    jobs.emplace_back([&, j] {
      for (int batch = 0; batch < 10; ++batch) {
        phase(false);       // a build
        phase(j % 2 == 0);  // a timing: exclusive for the "CPU" jobs
      }
    });
  }
  for (std::thread& job : jobs) job.join();
  EXPECT_FALSE(overlapped_an_exclusive);
  EXPECT_GE(most_shared_at_once, 2);
  // An exception ends the phase's turn: the next exclusive phase still gets one.
  EXPECT_THROW(share.run(true, [] { throw UserError("boom"); }), UserError);
  bool ran = false;
  share.run(true, [&] { ran = true; });
  EXPECT_TRUE(ran);
}

TEST(Measure, RunnerFindsOrNamesItsWorker) {
  RunnerOptions options;
  options.worker_path = "/nonexistent/temper-measure-worker";
  try {
    Runner runner(options);
    FAIL() << "a missing worker was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/temper-measure-worker"), std::string::npos) << e.what();
  }
  // Without a path, the worker is found beside the build tree's programs.
  EXPECT_NO_THROW(Runner{RunnerOptions{}});
  setenv("TEMPER_MEASURE_WORKER", "/nonexistent/worker", 1);
  EXPECT_THROW(Runner{RunnerOptions{}}, UserError);
  unsetenv("TEMPER_MEASURE_WORKER");
}

// Rewriting a blocked activation row-split leaves every value as it was, on any thread
// count and with rows that do not split evenly; an array of another rank is left alone.
TEST(Measure, WriteRowsSplitKeepsTheValues) {
  std::vector<int64_t> shape = {2, 3, 5, 7, 16};  // [N, C/b, H, W, b]: 5 rows over 2 threads
  std::vector<float> data(2 * 3 * 5 * 7 * 16);
  std::iota(data.begin(), data.end(), 0.5f);
  const std::vector<float> before = data;
  for (int threads : {1, 2, 3}) {
    temper_set_num_threads(threads);
    write_rows_split(data.data(), shape, sizeof(float));
    EXPECT_EQ(data, before) << threads << " threads";
  }
  temper_set_num_threads(0);
  write_rows_split(data.data(), {2, 3, 5 * 7 * 16}, sizeof(float));
  EXPECT_EQ(data, before);
}

}  // namespace
}  // namespace temper::measure
