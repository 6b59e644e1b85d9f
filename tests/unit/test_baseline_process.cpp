// The baselines' processes (sweep/baseline_process.h): the protocol against small fake
// runners (shell scripts: ready, garbage, a crash, a hang at quit), which always run; the
// real temper-baseline on matmuls and convolutions where the benchmarks are built; and
// onnxruntime's start where a Python with it is at hand.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "compiler/ir/error.h"
#include "sweep/baseline_process.h"
#include "sweep/onnxruntime_process.h"

namespace temper::sweep {
namespace {

namespace fs = std::filesystem;

// Sets an environment variable for one test, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The test process's own folder of fake runners and models, removed when it exits.
// (Held by a pointer never freed, so that it outlives the static destructors the exit
// handler runs after.)
fs::path temp_dir() {
  static const fs::path* dir = [] {
    auto* d = new fs::path(fs::temp_directory_path() / ("temper-test-baseline-" + std::to_string(getpid())));
    fs::create_directories(*d);
    std::atexit([] {
      std::error_code ignored;
      fs::remove_all(*dir, ignored);
    });
    return d;
  }();
  return *dir;
}

// A fake runner: a shell script whose body answers the protocol.
std::string fake_runner(const std::string& name, const std::string& body) {
  fs::path path = temp_dir() / name;
  std::ofstream(path) << "#!/bin/sh\n" << body;
  fs::permissions(path, fs::perms::owner_all);
  return path.string();
}

// The process with this pid was reaped: no zombie is left behind.
bool reaped(pid_t pid) {
  return waitpid(pid, nullptr, WNOHANG) < 0 && errno == ECHILD;
}

const char* kProtocol =
    "echo \"ready $1 fake runner for $2 on $3 threads\"\n"
    "while read cmd ms; do\n"
    "  case \"$cmd\" in\n"
    "    round) echo \"seconds 0.00125\" ;;\n"
    "    quit) exit 0 ;;\n"
    "  esac\n"
    "done\n";

TEST(BaselineProcess, MissingRunnerSaysHowToBuildIt) {
  ScopedEnv env("TEMPER_BASELINE_RUNNER", "/nonexistent");
  BaselineStart start = start_workload_baseline("onednn", "matmul:M=8,N=8,K=8", 1);
  EXPECT_EQ(start.process, nullptr);
  EXPECT_NE(start.why.find("temper-baseline is not built here"), std::string::npos) << start.why;
  EXPECT_NE(start.why.find("/nonexistent"), std::string::npos) << start.why;
  EXPECT_NE(start.why.find("-DTEMPER_BUILD_BENCHMARKS=ON"), std::string::npos) << start.why;
  EXPECT_NE(start.why.find("install-deps.sh --bench"), std::string::npos) << start.why;
}

TEST(BaselineProcess, UnknownBaseline) {
  BaselineStart start = start_workload_baseline("mkl", "matmul:M=8,N=8,K=8", 1);
  EXPECT_EQ(start.process, nullptr);
  EXPECT_NE(start.why.find("unknown baseline 'mkl'"), std::string::npos) << start.why;
}

TEST(BaselineProcess, FakeRunnerSpeaksTheProtocol) {
  ScopedEnv env("TEMPER_BASELINE_RUNNER", fake_runner("protocol.sh", kProtocol));
  BaselineStart start = start_workload_baseline("eigen", "matmul:M=8,N=8,K=8", 3);
  ASSERT_NE(start.process, nullptr) << start.why;
  EXPECT_EQ(start.process->description(), "fake runner for matmul:M=8,N=8,K=8 on 3 threads");
  EXPECT_DOUBLE_EQ(start.process->time_round(1), 0.00125);
  EXPECT_DOUBLE_EQ(start.process->time_round(1), 0.00125);
  pid_t pid = start.process->pid();
  auto before = std::chrono::steady_clock::now();
  start.process.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(2));  // it quit when asked
  EXPECT_TRUE(reaped(pid));
}

TEST(BaselineProcess, UnsupportedAndSilentExitBecomeWhy) {
  {
    ScopedEnv env("TEMPER_BASELINE_RUNNER", fake_runner("unsupported.sh", "echo 'unsupported: no such kernel'\n"));
    BaselineStart start = start_workload_baseline("openblas", "matmul:M=8,N=8,K=8", 1);
    EXPECT_EQ(start.process, nullptr);
    EXPECT_EQ(start.why, "openblas: unsupported: no such kernel");
  }
  ScopedEnv env("TEMPER_BASELINE_RUNNER", fake_runner("silent.sh", "echo 'libdnnl.so.2: not found' >&2\nexit 3\n"));
  BaselineStart start = start_workload_baseline("onednn", "matmul:M=8,N=8,K=8", 1);
  EXPECT_EQ(start.process, nullptr);
  EXPECT_NE(start.why.find("onednn: the process exited with status 3 without a reply"), std::string::npos) << start.why;
  EXPECT_NE(start.why.find("libdnnl.so.2: not found"), std::string::npos) << start.why;
}

TEST(BaselineProcess, GarbageAndCrashAreUserErrors) {
  {
    ScopedEnv env("TEMPER_BASELINE_RUNNER", fake_runner("garbage.sh",
                                                        "echo 'ready onednn x'\nread cmd\necho what\n"
                                                        "sleep 30\n"));
    BaselineStart start = start_workload_baseline("onednn", "matmul:M=8,N=8,K=8", 1);
    ASSERT_NE(start.process, nullptr) << start.why;
    pid_t pid = start.process->pid();
    try {
      start.process->time_round(1);
      FAIL() << "garbage was taken for a time";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("answered 'what' to a round"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(reaped(pid));  // killed at once, not left to sleep
    EXPECT_THROW(start.process->time_round(1), UserError);
  }
  ScopedEnv env(
      "TEMPER_BASELINE_RUNNER",
      fake_runner("crash.sh", "echo 'ready onednn x'\nread cmd\necho 'boom: bad alloc' >&2\nkill -SEGV $$\n"));
  BaselineStart start = start_workload_baseline("onednn", "matmul:M=8,N=8,K=8", 1);
  ASSERT_NE(start.process, nullptr) << start.why;
  try {
    start.process->time_round(1);
    FAIL() << "a crash was taken for a time";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("SIGSEGV"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("boom: bad alloc"), std::string::npos) << e.what();
  }
}

TEST(BaselineProcess, RunnerDeafToQuitIsKilled) {
  ScopedEnv env("TEMPER_BASELINE_RUNNER", fake_runner("deaf.sh", "echo 'ready onednn x'\nexec sleep 60\n"));
  BaselineStart start = start_workload_baseline("onednn", "matmul:M=8,N=8,K=8", 1);
  ASSERT_NE(start.process, nullptr) << start.why;
  pid_t pid = start.process->pid();
  auto before = std::chrono::steady_clock::now();
  start.process.reset();
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
  EXPECT_GE(waited, 4.5);
  EXPECT_LT(waited, 10);
  EXPECT_TRUE(reaped(pid));
}

TEST(BaselineProcess, OnnxruntimeWithoutPython) {
  BaselineStart start = start_onnxruntime("", "/nonexistent/model.onnx", 1, {}, temp_dir().string());
  EXPECT_EQ(start.process, nullptr);
  EXPECT_NE(start.why.find("--onnxruntime-python"), std::string::npos) << start.why;
  start = start_onnxruntime("/nonexistent/python", "/nonexistent/model.onnx", 1, {}, temp_dir().string());
  EXPECT_EQ(start.process, nullptr);
  EXPECT_NE(start.why.find("no Python at '/nonexistent/python'"), std::string::npos) << start.why;
}

// The real runner, where the benchmarks are built.
class RealRunner : public testing::Test {
 protected:
  void SetUp() override {
    if (find_baseline_runner().empty()) {
      GTEST_SKIP() << "SKIP: temper-baseline is not built (configure with -DTEMPER_BUILD_BENCHMARKS=ON)";
    }
  }
};

TEST_F(RealRunner, MatmulOnEachLibrary) {
  for (const char* baseline : {"onednn", "openblas", "eigen"}) {
    BaselineStart start = start_workload_baseline(baseline, "matmul:M=64,N=48,K=32", 1);
    ASSERT_NE(start.process, nullptr) << baseline << ": " << start.why;
    EXPECT_NE(start.process->description().find("sgemm"), std::string::npos) << start.process->description();
    double seconds = start.process->time_round(2);
    EXPECT_GT(seconds, 0) << baseline;
    EXPECT_LT(seconds, 0.1) << baseline;
  }
  BaselineStart dense = start_workload_baseline("onednn", "dense:M=1,N=100,K=128,bias=1", 1);
  ASSERT_NE(dense.process, nullptr) << dense.why;
  EXPECT_NE(dense.process->description().find("as the GEMM of its shape"), std::string::npos);
  EXPECT_GT(dense.process->time_round(1), 0);
}

TEST_F(RealRunner, OnednnConvolutions) {
  BaselineStart blocked = start_workload_baseline(
      "onednn", "conv2d_nchwc:N=1,C=32,H=14,W=14,K=32,R=3,S=3,in_block=16,out_block=16,pad=1", 1);
  ASSERT_NE(blocked.process, nullptr) << blocked.why;
  EXPECT_NE(blocked.process->description().find("src="), std::string::npos) << blocked.process->description();
  EXPECT_GT(blocked.process->time_round(1), 0);
  for (const char* workload :
       {"conv2d:N=1,C=16,H=10,W=10,K=8,R=3,S=3,stride=2,pad=1x0", "conv2d:N=1,C=16,H=10,W=10,K=8,R=3,S=3,groups=4",
        "depthwise_conv2d:N=1,C=16,H=10,W=10,R=3,S=3,multiplier=2,pad=1",
        "depthwise_conv2d_nchwc:N=1,C=32,H=10,W=10,R=3,S=3,block=16,pad=1"}) {
    BaselineStart start = start_workload_baseline("onednn", workload, 1);
    ASSERT_NE(start.process, nullptr) << workload << ": " << start.why;
    EXPECT_GT(start.process->time_round(1), 0) << workload;
  }
}

TEST_F(RealRunner, WhatItDoesNotRun) {
  BaselineStart conv = start_workload_baseline("openblas", "conv2d:N=1,C=16,H=10,W=10,K=8,R=3,S=3", 1);
  EXPECT_EQ(conv.process, nullptr);
  EXPECT_NE(conv.why.find("openblas: unsupported:"), std::string::npos) << conv.why;
  for (const char* workload : {"matmul:M=8,N=8,K=8,transpose_b=1", "matmul:M=8,N=8,K=8,dtype=int32",
                               "conv2d:N=1,C=16,H=10,W=10,K=8,R=3,S=3,layout=NHWC", "softmax:shape=4x8,axis=1"}) {
    BaselineStart start = start_workload_baseline("onednn", workload, 1);
    EXPECT_EQ(start.process, nullptr) << workload;
    EXPECT_NE(start.why.find("onednn: unsupported:"), std::string::npos) << start.why;
  }
  BaselineStart bad = start_workload_baseline("onednn", "matmul:M=8,N=8", 1);
  EXPECT_EQ(bad.process, nullptr);
  EXPECT_NE(bad.why.find("onednn: error:"), std::string::npos) << bad.why;
}

TEST_F(RealRunner, KilledRunnerIsAUserError) {
  BaselineStart start = start_workload_baseline("onednn", "matmul:M=16,N=16,K=16", 1);
  ASSERT_NE(start.process, nullptr) << start.why;
  pid_t pid = start.process->pid();
  kill(pid, SIGKILL);
  try {
    start.process->time_round(1);
    FAIL() << "a dead runner gave a time";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("SIGKILL"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(reaped(pid));
}

// onnxruntime on a one-node model, where a Python with onnxruntime is at hand (the model is
// written by the system Python's onnx package).
TEST(BaselineProcess, OnnxruntimeOnATinyModel) {
  const std::string python = "/tmp/ortvenv/bin/python";
  fs::path model = temp_dir() / "relu.onnx";
  std::string write_model =
      "/usr/bin/python3 -c \"import onnx; from onnx import helper as h, TensorProto as T; "
      "g = h.make_graph([h.make_node('Relu', ['x'], ['y'])], 'g', "
      "[h.make_tensor_value_info('x', T.FLOAT, [2, 3])], "
      "[h.make_tensor_value_info('y', T.FLOAT, [2, 3])]); "
      "onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 13)], ir_version=8), '" +
      model.string() + "')\" 2>/dev/null";
  if (access(python.c_str(), X_OK) != 0 || std::system(write_model.c_str()) != 0) {
    GTEST_SKIP() << "SKIP: needs " << python << " with onnxruntime and /usr/bin/python3 with onnx";
  }
  NDArray x = NDArray::random({2, 3}, DataType::float32(), 7);
  BaselineStart start = start_onnxruntime(python, model.string(), 1, {{"x", x}}, (temp_dir() / "ort").string());
  ASSERT_NE(start.process, nullptr) << start.why;
  EXPECT_EQ(start.process->description().rfind("onnxruntime ", 0), 0u) << start.process->description();
  EXPECT_GT(start.process->time_round(1), 0);
  NDArray y = dynamic_cast<OnnxruntimeProcess&>(*start.process).output();
  ASSERT_EQ(y.size(), 6);
  for (int64_t i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(y.get(i), std::max(0.0, x.get(i)));

  BaselineStart broken = start_onnxruntime(python, "/nonexistent/model.onnx", 1, {}, (temp_dir() / "ort").string());
  EXPECT_EQ(broken.process, nullptr);
  EXPECT_NE(broken.why.find("onnxruntime on /nonexistent/model.onnx: error:"), std::string::npos) << broken.why;
}

}  // namespace
}  // namespace temper::sweep
