// Suite files (sweep/suite.h): every value kind of the TOML subset, defaults and
// overrides, workloads made canonical, model paths resolved; the shipped suite parses.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "compiler/ir/error.h"
#include "compiler/ops/workload.h"
#include "sweep/suite.h"

namespace temper::sweep {
namespace {

namespace fs = std::filesystem;
using Strings = std::vector<std::string>;

// A fresh folder for the test's files, removed after it.
class SuiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / str("temper_test_sweep_suite_", getpid(), "_",
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "models");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

  fs::path dir_;
};

TEST_F(SuiteTest, ReadsEveryValueKindCommentsDefaultsAndOverrides) {
  write(dir_ / "models" / "net.onnx", "not parsed here");
  const std::string text = R"(# A suite with every kind of value.
name = "core\tset \"q\" \\ \n"   # escapes
trials = 1_000
time_budget = '1h30m'
rounds = +3
threads = 0

[[workload]]   # the defaults
workload = "matmul:K=64,M=32,N=16"

[[ workload ]]
workload = 'dense:M=1,N=10,K=8,act=relu'
baselines = [
  "onednn",   # comments between items
  # and on lines of their own

  'eigen',
]
trials = 0
space = "auto"

[[model]]
path = "models/net.onnx"
dims = ["batch=1", "seq=128"]
baselines = ["onnxruntime"]
space = "both"
in_model = 0
)";
  Suite suite = parse_suite_text(text, "dir/core.toml", dir_.string());
  EXPECT_EQ(suite.name, "core\tset \"q\" \\ \n");
  EXPECT_EQ(suite.path, "dir/core.toml");
  EXPECT_EQ(suite.trials, 1000);
  EXPECT_EQ(suite.time_budget, "1h30m");
  EXPECT_EQ(suite.rounds, 3);
  EXPECT_EQ(suite.threads, 0);
  ASSERT_EQ(suite.entries.size(), 3u);

  const SuiteEntry& matmul = suite.entries[0];
  EXPECT_EQ(matmul.kind, SuiteEntry::Kind::Workload);
  EXPECT_EQ(matmul.workload, "matmul:M=32,N=16,K=64,transpose_a=0,transpose_b=0,dtype=float32");
  EXPECT_EQ(matmul.name(), matmul.workload);
  EXPECT_EQ(matmul.baselines, Strings{});
  EXPECT_EQ(matmul.trials, 1000);
  EXPECT_EQ(matmul.space, "");
  EXPECT_EQ(matmul.line, 8);

  const SuiteEntry& dense = suite.entries[1];
  EXPECT_EQ(dense.workload, ops::Workload::parse("dense:M=1,N=10,K=8,act=relu").to_string());
  EXPECT_EQ(dense.baselines, (Strings{"onednn", "eigen"}));
  EXPECT_EQ(dense.trials, 0);
  EXPECT_EQ(dense.space, "auto");
  EXPECT_EQ(dense.line, 11);

  const SuiteEntry& model = suite.entries[2];
  EXPECT_EQ(model.kind, SuiteEntry::Kind::Model);
  EXPECT_EQ(model.written_path, "models/net.onnx");
  EXPECT_EQ(model.name(), "models/net.onnx");
  EXPECT_EQ(model.model_path, (dir_ / "models" / "net.onnx").string());
  EXPECT_EQ(model.dims, (Strings{"batch=1", "seq=128"}));
  EXPECT_EQ(model.baselines, Strings{"onnxruntime"});
  EXPECT_EQ(model.trials, 1000);
  EXPECT_EQ(model.space, "both");
  EXPECT_EQ(model.in_model, 0);
  EXPECT_EQ(model.line, 22);
}

TEST_F(SuiteTest, TopLevelDefaults) {
  Suite suite = parse_suite_text("[[workload]]\nworkload = \"relu:shape=4x4\"", "suites/small.toml", "");
  EXPECT_EQ(suite.name, "small");
  EXPECT_EQ(suite.trials, 200);
  EXPECT_EQ(suite.time_budget, "");
  EXPECT_EQ(suite.rounds, 9);
  EXPECT_EQ(suite.threads, 0);
  ASSERT_EQ(suite.entries.size(), 1u);
  EXPECT_EQ(suite.entries[0].trials, 200);
}

TEST_F(SuiteTest, LiteralStringsKeepBackslashesAndNumbersTakeSigns) {
  Suite suite =
      parse_suite_text("name = 'a\\n\"b'\nthreads = +4\n[[workload]]\nworkload = 'relu:shape=4'", "x.toml", "");
  EXPECT_EQ(suite.name, "a\\n\"b");
  EXPECT_EQ(suite.threads, 4);
}

TEST_F(SuiteTest, CrlfLinesAndNoFinalNewline) {
  Suite suite = parse_suite_text("trials = 5\r\n[[workload]]\r\nworkload = \"relu:shape=4\"\r\nbaselines = [\r\n]",
                                 "crlf.toml", "");
  EXPECT_EQ(suite.trials, 5);
  ASSERT_EQ(suite.entries.size(), 1u);
  EXPECT_EQ(suite.entries[0].line, 2);
  EXPECT_EQ(suite.entries[0].baselines, Strings{});
}

TEST_F(SuiteTest, ModelPathsResolveAgainstTheSuiteFilesFolder) {
  fs::create_directories(dir_ / "suites");
  write(dir_ / "models" / "a.onnx", "");
  write(dir_ / "suites" / "s.toml", str("[[model]]\npath = \"../models/a.onnx\"\n\n[[model]]\npath = \"",
                                        (dir_ / "models" / "a.onnx").string(), "\"\n"));
  Suite suite = parse_suite_file((dir_ / "suites" / "s.toml").string());
  EXPECT_EQ(suite.name, "s");
  ASSERT_EQ(suite.entries.size(), 2u);
  // Relative: against the suite's folder, normalised; absolute: as written.
  EXPECT_EQ(suite.entries[0].model_path, (dir_ / "models" / "a.onnx").string());
  EXPECT_EQ(suite.entries[0].name(), "../models/a.onnx");
  EXPECT_EQ(suite.entries[1].model_path, (dir_ / "models" / "a.onnx").string());
  EXPECT_EQ(suite.entries[1].line, 4);
  EXPECT_EQ(suite.entries[1].in_model, 5);  // as `tune MODEL` does by default
}

TEST_F(SuiteTest, KnownBaselines) {
  EXPECT_EQ(known_baselines(), (Strings{"onednn", "openblas", "eigen", "cublas", "onnxruntime"}));
}

// Every workload of the shipped suite parses and instantiates, with baselines that apply.
TEST_F(SuiteTest, ShippedCpuCoreSuiteParses) {
  fs::path file = fs::path(__FILE__).parent_path() / ".." / ".." / "benchmarks" / "suites" / "cpu_core.toml";
  Suite suite = parse_suite_file(file.string());
  EXPECT_EQ(suite.name, "cpu_core");
  EXPECT_EQ(suite.trials, 200);
  EXPECT_EQ(suite.rounds, 9);
  EXPECT_GE(suite.entries.size(), 10u);
  for (const SuiteEntry& entry : suite.entries) {
    EXPECT_EQ(entry.kind, SuiteEntry::Kind::Workload);
    EXPECT_EQ(entry.workload, ops::Workload::parse(entry.workload).to_string());
  }
  EXPECT_EQ(suite.entries[0].workload, ops::Workload::parse("matmul:M=1024,N=1024,K=1024").to_string());
  EXPECT_EQ(suite.entries[0].baselines, (Strings{"onednn", "openblas"}));
}

}  // namespace
}  // namespace temper::sweep
