// The report's data (report/report_data.h) from a log made here: machines told apart by
// their fingerprints, each with its own probe or none; per workload and machine the best
// as a build takes it, the failures by kind, the tuning curve per search kind, the spread
// of the fastest schedules; and the page around it (report/html_report.h).
#include <gtest/gtest.h>

#include "compiler/ir/error.h"
#include "report/html_report.h"
#include "report/report_data.h"
#include "tuning_db/memory_database.h"

namespace temper::report {
namespace {

using nlohmann::json;
using tuning_db::ErrorKind;
using tuning_db::MachineProbe;
using tuning_db::TargetInfo;
using tuning_db::TuningRecord;

const TargetInfo kZen{"llvm -mcpu=native", "AMD EPYC 9R14", "fpu avx2 fma avx512f", 2, "LLVM 19.1.7", ""};
const TargetInfo kXeon{"llvm -mcpu=native", "Intel Xeon Platinum 8488C", "fpu avx2 fma avx512f amx_tile", 4,
                       "LLVM 19.1.7", ""};
const char* kMatmul = "matmul:M=64,N=64,K=64,transpose_a=0,transpose_b=0,dtype=float32";
constexpr double kMatmulFlops = 2.0 * 64 * 64 * 64;

// A record of schedule `id` (template when templated, else a trace alone) taking costs.
TuningRecord record(const TargetInfo& machine, int id, bool templated, std::vector<double> costs, int64_t timestamp,
                    ErrorKind error = ErrorKind::None) {
  TuningRecord r;
  r.workload = {"matmul", kMatmul};
  r.target = machine;
  r.trace = {{"schedule", id}};
  r.config = templated ? json{{"tile", id}} : json(nullptr);
  r.costs = std::move(costs);
  r.error = error;
  r.mean = 0;
  if (error == ErrorKind::None) {
    for (double c : r.costs) r.mean += c / r.costs.size();
  } else {
    r.mean = NAN;
    r.costs.clear();
    r.error_message = "failed";
  }
  r.timestamp = timestamp;
  r.temper_version = "0.1.0";
  return r;
}

const json& result_on(const json& workload, int machine) {
  for (const json& r : workload["results"]) {
    if (r["machine"] == machine) return r;
  }
  ADD_FAILURE() << "no result on machine " << machine;
  static const json none;
  return none;
}

class ReportData : public ::testing::Test {
 protected:
  ReportData() {
    log_.commit_records({
        record(kZen, 1, true, {4e-3, 4e-3, 4e-3}, 1000),                        // trial 1: the first time
        record(kZen, 2, true, {}, 1001, ErrorKind::CompileError),               // trial 2
        record(kZen, 3, true, {2e-3, 2.2e-3, 1.9e-3}, 1004),                    // trial 3: better
        record(kZen, 4, true, {3e-3, 3e-3, 3e-3}, 1007),                        // trial 4: not better
        record(kZen, 5, true, {1e-3}, 1008),                                    // fast, but...
        record(kZen, 5, true, {}, 1009, ErrorKind::WrongResult),                // ...once wrong: never ranked
        record(kZen, 6, false, {1.6e-3, 1.5e-3, 1.4e-3}, 1020),                 // the auto-scheduler's best
        record(kXeon, 1, true, {1e-3, 1e-3, 1e-3}, 5000),                       // another machine
    });
    MachineProbe zen;
    zen.machine = kZen;
    zen.threads = 2;
    zen.fp32_gflops = 234;
    zen.int8_gops = 935;
    zen.bandwidth_gbs = 27.5;
    zen.timestamp = 900;
    log_.commit_probe(zen);
    options_.title = "a report";
    options_.log_path = "/tmp/t.db";
  }

  tuning_db::MemoryDatabase log_;
  ReportOptions options_;
};

TEST_F(ReportData, MachinesAreTheFingerprintsWithTheirOwnProbes) {
  json data = report_data(log_, options_);
  EXPECT_EQ(data["title"], "a report");
  EXPECT_EQ(data["log"], "/tmp/t.db");
  ASSERT_EQ(data["machines"].size(), 2u);
  EXPECT_EQ(data["machines"][0]["cpu_model"], "AMD EPYC 9R14");
  EXPECT_EQ(data["machines"][0]["label"], "AMD EPYC 9R14, 2 cores (llvm -mcpu=native)");
  EXPECT_EQ(data["machines"][0]["simd"], "avx512f avx2 fma");
  EXPECT_EQ(data["machines"][0]["probe"]["fp32_gflops"], 234.0);
  EXPECT_EQ(data["machines"][0]["probe"]["bandwidth_gbs"], 27.5);
  EXPECT_EQ(data["machines"][1]["simd"], "avx512f amx_tile avx2 fma");
  EXPECT_TRUE(data["machines"][1]["probe"].is_null());  // the Xeon was never probed
}

TEST_F(ReportData, TheBestIsTheBuildsChoiceAndFailuresCountByKind) {
  json data = report_data(log_, options_);
  ASSERT_EQ(data["workloads"].size(), 1u);
  const json& w = data["workloads"][0];
  EXPECT_EQ(w["workload"], kMatmul);
  EXPECT_EQ(w["flops"], kMatmulFlops);
  EXPECT_EQ(w["bytes"], 3 * 64 * 64 * 4.0);
  const json& zen = result_on(w, 0);
  EXPECT_EQ(zen["records"], 7);
  EXPECT_EQ(zen["valid"], 5);
  EXPECT_EQ(zen["failures"], (json{{"CompileError", 1}, {"WrongResult", 1}}));
  // Schedule 5 once gave a wrong result: the best is the auto-scheduler's 1.5 ms.
  EXPECT_DOUBLE_EQ(zen["best_ms"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(zen["median_ms"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(zen["best_gflops"].get<double>(), kMatmulFlops / 1.5e-3 / 1e9);
  EXPECT_DOUBLE_EQ(zen["first_ms"].get<double>(), 4.0);
  const json& xeon = result_on(w, 1);
  EXPECT_EQ(xeon["records"], 1);
  EXPECT_DOUBLE_EQ(xeon["best_ms"].get<double>(), 1.0);
  EXPECT_EQ(data["failures"], (json::array({{{"machine", 0}, {"kind", "CompileError"}, {"count", 1}},
                                           {{"machine", 0}, {"kind", "WrongResult"}, {"count", 1}}})));
}

TEST_F(ReportData, TheCurveStepsWhereEachSearchKindsBestImproves) {
  json data = report_data(log_, options_);
  const json& curve = result_on(data["workloads"][0], 0)["curve"];
  auto g = [](double seconds) { return kMatmulFlops / seconds / 1e9; };
  // [trial within the kind, seconds since the machine's first record, best GFLOP/s so far]
  ASSERT_EQ(curve["template"].size(), 4u);
  EXPECT_EQ(curve["template"][0][0], 1);
  EXPECT_DOUBLE_EQ(curve["template"][0][2].get<double>(), g(4e-3));
  EXPECT_EQ(curve["template"][1][0], 3);
  EXPECT_EQ(curve["template"][1][1], 4.0);
  EXPECT_DOUBLE_EQ(curve["template"][1][2].get<double>(), g((2e-3 + 2.2e-3 + 1.9e-3) / 3));
  EXPECT_EQ(curve["template"][2][0], 5);  // the curve is of what was measured, wrong results aside
  EXPECT_DOUBLE_EQ(curve["template"][2][2].get<double>(), g(1e-3));
  EXPECT_EQ(curve["template"][3][0], 6);  // runs to the kind's last trial
  EXPECT_EQ(curve["template"][3][1], 9.0);
  ASSERT_EQ(curve["auto-scheduler"].size(), 1u);
  EXPECT_EQ(curve["auto-scheduler"][0][0], 1);
  EXPECT_EQ(curve["auto-scheduler"][0][1], 20.0);
}

// Two jobs on one log, ga then xgb, beside the records of an older Temper that named no
// tuner: one line per tuner, its trials counted among its own records.
TEST(ReportDataTuners, EachTunerHasItsOwnCurveAndOlderRecordsTheirSearchKind) {
  tuning_db::MemoryDatabase log;
  auto by = [](const std::string& tuner, TuningRecord r) {
    r.tuner = tuner;
    return r;
  };
  log.commit_records({
      record(kZen, 1, true, {4e-3}, 100),                     // before schema 6: no tuner
      by("ga", record(kZen, 2, true, {3e-3}, 200)),           // ga's trial 1
      by("ga", record(kZen, 3, true, {3.5e-3}, 201)),         // ga's trial 2: not better
      by("xgb", record(kZen, 4, true, {2e-3}, 300)),          // xgb's trial 1
      by("ga", record(kZen, 5, true, {2.5e-3}, 301)),         // ga's trial 3: better
      by("xgb", record(kZen, 6, false, {1e-3}, 400)),         // the auto-scheduler under xgb
  });
  json data = report_data(log, {});
  const json& result = result_on(data["workloads"][0], 0);
  const json& curve = result["curve"];
  auto g = [](double seconds) { return kMatmulFlops / seconds / 1e9; };
  EXPECT_EQ(curve.size(), 4u) << curve.dump();
  ASSERT_EQ(curve["template"].size(), 1u);
  ASSERT_EQ(curve["template (ga)"].size(), 2u);
  EXPECT_EQ(curve["template (ga)"][0][0], 1);
  EXPECT_DOUBLE_EQ(curve["template (ga)"][0][2].get<double>(), g(3e-3));
  EXPECT_EQ(curve["template (ga)"][1][0], 3);
  EXPECT_EQ(curve["template (ga)"][1][1], 201.0);
  EXPECT_DOUBLE_EQ(curve["template (ga)"][1][2].get<double>(), g(2.5e-3));
  ASSERT_EQ(curve["template (xgb)"].size(), 1u);
  EXPECT_EQ(curve["template (xgb)"][0][0], 1);
  EXPECT_EQ(curve["template (xgb)"][0][1], 200.0);
  ASSERT_EQ(curve["auto-scheduler (xgb)"].size(), 1u);
  EXPECT_EQ(result["spread"][0]["kind"], "auto-scheduler (xgb)");
}

TEST_F(ReportData, TheSpreadListsTheRankedSchedulesRepeats) {
  json data = report_data(log_, options_);
  const json& spread = result_on(data["workloads"][0], 0)["spread"];
  ASSERT_EQ(spread.size(), 4u);  // schedules 6, 3, 4 and 1; 5 is never ranked
  EXPECT_EQ(spread[0]["kind"], "auto-scheduler");
  EXPECT_DOUBLE_EQ(spread[0]["min_ms"].get<double>(), 1.4);
  EXPECT_DOUBLE_EQ(spread[0]["median_ms"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(spread[0]["max_ms"].get<double>(), 1.6);
  EXPECT_EQ(spread[0]["repeats"], 3);
  EXPECT_EQ(spread[1]["rank"], 2);
  EXPECT_DOUBLE_EQ(spread[1]["median_ms"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(spread[3]["max_ms"].get<double>(), 4.0);
}

TEST(ReportDataEdges, AnEmptyLogHasNoMachinesWorkloadsOrFailures) {
  tuning_db::MemoryDatabase empty;
  json data = report_data(empty, {});
  EXPECT_TRUE(data["machines"].empty());
  EXPECT_TRUE(data["workloads"].empty());
  EXPECT_TRUE(data["failures"].empty());
}

TEST(ReportDataEdges, AWorkloadThisTemperCannotInstantiateIsDrawnWithoutFlops) {
  tuning_db::MemoryDatabase log;
  TuningRecord r = record(kZen, 1, true, {1e-3}, 10);
  r.workload = {"frobnicate", "frobnicate:size=3"};
  log.commit_record(r);
  json data = report_data(log, {});
  ASSERT_EQ(data["workloads"].size(), 1u);
  EXPECT_EQ(data["workloads"][0]["flops"], 0.0);
  EXPECT_EQ(data["workloads"][0]["results"][0]["best_gflops"], 0.0);
  EXPECT_DOUBLE_EQ(data["workloads"][0]["results"][0]["best_ms"].get<double>(), 1.0);
}

TEST(ReportPage, DataCannotCloseItsScriptElement) {
  json data = {{"title", "a </title> title"}, {"workloads", {{{"workload", "</script><script>alert(1)</script>"}}}}};
  std::string html = render_report_html(data, "/* chart.js */");
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);
  EXPECT_NE(html.find("\\u003c/script>\\u003cscript>alert(1)"), std::string::npos);
  EXPECT_NE(html.find("<title>a &lt;/title&gt; title</title>"), std::string::npos);
  EXPECT_NE(html.find("/* chart.js */"), std::string::npos);
  EXPECT_THROW(render_report_html(data, "var a = '</SCRIPT>';"), UserError);
}

}  // namespace
}  // namespace temper::report
