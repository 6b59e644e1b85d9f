// Bad suite files fail with a UserError at PATH:LINE:COL saying what was expected and
// what was found: syntax, keys, values, workloads, baselines, models, dims.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "compiler/ops/workload.h"
#include "sweep/suite.h"
#include "user_error_test_util.h"

namespace temper::sweep {
namespace {

namespace fs = std::filesystem;
using testing_util::error_of;

std::string suite_error(const std::string& text, const std::string& base_dir = "") {
  return error_of([&] { parse_suite_text(text, "s.toml", base_dir); });
}

// The message parse() or instantiate() gives for a bad workload.
std::string workload_error(const std::string& text) {
  return error_of([&] { ops::instantiate(ops::Workload::parse(text)); });
}

const std::string kValueKinds = "(a \"string\", a number, true/false or [an array])";

TEST(SuiteSyntax, MissingEquals) {
  EXPECT_EQ(suite_error("# suite\nname \"x\"\n"), "s.toml:2:6: expected '=' after the key 'name', found '\"'");
  EXPECT_EQ(suite_error("trials\n"), "s.toml:1:7: expected '=' after the key 'trials', found end of line");
}

TEST(SuiteSyntax, MissingValue) {
  EXPECT_EQ(suite_error("trials =   \n"),
            "s.toml:1:12: expected a value after '=' " + kValueKinds + ", found end of line");
  EXPECT_EQ(suite_error("trials = # none\n"),
            "s.toml:1:10: expected a value after '=' " + kValueKinds + ", found a comment");
  EXPECT_EQ(suite_error("name = hello\n"), "s.toml:1:8: expected a value after '=' " + kValueKinds + ", found 'hello'");
}

TEST(SuiteSyntax, UnterminatedString) {
  EXPECT_EQ(suite_error("\nname = \"abc\nrounds = 1\n"),
            "s.toml:2:8: unterminated string: expected a closing '\"' before the end of the line, found end of line");
  EXPECT_EQ(suite_error("name = 'abc"),
            "s.toml:1:8: unterminated string: expected a closing \"'\" before the end of the line, found end of file");
}

TEST(SuiteSyntax, UnknownEscape) {
  EXPECT_EQ(
      suite_error("name = \"a\\qb\""),
      "s.toml:1:10: unknown escape '\\q' in a string: use \\\" \\\\ \\n or \\t, or a 'literal string' without escapes");
}

TEST(SuiteSyntax, BadNumbers) {
  EXPECT_EQ(suite_error("trials = 1__0"), "s.toml:1:10: expected a number, found '1__0'");
  EXPECT_EQ(suite_error("trials = 12ab"), "s.toml:1:10: expected a number, found '12ab'");
  EXPECT_EQ(suite_error("trials = 1e"), "s.toml:1:10: expected a number, found '1e'");
  EXPECT_EQ(suite_error("trials = -"), "s.toml:1:10: expected a number, found '-'");
  EXPECT_EQ(suite_error("trials = 99999999999999999999"),
            "s.toml:1:10: the integer 99999999999999999999 is out of range");
}

TEST(SuiteSyntax, TextAfterTheValue) {
  EXPECT_EQ(suite_error("trials = 5 6\n"),
            "s.toml:1:12: expected the end of the line after the value of 'trials', found '6'");
  EXPECT_EQ(suite_error("[[workload]] x\n"), "s.toml:1:14: expected the end of the line after [[workload]], found 'x'");
}

TEST(SuiteSyntax, Arrays) {
  EXPECT_EQ(suite_error("[[workload]]\nbaselines = [\"a\" \"b\"]"),
            "s.toml:2:18: expected ',' or ']' after an array item, found '\"'");
  EXPECT_EQ(suite_error("[[workload]]\nbaselines = [\"a\",\n  \"b\",\n"),
            "s.toml:4:1: expected ']' to close the array opened at 2:13, found end of file");
  EXPECT_EQ(suite_error("[[workload]]\nbaselines = [[\"a\"]]"),
            "s.toml:2:14: expected an array item (a \"string\", a number or true/false) or ']', found '['");
  EXPECT_EQ(suite_error("[[workload]]\nbaselines = [,]"),
            "s.toml:2:14: expected an array item (a \"string\", a number or true/false) or ']', found ','");
}

TEST(SuiteSyntax, KeyWhereAKeyOrHeaderBelongs) {
  EXPECT_EQ(suite_error("\"name\" = 1"),
            "s.toml:1:1: expected a key or a [[workload]] or [[model]] header, found '\"'");
}

TEST(SuiteTables, UnknownTable) {
  EXPECT_EQ(suite_error("name = \"x\"\n\n[table]\n"),
            "s.toml:3:1: unknown table '[table]': a suite has only [[workload]] and [[model]] tables");
  EXPECT_EQ(suite_error("  [[benchmark]]\n"),
            "s.toml:1:3: unknown table '[[benchmark]]': a suite has only [[workload]] and [[model]] tables");
  EXPECT_EQ(suite_error("[[workload]\n"),
            "s.toml:1:12: expected a second ']' to close '[[workload]', found end of line");
  EXPECT_EQ(suite_error("[[workload\n"), "s.toml:1:11: expected ']]' after '[[workload', found end of line");
  EXPECT_EQ(suite_error("[[]]\n"), "s.toml:1:3: expected a table name after '[[', found ']'");
}

TEST(SuiteKeys, UnknownKey) {
  EXPECT_EQ(suite_error("name = \"x\"\nrepeat = 3\n"),
            "s.toml:2:1: unknown key 'repeat' in the top level: the keys accepted there are name, trials, time_budget, "
            "rounds, threads");
  EXPECT_EQ(suite_error("[[workload]]\nworkload = \"relu:shape=4\"\n  target = \"llvm\"\n"),
            "s.toml:3:3: unknown key 'target' in [[workload]] at line 1: the keys accepted there are workload, "
            "baselines, trials, space");
  EXPECT_EQ(suite_error("\n[[model]]\nworkload = \"relu:shape=4\"\n"),
            "s.toml:3:1: unknown key 'workload' in [[model]] at line 2: the keys accepted there are path, dims, "
            "baselines, trials, space, in_model");
  // The in-model step is a model's: a workload is timed alone.
  EXPECT_EQ(suite_error("[[workload]]\nworkload = \"relu:shape=4\"\nin_model = 3\n"),
            "s.toml:3:1: unknown key 'in_model' in [[workload]] at line 1: the keys accepted there are workload, "
            "baselines, trials, space");
}

TEST(SuiteKeys, DuplicateKey) {
  EXPECT_EQ(suite_error("[[workload]]\nworkload = \"relu:shape=4\"\ntrials = 1\n trials = 2\n"),
            "s.toml:4:2: key 'trials' is given twice in [[workload]] at line 1 (first at 3:1)");
  // The same key in two tables is two entries' keys.
  EXPECT_EQ(parse_suite_text("[[workload]]\nworkload = \"relu:shape=4\"\n[[workload]]\nworkload = \"relu:shape=8\"\n",
                             "s.toml", "")
                .entries.size(),
            2u);
}

TEST(SuiteKeys, MissingRequiredKey) {
  EXPECT_EQ(suite_error("[[workload]]\ntrials = 1\n"),
            "s.toml:1:1: [[workload]] at line 1 has no 'workload' key: write workload = "
            "\"matmul:M=1024,N=1024,K=1024\"");
  EXPECT_EQ(suite_error("[[workload]]\nworkload = \"relu:shape=4\"\n[[model]]\n"),
            "s.toml:3:1: [[model]] at line 3 has no 'path' key: write path = \"model.onnx\"");
}

TEST(SuiteValues, WrongTypes) {
  EXPECT_EQ(suite_error("trials = 1.5"), "s.toml:1:10: 'trials' must be an integer, found a float (1.5)");
  EXPECT_EQ(suite_error("rounds = 1e-3"), "s.toml:1:10: 'rounds' must be an integer, found a float (1e-3)");
  EXPECT_EQ(suite_error("threads = true"), "s.toml:1:11: 'threads' must be an integer, found a boolean (true)");
  EXPECT_EQ(suite_error("name = 3"), "s.toml:1:8: 'name' must be a string, found an integer (3)");
  EXPECT_EQ(suite_error("time_budget = 30"), "s.toml:1:15: 'time_budget' must be a string, found an integer (30)");
  EXPECT_EQ(suite_error("[[workload]]\nworkload = [\"relu:shape=4\"]"),
            "s.toml:2:12: 'workload' must be a string, found an array");
  EXPECT_EQ(suite_error("[[workload]]\nworkload = \"relu:shape=4\"\nbaselines = \"onednn\""),
            "s.toml:3:13: 'baselines' must be an array of strings [\"...\", ...], found a string (\"onednn\")");
  EXPECT_EQ(suite_error("[[workload]]\nworkload = \"relu:shape=4\"\nbaselines = [\"onednn\", false]"),
            "s.toml:3:24: each item of 'baselines' must be a string, found a boolean (false)");
}

TEST(SuiteValues, OutOfRange) {
  EXPECT_EQ(suite_error("trials = -1"), "s.toml:1:10: trials must be 0 or more, found -1");
  EXPECT_EQ(suite_error("rounds = 0"), "s.toml:1:10: rounds must be at least 1, found 0");
  EXPECT_EQ(suite_error("threads = -2"), "s.toml:1:11: threads must be 0 or more, found -2");
  EXPECT_EQ(suite_error("trials = 3_000_000_000"), "s.toml:1:10: trials must be at most 2147483647, found 3000000000");
  EXPECT_EQ(suite_error("[[workload]]\nworkload = \"relu:shape=4\"\ntrials = -1"),
            "s.toml:3:10: trials must be 0 or more, found -1");
}

TEST(SuiteValues, BadTimeBudget) {
  const std::string forms =
      "is not a duration: use seconds (45), or numbers with units d, h, m, s (90s, 30m, 8h, 1h30m)";
  EXPECT_EQ(suite_error("time_budget = \"8x\""), "s.toml:1:15: time_budget '8x' " + forms);
  EXPECT_EQ(suite_error("time_budget = \"1h30\""), "s.toml:1:15: time_budget '1h30' " + forms);
  EXPECT_EQ(suite_error("time_budget = \"0s\""), "s.toml:1:15: time_budget '0s' " + forms);
  EXPECT_EQ(suite_error("time_budget = \"\""), "s.toml:1:15: time_budget '' " + forms);
  EXPECT_EQ(
      parse_suite_text("time_budget = \"90\"\n[[workload]]\nworkload = \"relu:shape=4\"", "s.toml", "").time_budget,
      "90");
}

TEST(SuiteValues, BadSpace) {
  EXPECT_EQ(suite_error("[[workload]]\nworkload = \"relu:shape=4\"\nspace = \"sketch\""),
            "s.toml:3:9: space must be \"template\", \"auto\" or \"both\", found \"sketch\"");
}

TEST(SuiteWorkloads, UnknownOp) {
  std::string message = suite_error("[[workload]]\nworkload  =  \"matmull:M=4,N=4,K=4\"\n");
  EXPECT_EQ(message, "s.toml:2:14: workload \"matmull:M=4,N=4,K=4\": " + workload_error("matmull:M=4,N=4,K=4"));
  EXPECT_NE(message.find("unknown op"), std::string::npos) << message;
}

TEST(SuiteWorkloads, ImpossibleShape) {
  // Parses, but 6 channels do not split into 4 groups: instantiate() tells.
  const std::string w = "conv2d:N=1,C=6,H=8,W=8,K=4,R=3,S=3,groups=4";
  EXPECT_EQ(suite_error("[[workload]]\nworkload = \"" + w + "\"\n"),
            "s.toml:2:12: workload \"" + w + "\": " + workload_error(w));
  EXPECT_NE(workload_error(w).find("channels"), std::string::npos);
}

TEST(SuiteBaselines, UnknownBaseline) {
  EXPECT_EQ(
      suite_error("[[workload]]\nworkload = \"matmul:M=4,N=4,K=4\"\nbaselines = [\"onednn\", \"mkl\"]"),
      "s.toml:3:24: unknown baseline 'mkl': the known baselines are onednn, openblas, eigen, cublas, onnxruntime");
}

TEST(SuiteBaselines, InapplicableBaseline) {
  EXPECT_EQ(suite_error("[[workload]]\nworkload = \"conv2d:N=1,C=4,H=8,W=8,K=4,R=3,S=3\"\nbaselines = [\"openblas\"]"),
            "s.toml:3:14: baseline 'openblas' does not apply to [[workload]] \"conv2d:N=1,C=4,H=8,W=8,K=4,R=3,S=3\": "
            "openblas serves workloads of the ops matmul, dense");
  EXPECT_EQ(suite_error("[[workload]]\nworkload = \"softmax:shape=4x8,axis=1\"\nbaselines = [\"onednn\"]"),
            "s.toml:3:14: baseline 'onednn' does not apply to [[workload]] \"softmax:shape=4x8,axis=1\": onednn serves "
            "workloads of the ops matmul, dense, conv2d, conv2d_nchwc, depthwise_conv2d, depthwise_conv2d_nchwc");
  EXPECT_EQ(suite_error("[[workload]]\nworkload = \"matmul:M=4,N=4,K=4\"\nbaselines = [\"onnxruntime\"]"),
            "s.toml:3:14: baseline 'onnxruntime' does not apply to [[workload]] \"matmul:M=4,N=4,K=4\": onnxruntime "
            "serves [[model]] entries only");
}

TEST(SuiteBaselines, BaselineTwice) {
  EXPECT_EQ(suite_error("[[workload]]\nworkload = \"dense:M=1,N=8,K=8\"\nbaselines = [\"eigen\",\n  \"eigen\"]"),
            "s.toml:4:3: baseline 'eigen' is listed twice in [[workload]] \"dense:M=1,N=8,K=8\"");
}

// A model file of any bytes: the parser checks it exists, not what it holds.
class SuiteModelErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / str("temper_test_sweep_suite_errors_", getpid());
    fs::create_directories(dir_);
    std::ofstream(dir_ / "m.onnx") << "x";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string model_error(const std::string& rest) {
    return suite_error("[[model]]\npath = \"m.onnx\"\n" + rest, dir_.string());
  }

  fs::path dir_;
};

TEST_F(SuiteModelErrors, MissingModelFile) {
  EXPECT_EQ(suite_error("[[model]]\npath = \"../nets/r18.onnx\"\n", dir_.string()),
            str("s.toml:2:8: model file '../nets/r18.onnx' not found (resolved to '",
                (dir_.parent_path() / "nets" / "r18.onnx").string(), "')"));
  EXPECT_EQ(suite_error("[[model]]\npath = \"/nonexistent/m.onnx\"\n", dir_.string()),
            "s.toml:2:8: model file '/nonexistent/m.onnx' not found (resolved to '/nonexistent/m.onnx')");
  EXPECT_EQ(suite_error("[[model]]\npath = \".\"\n", dir_.string()),
            str("s.toml:2:8: model file '.' is a folder (resolved to '", dir_.string(), "/')"));
}

TEST_F(SuiteModelErrors, BadDims) {
  const std::string form = "' is not NAME=N with N a positive integer (e.g. \"batch=1\")";
  EXPECT_EQ(model_error("dims = [\"batch=0\"]"), "s.toml:3:9: dims item 'batch=0" + form);
  EXPECT_EQ(model_error("dims = [\"batch\"]"), "s.toml:3:9: dims item 'batch" + form);
  EXPECT_EQ(model_error("dims = [\"=4\"]"), "s.toml:3:9: dims item '=4" + form);
  EXPECT_EQ(model_error("dims = [\"seq=1\", \"batch=x\"]"), "s.toml:3:18: dims item 'batch=x" + form);
  EXPECT_EQ(model_error("dims = [\"batch=-1\"]"), "s.toml:3:9: dims item 'batch=-1" + form);
  EXPECT_EQ(model_error("dims = [\"batch=1\", \"batch=2\"]"),
            "s.toml:3:20: dims gives 'batch' twice ('batch=1', 'batch=2')");
  EXPECT_EQ(model_error("dims = \"batch=1\""),
            "s.toml:3:8: 'dims' must be an array of strings [\"...\", ...], found a string (\"batch=1\")");
}

TEST_F(SuiteModelErrors, NegativeInModel) {
  EXPECT_EQ(model_error("in_model = -1"), "s.toml:3:12: in_model must be 0 or more, found -1");
  EXPECT_EQ(model_error("in_model = \"5\""), "s.toml:3:12: 'in_model' must be an integer, found a string (\"5\")");
}

TEST_F(SuiteModelErrors, WorkloadBaselineOnAModel) {
  EXPECT_EQ(model_error("baselines = [\"onnxruntime\", \"onednn\"]"),
            "s.toml:3:29: baseline 'onednn' does not apply to [[model]] 'm.onnx': onednn serves workloads of the ops "
            "matmul, dense, conv2d, conv2d_nchwc, depthwise_conv2d, depthwise_conv2d_nchwc");
}

TEST(SuiteFile, EmptySuite) {
  EXPECT_EQ(suite_error("name = \"x\"\ntrials = 3\n"),
            "s.toml: the suite lists no [[workload]] or [[model]]: nothing to sweep");
  EXPECT_EQ(suite_error("# nothing\n\n"), "s.toml: the suite lists no [[workload]] or [[model]]: nothing to sweep");
  EXPECT_EQ(suite_error(""), "s.toml: the suite lists no [[workload]] or [[model]]: nothing to sweep");
}

TEST(SuiteFile, MissingFile) {
  EXPECT_EQ(error_of([] { parse_suite_file("/nonexistent/suite.toml"); }),
            "cannot read suite file '/nonexistent/suite.toml': No such file or directory");
}

}  // namespace
}  // namespace temper::sweep
