// The report page in a real browser: a log made here (two machines' logs merged, one
// probed; a model job's several workloads; failed records; a sweep on each machine) is written as a page by
// report::write_report and opened in headless Chromium (Debian's chromium, which
// scripts/install-deps.sh installs). The page must log nothing to the console, draw every
// chart (each canvas has painted pixels) and show in its workloads table the values the
// records give; a screenshot is taken. Without Chromium the test prints SKIP.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report/html_report.h"
#include "tuning_db/merge.h"
#include "tuning_db/sqlite_database.h"
#include "tuning_db_test_util.h"

namespace temper::report {
namespace {

using nlohmann::json;
using tuning_db::ErrorKind;
using tuning_db::TargetInfo;
using tuning_db::TuningRecord;

const TargetInfo kZen{"llvm -mcpu=native", "AMD EPYC 9R14", "fpu avx2 fma avx512f", 2, "LLVM 19.1.7", ""};
const TargetInfo kXeon{"llvm -mcpu=native", "Intel Xeon Platinum 8488C", "fpu avx2 fma avx512f amx_tile", 4,
                       "LLVM 19.1.7", ""};

// The tasks of a small CNN, as `temper tune MODEL.onnx` logs them.
const char* kModelTasks[] = {
    "conv2d_nchwc:N=1,C=3,H=32,W=32,K=16,R=3,S=3,stride=1,pad=1,dilation=1,in_block=1,out_block=16,dtype=float32",
    "conv2d_nchwc:N=1,C=16,H=32,W=32,K=32,R=3,S=3,stride=2,pad=1,dilation=1,in_block=16,out_block=16,dtype=float32",
    "dense:M=1,N=10,K=512,bias=1,act=none,dtype=float32",
};

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    for (const char* dir : {"/usr/bin", "/usr/local/bin", "/snap/bin"}) {
      std::filesystem::path p = std::filesystem::path(dir) / name;
      if (std::filesystem::exists(p)) return p.string();
    }
  }
  return "";
}

// Runs command, returning its stdout; stderr goes to err_path.
std::string run(const std::string& command, const std::string& err_path) {
  std::string full = command + " 2>" + err_path;
  FILE* pipe = popen(full.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << full;
  if (!pipe) return "";
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  int status = pclose(pipe);
  EXPECT_EQ(status, 0) << full << "\n" << tuning_db::log_testing::read_bytes(err_path);
  return out;
}

std::string unescape_html(std::string text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out += text[i];
      continue;
    }
    size_t end = text.find(';', i);
    std::string entity = text.substr(i, end - i + 1);
    out += entity == "&lt;" ? "<" : entity == "&gt;" ? ">" : entity == "&amp;" ? "&" : entity == "&quot;" ? "\"" : entity;
    i = end;
  }
  return out;
}

// The page under test in an iframe; once it has loaded, every <details> opened and a
// moment passed, what it drew is written into this page as JSON, which --dump-dom prints.
const char* kInspector = R"html(<!doctype html><html><body>
<iframe id="page" src="report.html" style="width:1400px;height:3000px"></iframe>
<script>
document.getElementById('page').addEventListener('load', () => {
  const win = document.getElementById('page').contentWindow;
  const doc = win.document;
  doc.querySelectorAll('details').forEach(d => { d.open = true; });
  setTimeout(() => {
    const out = {rendered: doc.body.dataset.rendered || null, canvases: [], rows: []};
    doc.querySelectorAll('canvas').forEach(c => {
      const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let painted = 0;
      for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) painted++;
      const chart = win.Chart && win.Chart.getChart(c);
      out.canvases.push({chart: c.dataset.chart || '', width: c.width, height: c.height, painted: painted,
                         lines: chart ? chart.data.datasets.map(d => d.label) : []});
    });
    out.tableRows = {};
    ['sweeps-table', 'models-table', 'model-tasks-table'].forEach(id => {
      out.tableRows[id] = doc.querySelectorAll('#' + id + ' tbody tr').length;
    });
    doc.querySelectorAll('#workloads-table tbody tr').forEach(tr => {
      const row = {};
      tr.querySelectorAll('td').forEach(td => {
        row[td.dataset.col] = td.dataset.value !== undefined ? td.dataset.value : td.textContent;
      });
      out.rows.push(row);
    });
    const pre = document.createElement('pre');
    pre.id = 'result';
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }, 1500);
});
</script></body></html>
)html";

// A schedule trace of its own for schedule s (s + 1 block lookups): a merge takes only
// records whose trace is one.
json trace_of(int s) {
  json instructions = json::array();
  for (int i = 0; i <= s; ++i) {
    instructions.push_back(
        {{"kind", "GetBlock"}, {"attrs", {"conv"}}, {"inputs", json::array()}, {"outputs", {"b" + std::to_string(i)}}});
  }
  return {{"version", 1}, {"instructions", instructions}};
}

// A sweep of one workload (tuned, default, a baseline that could not run) and one model
// (tuned with its tasks and the log's estimate, default, onnxruntime) on machine.
std::vector<tuning_db::SweepResult> sweep_of(const TargetInfo& machine) {
  std::vector<tuning_db::SweepResult> results;
  auto add = [&](const std::string& entry, const std::string& kind, const std::string& contender, double ms,
                 const std::string& details = "") {
    tuning_db::SweepResult r;
    r.sweep = "small";
    r.entry = entry;
    r.entry_kind = kind;
    r.contender = contender;
    r.machine = machine;
    r.status = ms > 0 ? "ok" : "unavailable";
    r.why = ms > 0 ? "" : "the baseline runner temper-baseline is not built here";
    r.description = contender + " as timed";
    r.seconds = ms * 1e-3;
    if (ms > 0) r.round_seconds = {ms * 1.01e-3, ms * 1e-3, ms * 0.99e-3};
    r.flops = kind == "workload" ? 1e9 : 0;
    r.threads = machine.cores;
    r.details = details;
    r.timestamp = 1700000500;
    r.temper_version = "0.1.0";
    results.push_back(r);
  };
  add(kModelTasks[2], "workload", "temper-tuned", 0.5);
  add(kModelTasks[2], "workload", "temper-default", 0.6);
  add(kModelTasks[2], "workload", "onednn", 0);
  json details = {{"estimated_ms", 0.9},
                  {"tasks", {{{"workload", kModelTasks[0]}, {"count", 1}, {"best_ms", 0.3}},
                             {{"workload", kModelTasks[1]}, {"count", 2}, {"best_ms", 0.3}}}}};
  add("cnn.onnx", "model", "temper-tuned", 1.0, details.dump());
  add("cnn.onnx", "model", "temper-default", 1.2);
  add("cnn.onnx", "model", "onnxruntime", 1.1);
  return results;
}

class ReportBrowser : public tuning_db::log_testing::TempDirTest {
 protected:
  ReportBrowser() : TempDirTest("temper_report_browser") {}

  // Records of every task on `machine`: schedule s of task t takes base * (1 + s) ms less
  // a step, with a compile error and a wrong result among them; the best is known here.
  void tune(tuning_db::Database& log, const TargetInfo& machine, double base_ms, int64_t start) {
    std::vector<TuningRecord> records;
    int64_t clock = start;
    for (size_t t = 0; t < std::size(kModelTasks); ++t) {
      std::string workload = kModelTasks[t];
      std::string op = workload.substr(0, workload.find(':'));
      for (int s = 0; s < 12; ++s) {
        TuningRecord r;
        r.workload = {op, workload};
        r.target = machine;
        r.trace = trace_of(s);
        r.config = s % 3 == 2 ? json(nullptr) : json{{"tile", s}};  // every third from the auto-scheduler
        r.tuner = s % 3 == 0 ? "ga" : "xgb";                           // the templates' by two tuners
        r.timestamp = clock += 2;
        r.temper_version = "0.1.0";
        if (s == 4 || s == 7) {
          r.error = s == 4 ? ErrorKind::CompileError : ErrorKind::WrongResult;
          r.error_message = "failed";
          r.mean = NAN;
          ++failures_[{machine.cpu_model, workload}];
        } else {
          double ms = base_ms * (t + 1) * (1.0 + 0.5 / (1 + s));
          r.costs = {ms * 0.98e-3, ms * 1e-3, ms * 1.02e-3};
          r.mean = ms * 1e-3;
          double& best = best_ms_[{machine.cpu_model, workload}];
          best = best == 0 ? ms : std::min(best, ms);
        }
        records.push_back(r);
      }
    }
    log.commit_records(records);
  }

  std::map<std::pair<std::string, std::string>, double> best_ms_;
  std::map<std::pair<std::string, std::string>, int> failures_;
};

TEST_F(ReportBrowser, ThePageDrawsEveryChartWithoutErrorsAndShowsTheLogsValues) {
  std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "SKIP: no Chromium here (apt-get install chromium; scripts/install-deps.sh does)";

  // Two machines' logs, merged as `temper db merge` merges them; the Zen one probed.
  {
    tuning_db::SQLiteDatabase zen(file("zen.db"));
    tune(zen, kZen, 0.05, 1700000000);
    tuning_db::MachineProbe probe;
    probe.machine = kZen;
    probe.threads = 2;
    probe.fp32_gflops = 234;
    probe.int8_gops = 935;
    probe.bandwidth_gbs = 27.5;
    probe.timestamp = 1699999999;
    probe.temper_version = "0.1.0";
    zen.commit_probe(probe);
    zen.commit_sweep_results(sweep_of(kZen));
    tuning_db::SQLiteDatabase xeon(file("xeon.db"));
    tune(xeon, kXeon, 0.03, 1700100000);
    tuning_db::MergeResult merged = tuning_db::add_new_records(zen, xeon.all_records());
    ASSERT_TRUE(merged.refused.empty()) << merged.refused.front();
    ASSERT_EQ(merged.added, xeon.size());
    tuning_db::add_new_probes(zen, xeon.probes());
    xeon.commit_sweep_results(sweep_of(kXeon));
    EXPECT_EQ(tuning_db::add_new_sweep_results(zen, xeon.sweep_results()), 6);
  }
  tuning_db::SQLiteDatabase log(file("zen.db"), tuning_db::OpenMode::ReadOnly);
  ReportOptions options;
  options.log_path = file("zen.db");
  write_report(log, options, file("report.html"));
  tuning_db::log_testing::write_bytes(file("inspect.html"), kInspector);

  std::string flags = " --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run ";
  std::string dom = run("timeout 120 " + chromium + flags +
                            "--allow-file-access-from-files --enable-logging=stderr --v=0 --virtual-time-budget=20000 "
                            "--dump-dom file://" + file("inspect.html"),
                        file("inspect.err"));
  std::string console = tuning_db::log_testing::read_bytes(file("inspect.err"));
  std::istringstream lines(console);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.find("CONSOLE"), std::string::npos) << "the page wrote to the console: " << line;
  }
  size_t begin = dom.find("<pre id=\"result\">");
  ASSERT_NE(begin, std::string::npos) << "the inspector found no drawn page:\n" << dom.substr(0, 2000) << console;
  begin += std::string("<pre id=\"result\">").size();
  json result = json::parse(unescape_html(dom.substr(begin, dom.find("</pre>", begin) - begin)));

  // Charts: the probed machine's roofline, the failures, and per task and machine the two
  // tuning curves and the spread.
  size_t expected_charts = 1 + 1 + 3 * std::size(kModelTasks) * 2;
  ASSERT_EQ(result["canvases"].size(), expected_charts) << result["canvases"].dump();
  EXPECT_EQ(result["rendered"], std::to_string(expected_charts));
  int curves = 0;
  for (const json& c : result["canvases"]) {
    EXPECT_GT(c["width"].get<int>(), 0) << c["chart"];
    EXPECT_GT(c["painted"].get<int>(), 500) << "chart " << c["chart"] << " drew nothing";
    if (c["chart"].get<std::string>().starts_with("curve-")) {
      ++curves;
      // One line per tuner, by name.
      EXPECT_EQ(c["lines"], json({"auto-scheduler (xgb)", "template (ga)", "template (xgb)"})) << c["chart"];
    }
  }
  EXPECT_EQ(curves, static_cast<int>(2 * std::size(kModelTasks) * 2));

  // The sweeps: 6 contenders on each machine; the model's estimate on each; its 2 tasks on each.
  EXPECT_EQ(result["tableRows"]["sweeps-table"], 12);
  EXPECT_EQ(result["tableRows"]["models-table"], 2);
  EXPECT_EQ(result["tableRows"]["model-tasks-table"], 4);

  ASSERT_EQ(result["rows"].size(), std::size(kModelTasks) * 2);
  for (const json& row : result["rows"]) {
    std::string workload = row["workload"];
    std::string machine = row["machine"].get<std::string>().starts_with("AMD") ? kZen.cpu_model : kXeon.cpu_model;
    std::pair<std::string, std::string> key{machine, workload};
    ASSERT_TRUE(best_ms_.count(key)) << workload << " on " << machine;
    EXPECT_NEAR(std::stod(row["best_ms"].get<std::string>()), best_ms_[key], 1e-9) << workload << " on " << machine;
    EXPECT_EQ(std::stoi(row["records"].get<std::string>()), 12);
    EXPECT_EQ(std::stoi(row["valid"].get<std::string>()), 10);
    EXPECT_EQ(std::stoi(row["failures"].get<std::string>()), failures_[key]);
  }

  run("timeout 120 " + chromium + flags + "--window-size=1400,3000 --screenshot=" + file("report.png") + " file://" +
          file("report.html"),
      file("shot.err"));
  ASSERT_TRUE(std::filesystem::exists(file("report.png")));
  EXPECT_GT(std::filesystem::file_size(file("report.png")), 20000u);
}

}  // namespace
}  // namespace temper::report
