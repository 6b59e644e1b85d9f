// The ONNX backend tests Debian ships in libonnx-testdata, run through Temper: a suite
// nobody here wrote. Each test folder (data/node, data/pytorch-converted,
// data/pytorch-operator) holds a model.onnx and test_data_set_*/input_*.pb, output_*.pb;
// each becomes one test here, named after its folder, that imports the model, runs it with
// the GraphExecutor and compares every output with the shipped one at the ONNX backend's
// tolerances (rtol 1e-3, atol 1e-7; NaN matches NaN, equal infinities match).
//
// Outcomes: pass; unsupported (an op, attribute or data type Temper does not support, an
// UnsupportedError: a visible SKIP with the reason); fail (wrong numbers, or any other error).
// ctest lists one test per model whose ops Temper supports; the summary test runs every
// model and prints one line per unsupported one with the reason.
// Known failures are listed below with their reason; they SKIP while they still fail and
// FAIL once they pass, so the list stays honest. A last test prints the counts per folder.
//
// The data is found at TEMPER_ONNX_TESTDATA (the folder holding node/) or where Debian
// installs it; without it the suite is one visible SKIP.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "compiler/graph/executor.h"
#include "compiler/graph/graph_ops.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/ir/error.h"
#include "compiler/runtime/c_runtime_api.h"

namespace temper::graph {
namespace {

namespace fs = std::filesystem;

const char* const kFolders[] = {"node", "pytorch-converted", "pytorch-operator"};
constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;

// Test folder name -> why it fails. Each is a real defect to fix, not an expectation.
// Empty today: every test of a supported op passes or says what it does not support.
const std::map<std::string, std::string>& known_failures() {
  static const std::map<std::string, std::string> failures;
  return failures;
}

fs::path testdata_root() {
  if (const char* env = std::getenv("TEMPER_ONNX_TESTDATA")) return env;
  for (const char* candidate : {"/usr/share/libonnx-testdata/data", "/usr/share/onnx/testdata/data"}) {
    if (fs::is_directory(fs::path(candidate) / "node")) return candidate;
  }
  return {};
}

struct ConformanceCase {
  std::string folder;  // "node", "pytorch-converted", "pytorch-operator"
  std::string test;    // "test_abs"
  fs::path dir;
  // The gtest name: letters, digits and '_'.
  std::string name() const {
    std::string n = folder + "_" + test;
    std::replace_if(
        n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
    return n;
  }
};

// gtest prints the parameter in test listings (and so in ctest's names): the folder.
void PrintTo(const ConformanceCase& c, std::ostream* os) {
  *os << c.folder << "/" << c.test;
}

std::vector<ConformanceCase> discover_cases() {
  std::vector<ConformanceCase> cases;
  fs::path root = testdata_root();
  if (root.empty()) return cases;
  for (const char* folder : kFolders) {
    if (!fs::is_directory(root / folder)) continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(root / folder)) {
      if (fs::exists(entry.path() / "model.onnx")) {
        cases.push_back({folder, entry.path().filename().string(), entry.path()});
      }
    }
  }
  std::sort(cases.begin(), cases.end(), [](const auto& a, const auto& b) { return a.name() < b.name(); });
  return cases;
}

const std::vector<ConformanceCase>& all_cases() {
  static const std::vector<ConformanceCase> cases = discover_cases();
  return cases;
}

// Whether the model imports without an UnsupportedError (an import without folding: no
// code is compiled). The others are counted by the summary test only, so ctest lists the
// tests of the ops Temper claims to support.
bool uses_supported_ops(const ConformanceCase& c) {
  try {
    ImportOptions options;
    options.fold_constants = false;
    import_onnx((c.dir / "model.onnx").string(), options);
  } catch (const UnsupportedError&) {
    return false;
  } catch (const std::exception&) {
  }
  return true;
}

const std::vector<ConformanceCase>& supported_cases() {
  static const std::vector<ConformanceCase> cases = [] {
    std::vector<ConformanceCase> out;
    for (const ConformanceCase& c : all_cases()) {
      if (uses_supported_ops(c)) out.push_back(c);
    }
    return out;
  }();
  return cases;
}

// prefix_0.pb, prefix_1.pb, ... in numeric order.
std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  while (fs::exists(dir / (prefix + std::to_string(files.size()) + ".pb"))) {
    files.push_back(dir / (prefix + std::to_string(files.size()) + ".pb"));
  }
  return files;
}

// "" when actual matches expected at the backend tolerances, else what differs.
std::string mismatch(const NDArray& actual, const NDArray& expected) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    return str("got ", actual.dtype().to_string(), shape_to_string(actual.shape()), ", expected ",
               expected.dtype().to_string(), shape_to_string(expected.shape()));
  }
  int64_t mismatches = 0;
  int64_t first = -1;
  for (int64_t i = 0; i < actual.size(); ++i) {
    double a = actual.get(i);
    double e = expected.get(i);
    bool match = std::isnan(e) ? std::isnan(a) : a == e || std::abs(a - e) <= kAtol + kRtol * std::abs(e);
    if (match) continue;
    if (mismatches++ == 0) first = i;
  }
  if (mismatches == 0) return "";
  return str(mismatches, " of ", actual.size(), " elements differ; first at flat index ", first, ": got ",
             actual.get(first), ", expected ", expected.get(first));
}

enum class Outcome { Pass, Fail, Unsupported };

struct Result {
  Outcome outcome = Outcome::Pass;
  std::string detail;  // why it failed or is unsupported
  double seconds = 0;
};

// The message without the list of supported ops that follows an unsupported one.
std::string without_op_list(const std::string& message) {
  return message.substr(0, message.find("; supported: "));
}

// The name field (8) of a serialized TensorProto, "" when it has none: the node tests name
// each input after the graph input it feeds; the pytorch ones leave it empty. Walks the
// top-level fields by the protobuf wire format (varint, 64-bit, length-delimited, 32-bit).
std::string tensor_proto_name(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t pos = 0;
  auto varint = [&]() {
    uint64_t v = 0;
    for (int shift = 0; pos < bytes.size() && shift < 64; shift += 7) {
      uint8_t byte = static_cast<uint8_t>(bytes[pos++]);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) break;
    }
    return v;
  };
  while (pos < bytes.size()) {
    uint64_t key = varint();
    switch (key & 7) {
      case 0:
        varint();
        break;
      case 1:
        pos += 8;
        break;
      case 5:
        pos += 4;
        break;
      case 2: {
        uint64_t length = varint();
        if ((key >> 3) == 8) return bytes.substr(pos, length);
        pos += length;
        break;
      }
      default:
        return "";
    }
  }
  return "";
}

struct TestTensor {
  std::string name;
  NDArray data;
};

std::vector<TestTensor> read_tensors(const fs::path& dir, const std::string& prefix) {
  std::vector<TestTensor> tensors;
  for (const fs::path& file : numbered_files(dir, prefix)) {
    tensors.push_back({tensor_proto_name(file), read_tensor_proto(file.string())});
  }
  return tensors;
}

// Imports the model. Where an op needs an input's value at compile time (Reshape's
// shape, Slice's starts, Resize's scales...) and the node test feeds it as a graph input,
// that input is bound to the test's data as a constant, as an exporter would have written
// it; `bound` names those (they are not fed).
Graph import_for_test(const fs::path& model, const fs::path& data, std::set<std::string>& bound) {
  std::vector<TestTensor> inputs;  // read once needed: some tests feed sequences
  ImportOptions options;
  while (true) {
    try {
      return import_onnx(model.string(), options);
    } catch (const ConstantRequiredError& e) {
      if (inputs.empty()) inputs = read_tensors(data, "input_");
      auto fed = std::find_if(inputs.begin(), inputs.end(), [&](const TestTensor& t) { return t.name == e.value(); });
      if (fed == inputs.end() || bound.count(e.value())) throw;
      options.constants[e.value()] = fed->data;
      bound.insert(e.value());
    }
  }
}

Result run_data_set(const ConformanceCase& c) {
  fs::path data = c.dir / "test_data_set_0";
  if (!fs::is_directory(data)) return {Outcome::Fail, "no test_data_set_0 folder"};
  // Import first: a model Temper does not support is reported as such, whatever its data.
  std::set<std::string> bound;
  Graph graph = import_for_test(c.dir / "model.onnx", data, bound);
  std::vector<TestTensor> inputs = read_tensors(data, "input_");
  std::vector<TestTensor> expected = read_tensors(data, "output_");
  GraphExecutor executor(graph, Target::parse("llvm -mcpu=native"));

  // By name where the tensors are named (skipping inputs bound as constants), else by position.
  const std::vector<ValueId>& graph_inputs = graph.inputs();
  bool named = std::all_of(inputs.begin(), inputs.end(), [](const TestTensor& t) { return !t.name.empty(); });
  std::map<std::string, NDArray> feed;
  if (named) {
    for (const TestTensor& t : inputs) {
      if (!bound.count(t.name)) feed[t.name] = t.data;
    }
  } else if (inputs.size() == graph_inputs.size()) {
    for (size_t i = 0; i < inputs.size(); ++i) feed[graph.value(graph_inputs[i]).name] = inputs[i].data;
  } else {
    return {Outcome::Fail,
            str("the graph has ", graph_inputs.size(), " inputs after import, the test gives ", inputs.size())};
  }
  std::vector<NDArray> outputs = executor.run(feed);
  if (outputs.size() != expected.size()) {
    return {Outcome::Fail, str("the graph has ", outputs.size(), " outputs, the test expects ", expected.size())};
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    std::string diff = mismatch(outputs[o], expected[o].data);
    if (!diff.empty()) {
      return {Outcome::Fail, str("output ", o, " (", graph.value(graph.outputs()[o]).name, "): ", diff)};
    }
  }
  return {Outcome::Pass, ""};
}

Result run_case(const ConformanceCase& c) {
  auto start = std::chrono::steady_clock::now();
  Result r;
  try {
    r = run_data_set(c);
  } catch (const UnsupportedError& e) {
    r = {Outcome::Unsupported, without_op_list(e.what())};
  } catch (const UserError& e) {
    r = {Outcome::Fail, e.what()};
  } catch (const std::exception& e) {
    r = {Outcome::Fail, str("internal error: ", e.what())};
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

class OnnxConformance : public testing::TestWithParam<ConformanceCase> {};

TEST_P(OnnxConformance, MatchesShippedOutputs) {
  const ConformanceCase& c = GetParam();
  Result r = run_case(c);
  auto known = known_failures().find(c.test);
  if (known != known_failures().end()) {
    if (r.outcome != Outcome::Fail) {
      FAIL() << c.test << " no longer fails (" << (r.outcome == Outcome::Pass ? "it passes" : r.detail)
             << "): remove it from known_failures()";
    }
    GTEST_SKIP() << "known failure (" << known->second << "): " << r.detail;
  }
  if (r.outcome == Outcome::Unsupported) GTEST_SKIP() << "unsupported: " << r.detail;
  EXPECT_EQ(r.outcome, Outcome::Pass) << c.dir.string() << ": " << r.detail;
}

INSTANTIATE_TEST_SUITE_P(Onnx, OnnxConformance, testing::ValuesIn(supported_cases()),
                         [](const testing::TestParamInfo<ConformanceCase>& info) { return info.param.name(); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OnnxConformance);

// Every test once more, on all cores, for the counts per folder; it fails where an
// outcome is not the expected one (a pass, an unsupported op, or a listed known failure).
TEST(OnnxConformanceSummary, CountsPerFolder) {
  const std::vector<ConformanceCase>& cases = all_cases();
  if (cases.empty()) GTEST_SKIP() << "no ONNX test data: install libonnx-testdata or set TEMPER_ONNX_TESTDATA";
  // Tests run side by side, each kernel on one thread.
  temper_set_num_threads(1);
  std::vector<Result> results(cases.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < std::max(1u, std::thread::hardware_concurrency()); ++w) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < cases.size(); i = next++) results[i] = run_case(cases[i]);
    });
  }
  for (std::thread& t : workers) t.join();
  temper_set_num_threads(0);

  struct Counts {
    int pass = 0, fail = 0, unsupported = 0;
  };
  std::map<std::string, Counts> per_folder;
  Counts total;
  double seconds = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Result& r = results[i];
    Counts& f = per_folder[cases[i].folder];
    seconds += r.seconds;
    bool known = known_failures().count(cases[i].test) > 0;
    switch (r.outcome) {
      case Outcome::Pass:
        ++f.pass, ++total.pass;
        EXPECT_FALSE(known) << cases[i].test << " passes now: remove it from known_failures()";
        break;
      case Outcome::Unsupported:
        ++f.unsupported, ++total.unsupported;
        std::printf("unsupported %s/%s: %s\n", cases[i].folder.c_str(), cases[i].test.c_str(), r.detail.c_str());
        EXPECT_FALSE(known) << cases[i].test << " is unsupported now: remove it from known_failures()";
        break;
      case Outcome::Fail:
        ++f.fail, ++total.fail;
        EXPECT_TRUE(known) << cases[i].folder << "/" << cases[i].test << ": " << r.detail;
        break;
    }
  }
  for (const auto& [folder, n] : per_folder) {
    std::printf("onnx conformance %-18s pass %4d  fail %4d  unsupported %4d\n", folder.c_str(), n.pass, n.fail,
                n.unsupported);
  }
  std::printf("onnx conformance %-18s pass %4d  fail %4d  unsupported %4d  (%.1f s of test time)\n", "total",
              total.pass, total.fail, total.unsupported, seconds);
}

}  // namespace
}  // namespace temper::graph
