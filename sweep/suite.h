// Suite files: the operator workloads and ONNX models that `temper sweep SUITE --db LOG`
// tunes and times against baseline libraries.
//
//   # benchmarks/suites/example.toml
//   name = "example"          # default: the file's stem
//   trials = 200              # what each entry is tuned to, counting the log's records; 0: no tuning
//   time_budget = "30m"       # per entry: 90s, 30m, 8h, 1h30m, 2d or plain seconds; default: none
//   rounds = 9                # interleaved timing rounds, at least 1
//   threads = 0               # 0: one per core
//
//   [[workload]]
//   workload = "matmul:M=1024,N=1024,K=1024"   # as `temper run` takes it (`temper ops` lists the ops)
//   baselines = ["onednn", "openblas"]
//   trials = 500              # overrides the suite's
//   space = "template"        # template, auto or both; default: the tuner's
//
//   [[model]]
//   path = "../../bench_logs/models/resnet18.onnx"   # relative to this file's folder
//   dims = ["batch=1"]        # the model's dynamic dimensions, NAME=N
//   baselines = ["onnxruntime"]
//   in_model = 5              # as `tune MODEL --in-model N`: each task's N best schedules and
//                             # its default timed in builds of the model after tuning; 0: off
//
// The format is a subset of TOML: `# comments`, blank lines, `key = value` pairs (at the
// top, before the first header, then in each table), and the array-of-tables headers
// [[workload]] and [[model]], each starting one entry. Values are basic strings "..." (with
// the escapes \" \\ \n \t), literal strings '...' (no escapes), integers (-1, 1_000), floats
// (1.5, 1e-3), true/false, and arrays of those [a, b, ] that may span lines, with a trailing
// comma allowed. A key given twice in one table is an error; so is any key or table not
// listed above.
//
// Baselines: onednn times matmul, dense and the conv2d, conv2d_nchwc, depthwise_conv2d and
// depthwise_conv2d_nchwc workloads; openblas, eigen and cublas time matmul and dense;
// onnxruntime times [[model]]s only. Each entry lists a baseline at most once.
//
// Parsing checks everything that can be checked without running anything: every workload
// parses and instantiates, every model file exists, every baseline applies to its entry.
// Each error is a UserError whose message starts with PATH:LINE:COL (1-based) and says what
// was expected and what was found.
#pragma once

#include <string>
#include <vector>

namespace temper::sweep {

// One [[workload]] or [[model]] of a suite.
struct SuiteEntry {
  enum class Kind { Workload, Model };
  Kind kind = Kind::Workload;
  std::string workload;                // Kind::Workload: canonical, ops::Workload::to_string()
  std::string model_path;              // Kind::Model: resolved against the suite file's folder
  std::vector<std::string> dims;       // Kind::Model: "NAME=N"
  std::vector<std::string> baselines;  // in the order given
  int trials = 0;                      // the entry's, else the suite's
  std::string space;                   // "", "template", "auto" or "both"
  int in_model = 5;                    // Kind::Model: `tune MODEL --in-model`
  int line = 0;                        // the line of its [[...]] header
  // The workload string, or the model path as written in the file.
  std::string name() const;
  std::string written_path;  // Kind::Model: the path as written (name() returns it)
};

struct Suite {
  std::string name;  // `name`, else the file's stem
  std::string path;  // the suite file, as given
  int trials = 200;
  std::string time_budget;  // per entry, as written ("30m"); "" = none
  int rounds = 9;
  int threads = 0;                  // 0 = one per core
  std::vector<SuiteEntry> entries;  // in file order
};

// Reads and checks the suite file at path; UserError for a file that cannot be read.
Suite parse_suite_file(const std::string& path);
// base_dir: what relative model paths resolve against; path: for messages (and the
// default name).
Suite parse_suite_text(const std::string& text, const std::string& path, const std::string& base_dir);

// The baselines a suite may name: onednn, openblas, eigen, cublas, onnxruntime.
const std::vector<std::string>& known_baselines();

}  // namespace temper::sweep
