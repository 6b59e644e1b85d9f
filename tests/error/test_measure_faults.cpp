// Candidates that crash, abort, hang, exit, fork, allocate without end, forge a reply or
// report an error cost themselves only: each gets its error with a message naming the
// signal, the time-out or what it did, the worker process is replaced where it was lost
// or spoilt, and the good candidate behind it in the batch is measured.
//
// The candidates are real shared libraries, compiled here from C with the runtime's
// calling convention (compiler/runtime/c_runtime_api.h), each exporting temper_fn_<name>.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "compiler/codegen/c/c_runtime_api_text.h"
#include "compiler/ir/error.h"
#include "measure/runner.h"

namespace temper::measure {
namespace {

namespace fs = std::filesystem;

const char* kWorkload = "matmul:M=8,N=8,K=8";

const char* kCandidates = R"(
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "c_runtime_api.h"

/* C[8,8] = A[8,8] B[8,8]: correct. */
int32_t temper_fn_good(const TemperTensor* args, int32_t num_args) {
  const float* a = (const float*)args[0].data;
  const float* b = (const float*)args[1].data;
  float* c = (float*)args[2].data;
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      float sum = 0;
      for (int k = 0; k < 8; ++k) sum += a[i * 8 + k] * b[k * 8 + j];
      c[i * 8 + j] = sum;
    }
  }
  return 0;
}

int32_t temper_fn_segfault(const TemperTensor* args, int32_t num_args) {
  *(volatile int*)0 = 1;
  return 0;
}

int32_t temper_fn_aborts(const TemperTensor* args, int32_t num_args) {
  abort();
}

int32_t temper_fn_hangs(const TemperTensor* args, int32_t num_args) {
  volatile int forever = 1;
  while (forever) {
  }
  return 0;
}

/* Correct output, but it scribbles over A on the way. */
int32_t temper_fn_writes_input(const TemperTensor* args, int32_t num_args) {
  int32_t status = temper_fn_good(args, num_args);
  ((float*)args[0].data)[5] = 1e6f;
  return status;
}

int32_t temper_fn_exits(const TemperTensor* args, int32_t num_args) {
  exit(3);
}

/* Writes a reply with a time of 1 ns into every descriptor the reply channel may be. */
int32_t temper_fn_forges_reply(const TemperTensor* args, int32_t num_args) {
  const char* fake = "{\"costs\": [1e-09, 1e-09], \"error\": \"None\", \"message\": \"\", \"token\": \"\", \"restart\": false}\n";
  for (int fd = 3; fd < 10; ++fd) write(fd, fake, strlen(fake));
  return temper_fn_good(args, num_args);
}

/* A child that waits for ever, and one that returns into the worker's code. */
int32_t temper_fn_forks_and_lingers(const TemperTensor* args, int32_t num_args) {
  if (fork() == 0) {
    for (;;) pause();
  }
  return temper_fn_good(args, num_args);
}

int32_t temper_fn_forks_and_returns(const TemperTensor* args, int32_t num_args) {
  fork();
  return temper_fn_good(args, num_args);
}

/* Takes memory until none is given, then computes the right answer. */
int32_t temper_fn_allocates_without_end(const TemperTensor* args, int32_t num_args) {
  for (;;) {
    char* block = (char*)malloc(1 << 24);
    if (!block) break;
    memset(block, 1, 1 << 24);
  }
  return temper_fn_good(args, num_args);
}

int32_t temper_fn_reports_error(const TemperTensor* args, int32_t num_args) {
  temper_set_last_error("reports_error: the tile does not fit");
  return -1;
}
)";

// The candidates' library, built once for all tests.
class MeasureFaults : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("temper_test_measure_faults_" + std::to_string(getpid())));
    fs::create_directories(*dir_);
    std::ofstream(*dir_ / "c_runtime_api.h") << c_runtime_api_text();
    std::ofstream(*dir_ / "candidates.c") << kCandidates;
    std::string command = "cc -shared -fPIC -O1 -o '" + (*dir_ / "candidates.so").string() + "' '" +
                          (*dir_ / "candidates.c").string() + "'";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }

  static MeasureInput input() {
    ops::Workload workload = ops::Workload::parse(kWorkload);
    return {workload, Target::parse("llvm"), ops::instantiate(workload).func, std::nullopt, -1};
  }
  static BuildArtifact artifact(const std::string& function) {
    BuildArtifact a;
    a.library_path = (*dir_ / "candidates.so").string();
    a.function_name = function;
    return a;
  }
  static RunnerOptions options() {
    RunnerOptions o;
    o.repeat = 2;
    o.timeout_s = 1.5;
    return o;
  }

  // Runs one good candidate to start the worker, then `bad` followed by a good one.
  // Returns the results of the second batch and the worker's pids before and after.
  struct Outcome {
    MeasureResult bad;
    MeasureResult next;
    pid_t pid_before = 0;
    pid_t pid_after = 0;
  };
  static Outcome run_after_a_good_one(Runner& runner, const std::string& bad) {
    Outcome out;
    MeasureResult warm = runner.run({input()}, {artifact("good")})[0];
    EXPECT_EQ(warm.error, MeasureError::None) << warm.message;
    out.pid_before = runner.worker_pid();
    std::vector<MeasureResult> results = runner.run({input(), input()}, {artifact(bad), artifact("good")});
    out.bad = results[0];
    out.next = results[1];
    out.pid_after = runner.worker_pid();
    return out;
  }

  static void expect_replaced_worker(const Outcome& out) {
    EXPECT_GT(out.pid_before, 0);
    EXPECT_GT(out.pid_after, 0);
    EXPECT_NE(out.pid_after, out.pid_before);
    // The lost worker was reaped: its pid names no process of ours any more.
    EXPECT_EQ(kill(out.pid_before, 0), -1);
    EXPECT_EQ(errno, ESRCH);
    EXPECT_EQ(out.next.error, MeasureError::None) << out.next.message;
    EXPECT_EQ(out.next.costs.size(), 2u);
    EXPECT_GT(out.next.mean, 0);
  }

  static fs::path* dir_;
};

fs::path* MeasureFaults::dir_ = nullptr;

TEST_F(MeasureFaults, ASegfaultIsARuntimeErrorNamingTheSignal) {
  Runner runner(options());
  Outcome out = run_after_a_good_one(runner, "segfault");
  EXPECT_EQ(out.bad.error, MeasureError::RuntimeError);
  EXPECT_NE(out.bad.message.find("worker died with SIGSEGV (Segmentation fault) running segfault"), std::string::npos)
      << out.bad.message;
  EXPECT_TRUE(out.bad.costs.empty());
  expect_replaced_worker(out);
}

TEST_F(MeasureFaults, AnAbortIsARuntimeErrorNamingTheSignal) {
  Runner runner(options());
  Outcome out = run_after_a_good_one(runner, "aborts");
  EXPECT_EQ(out.bad.error, MeasureError::RuntimeError);
  EXPECT_NE(out.bad.message.find("worker died with SIGABRT (Aborted) running aborts"), std::string::npos)
      << out.bad.message;
  expect_replaced_worker(out);
}

TEST_F(MeasureFaults, AHangIsARunTimeoutAndTheWorkerIsKilled) {
  Runner runner(options());
  Outcome out = run_after_a_good_one(runner, "hangs");
  EXPECT_EQ(out.bad.error, MeasureError::RunTimeout);
  EXPECT_NE(out.bad.message.find("timed out after 1.5 s running hangs"), std::string::npos) << out.bad.message;
  EXPECT_GE(out.bad.run_seconds, 1.5);
  EXPECT_LT(out.bad.run_seconds, 5);
  expect_replaced_worker(out);
}

TEST_F(MeasureFaults, AnExitIsARuntimeErrorNamingTheStatus) {
  Runner runner(options());
  Outcome out = run_after_a_good_one(runner, "exits");
  EXPECT_EQ(out.bad.error, MeasureError::RuntimeError);
  EXPECT_NE(out.bad.message.find("worker exited with status 3 running exits"), std::string::npos) << out.bad.message;
  expect_replaced_worker(out);
}

// The candidate runs inside the worker and can write into its reply channel: a reply
// without the request's token is not taken (a forged 1 ns time would otherwise be the
// log's best), and the worker, out of step, is replaced.
TEST_F(MeasureFaults, AForgedReplyIsARuntimeErrorNotATime) {
  Runner runner(options());
  Outcome out = run_after_a_good_one(runner, "forges_reply");
  EXPECT_EQ(out.bad.error, MeasureError::RuntimeError);
  EXPECT_TRUE(out.bad.costs.empty());
  EXPECT_NE(out.bad.message.find("without this request's token, so written by the candidate"), std::string::npos)
      << out.bad.message;
  expect_replaced_worker(out);
}

// Processes a candidate starts are killed and make it a runtime error; a forked copy of
// the worker that returns from the candidate leaves without a word. The worker goes on.
TEST_F(MeasureFaults, AForkIsARuntimeErrorAndItsProcessesAreKilled) {
  for (const char* bad : {"forks_and_lingers", "forks_and_returns"}) {
    SCOPED_TRACE(bad);
    Runner runner(options());
    Outcome out = run_after_a_good_one(runner, bad);
    EXPECT_EQ(out.bad.error, MeasureError::RuntimeError);
    EXPECT_NE(out.bad.message.find("(fork), which a kernel may not;"), std::string::npos) << out.bad.message;
    EXPECT_EQ(out.pid_after, out.pid_before);
    EXPECT_EQ(out.next.error, MeasureError::None) << out.next.message;
    // No process of the worker's is left: its only descendants would be the forked ones.
    std::ifstream children(str("/proc/", out.pid_after, "/task/", out.pid_after, "/children"));
    std::string left;
    children >> left;
    EXPECT_EQ(left, "") << "the worker still has children";
  }
}

// A candidate that spins while the runner's time-out is far away dies at its CPU-time
// limit, which holds even when the runner cannot enforce its time-out.
TEST_F(MeasureFaults, ASpinPastTheCpuTimeLimitIsARuntimeErrorSayingSo) {
  RunnerOptions limited = options();
  limited.timeout_s = 60;
  limited.cpu_time_limit_s = 1;
  Runner runner(limited);
  Outcome out = run_after_a_good_one(runner, "hangs");
  EXPECT_EQ(out.bad.error, MeasureError::RuntimeError);
  EXPECT_NE(out.bad.message.find("died with SIGXCPU"), std::string::npos) << out.bad.message;
  EXPECT_NE(out.bad.message.find("more than its CPU-time limit of 1 s"), std::string::npos) << out.bad.message;
  EXPECT_LT(out.bad.run_seconds, 30);
  expect_replaced_worker(out);
}

// A candidate that allocates without end stops at the memory limit instead of taking the
// machine's memory; the worker it grew is replaced.
TEST_F(MeasureFaults, AllocationsStopAtTheMemoryLimitAndTheGrownWorkerIsReplaced) {
  RunnerOptions limited = options();
  limited.memory_limit_mb = 256;
  Runner runner(limited);
  Outcome out = run_after_a_good_one(runner, "allocates_without_end");
  EXPECT_EQ(out.bad.error, MeasureError::None) << out.bad.message;  // its answer is right, in its memory
  expect_replaced_worker(out);
}

// An error the function returns, a missing symbol, a file that is no library: the
// worker survives them all and keeps its process.
TEST_F(MeasureFaults, ErrorsTheWorkerSurvivesKeepTheWorker) {
  Runner runner(options());
  fs::path not_a_library = *dir_ / "not_a_library.so";
  std::ofstream(not_a_library) << "not an ELF file";
  BuildArtifact garbage = artifact("good");
  garbage.library_path = not_a_library.string();
  std::vector<MeasureResult> results =
      runner.run({input(), input(), input(), input(), input()},
                 {artifact("good"), artifact("reports_error"), artifact("missing"), garbage, artifact("good")});
  pid_t pid = runner.worker_pid();
  EXPECT_EQ(results[0].error, MeasureError::None) << results[0].message;
  EXPECT_EQ(results[1].error, MeasureError::RuntimeError);
  EXPECT_NE(results[1].message.find("reports_error: the tile does not fit"), std::string::npos) << results[1].message;
  EXPECT_EQ(results[2].error, MeasureError::RuntimeError);
  EXPECT_NE(results[2].message.find("has no function 'missing'"), std::string::npos) << results[2].message;
  EXPECT_EQ(results[3].error, MeasureError::RuntimeError);
  EXPECT_NE(results[3].message.find("cannot load the compiled library"), std::string::npos) << results[3].message;
  EXPECT_EQ(results[4].error, MeasureError::None) << results[4].message;
  // One worker served the whole batch.
  EXPECT_EQ(runner.run({input()}, {artifact("good")})[0].error, MeasureError::None);
  EXPECT_EQ(runner.worker_pid(), pid);
}

// A candidate that writes into its input is wrong even when its output is right, and the
// candidates after it are checked against the untouched inputs.
TEST_F(MeasureFaults, WritingIntoAnInputIsAWrongResultAndTheInputIsRestored) {
  Runner runner(options());
  std::vector<MeasureResult> results =
      runner.run({input(), input(), input()}, {artifact("good"), artifact("writes_input"), artifact("good")});
  EXPECT_EQ(results[0].error, MeasureError::None) << results[0].message;
  EXPECT_EQ(results[1].error, MeasureError::WrongResult);
  EXPECT_NE(results[1].message.find("wrote into its input A"), std::string::npos) << results[1].message;
  EXPECT_EQ(results[2].error, MeasureError::None) << results[2].message;
}

// Several faults in one batch, back to back: each costs only itself.
TEST_F(MeasureFaults, FaultsInARowCostOneCandidateEach) {
  Runner runner(options());
  std::vector<MeasureResult> results =
      runner.run({input(), input(), input(), input(), input()},
                 {artifact("segfault"), artifact("aborts"), artifact("good"), artifact("segfault"), artifact("good")});
  EXPECT_EQ(results[0].error, MeasureError::RuntimeError);
  EXPECT_EQ(results[1].error, MeasureError::RuntimeError);
  EXPECT_NE(results[1].message.find("SIGABRT"), std::string::npos) << results[1].message;
  EXPECT_EQ(results[2].error, MeasureError::None) << results[2].message;
  EXPECT_EQ(results[3].error, MeasureError::RuntimeError);
  EXPECT_EQ(results[4].error, MeasureError::None) << results[4].message;
}

}  // namespace
}  // namespace temper::measure
