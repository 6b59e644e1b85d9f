// What the tuning log keeps beside its records: machine probes (tuning_db/machine_probe.h),
// the newest of a machine found among several machines', benchmark sweep results
// (tuning_db/sweep_result.h) and schedules chosen inside a model
// (tuning_db/model_choice.h); all kept in SQLite and carried by a merge without being
// repeated.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "tuning_db/json_lines.h"
#include "tuning_db/memory_database.h"
#include "tuning_db/merge.h"
#include "tuning_db/sqlite_database.h"
#include "sqlite_test_util.h"
#include "tuning_db_test_util.h"

namespace temper::tuning_db {
namespace {

using log_testing::sqlite_exec;
using log_testing::TempDirTest;

const TargetInfo kZen{"llvm -mcpu=native", "AMD EPYC 9R14", "fpu avx2 fma avx512f", 2, "LLVM 19.1.7", ""};
const TargetInfo kXeon{"llvm -mcpu=native", "Intel Xeon Platinum 8488C", "fpu avx2 fma avx512f amx_tile", 4,
                       "LLVM 19.1.7", ""};

MachineProbe probe_of(const TargetInfo& machine, double fp32, int64_t timestamp) {
  MachineProbe p;
  p.machine = machine;
  p.threads = machine.cores;
  p.fp32_gflops = fp32;
  p.int8_gops = 4 * fp32;
  p.bandwidth_gbs = 30.5;
  p.timestamp = timestamp;
  p.temper_version = "0.1.0";
  return p;
}

class MachineProbeLog : public TempDirTest {
 protected:
  MachineProbeLog() : TempDirTest("temper_probe_log") {}
};

TEST_F(MachineProbeLog, ProbesRoundTripThroughTheFileInCommitOrder) {
  std::vector<MachineProbe> written = {probe_of(kZen, 234.0, 100), probe_of(kXeon, 512.5, 90),
                                       probe_of(kZen, 240.0, 200)};
  {
    SQLiteDatabase db(file("t.db"));
    for (const MachineProbe& p : written) db.commit_probe(p);
  }
  SQLiteDatabase db(file("t.db"), OpenMode::ReadOnly);
  EXPECT_EQ(db.probes(), written);
  EXPECT_EQ(db.size(), 0);  // a probe is no record
}

TEST(MachineProbe, TheNewestProbeOfTheSameKindOfMachineIsTaken) {
  std::vector<MachineProbe> probes = {probe_of(kZen, 234.0, 100), probe_of(kXeon, 512.5, 300),
                                      probe_of(kZen, 240.0, 200)};
  TargetInfo zen_other_target = kZen;
  zen_other_target.target = "llvm -mcpu=znver4";  // same machine, another target string
  zen_other_target.cores = 8;
  const MachineProbe* zen = latest_probe_of(probes, zen_other_target);
  ASSERT_NE(zen, nullptr);
  EXPECT_EQ(zen->fp32_gflops, 240.0);
  ASSERT_NE(latest_probe_of(probes, kXeon), nullptr);
  EXPECT_EQ(latest_probe_of(probes, kXeon)->fp32_gflops, 512.5);
  TargetInfo gpu = kZen;
  gpu.device = "NVIDIA H200 | 13.0 | sm_90";  // a CPU probe says nothing about a GPU
  EXPECT_EQ(latest_probe_of(probes, gpu), nullptr);
}

TEST(MachineProbe, MergingAddsTheProbesALogLacksOnce) {
  MemoryDatabase into;
  into.commit_probe(probe_of(kZen, 234.0, 100));
  std::vector<MachineProbe> other = {probe_of(kZen, 234.0, 100), probe_of(kXeon, 512.5, 90)};
  EXPECT_EQ(add_new_probes(into, other), 1);
  EXPECT_EQ(add_new_probes(into, other), 0);
  ASSERT_EQ(into.probes().size(), 2u);
  EXPECT_EQ(into.probes()[1].machine, kXeon);
}

SweepResult sweep_result(const TargetInfo& machine, const std::string& contender, double seconds) {
  SweepResult r;
  r.sweep = "cpu_core";
  r.entry = "matmul:M=64,N=64,K=64,transpose_a=0,transpose_b=0,dtype=float32";
  r.entry_kind = "workload";
  r.contender = contender;
  r.machine = machine;
  r.status = seconds > 0 ? "ok" : "unavailable";
  r.why = seconds > 0 ? "" : "the baseline runner is not built";
  r.description = contender + " on 2 threads";
  r.seconds = seconds;
  if (seconds > 0) r.round_seconds = {seconds * 1.01, seconds, seconds * 0.99};
  r.flops = 524288;
  r.threads = 2;
  r.timestamp = 1700000000;
  r.temper_version = "0.1.0";
  return r;
}

TEST_F(MachineProbeLog, SweepResultsRoundTripAndMergeOnce) {
  std::vector<SweepResult> written = {sweep_result(kZen, "temper-tuned", 1e-4), sweep_result(kZen, "onednn", 0),
                                      sweep_result(kXeon, "temper-tuned", 5e-5)};
  {
    SQLiteDatabase db(file("t.db"));
    db.commit_sweep_results(written);
  }
  SQLiteDatabase db(file("t.db"), OpenMode::ReadOnly);
  EXPECT_EQ(db.sweep_results(), written);
  MemoryDatabase into;
  into.commit_sweep_results({written[0]});
  EXPECT_EQ(add_new_sweep_results(into, db.sweep_results()), 2);
  EXPECT_EQ(add_new_sweep_results(into, db.sweep_results()), 0);
  EXPECT_EQ(into.sweep_results().size(), 3u);
}

const WorkloadKey kMatmul{"matmul", "matmul:M=64,N=64,K=64,transpose_a=0,transpose_b=0,dtype=float32"};

ModelChoice model_choice(const TargetInfo& target, const std::string& picked, const nlohmann::json& config,
                         double model_seconds) {
  ModelChoice c;
  c.workload = kMatmul;
  c.target = target;
  c.model = "mobilenet_v2.onnx";
  c.trace = {{"version", 1}, {"instructions", nlohmann::json::array({{{"kind", "Split"}, {"factor", 8}}})}};
  c.config = config;
  c.picked = picked;
  c.model_seconds = model_seconds;
  c.log_best_seconds = 1.25e-4;
  c.timestamp = 1700000000;
  c.temper_version = "0.1.0";
  return c;
}

// One measurement of kMatmul on kZen.
TuningRecord matmul_record() {
  TuningRecord record;
  record.workload = kMatmul;
  record.target = kZen;
  record.trace = {{"version", 1}, {"instructions", nlohmann::json::array()}};
  record.costs = {1e-4};
  record.mean = 1e-4;
  record.temper_version = "0.1.0";
  return record;
}

TEST_F(MachineProbeLog, ModelChoicesRoundTripThroughTheFileInCommitOrder) {
  std::vector<ModelChoice> written = {model_choice(kZen, "template default", nullptr, 1.5e-4),
                                      model_choice(kXeon, "log rank 2", {{"tile_i", 16}, {"unroll", true}}, 9e-5)};
  {
    SQLiteDatabase db(file("t.db"));
    db.commit_model_choices(written);
  }
  SQLiteDatabase db(file("t.db"), OpenMode::ReadOnly);
  EXPECT_EQ(db.model_choices(), written);
  EXPECT_TRUE(db.model_choices()[0].config.is_null());  // a trace-only schedule stays one
  EXPECT_EQ(db.size(), 0);  // a model choice is no record
}

TEST_F(MachineProbeLog, ASchema4LogHasNoModelChoicesUntilOpenedForWriting) {
  TuningRecord record = matmul_record();
  // A log as schema 4 left it: this Temper's log without what schemas 5 and 6 add.
  std::string path = file("v4.db");
  { SQLiteDatabase(path).commit_record(record); }
  sqlite_exec(path,
              "PRAGMA journal_mode = DELETE; DROP TABLE model_choices; ALTER TABLE records DROP COLUMN tuner; "
              "PRAGMA user_version = 4");
  {
    SQLiteDatabase db(path, OpenMode::ReadOnly);
    EXPECT_EQ(db.stats().schema_version, 4);
    EXPECT_TRUE(db.model_choices().empty());
    EXPECT_EQ(db.all_records(), std::vector<TuningRecord>{record});
  }
  SQLiteDatabase db(path);
  EXPECT_EQ(db.stats().schema_version, sqlite_schema_version());
  EXPECT_EQ(db.all_records(), std::vector<TuningRecord>{record});
  ModelChoice choice = model_choice(kZen, "log rank 1", {{"tile_i", 8}}, 1e-4);
  db.commit_model_choices({choice});
  EXPECT_EQ(db.model_choices(), std::vector<ModelChoice>{choice});
}

TEST(ModelChoice, MergingAddsTheChoicesALogLacksOnce) {
  MemoryDatabase into;
  into.commit_model_choices({model_choice(kZen, "log rank 2", {{"tile_i", 16}}, 9e-5)});
  std::vector<ModelChoice> other = {model_choice(kZen, "log rank 2", {{"tile_i", 16}}, 9e-5),
                                    model_choice(kXeon, "template default", nullptr, 1.5e-4),
                                    model_choice(kXeon, "template default", nullptr, 1.5e-4)};
  EXPECT_EQ(add_new_model_choices(into, other), 1);
  EXPECT_EQ(add_new_model_choices(into, other), 0);
  ASSERT_EQ(into.model_choices().size(), 2u);
  EXPECT_EQ(into.model_choices()[1].target, kXeon);
}

TEST(ModelChoice, JsonLinesCarryTheChoicesAfterTheRecords) {
  MemoryDatabase log;
  TuningRecord record = matmul_record();
  log.commit_record(record);
  std::vector<ModelChoice> choices = {model_choice(kZen, "log rank 2", {{"tile_i", 16}}, 9e-5),
                                      model_choice(kXeon, "template default", nullptr, 1.5e-4)};
  log.commit_model_choices(choices);

  std::stringstream text;
  JsonLinesCount written = export_json_lines(log, text);
  EXPECT_EQ(written.records, 1);
  EXPECT_EQ(written.model_choices, 2);
  std::string lines = text.str();
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 3);
  EXPECT_EQ(lines.rfind("{\"model_choice\":", 0), std::string::npos);  // the record comes first

  MemoryDatabase copy;
  std::stringstream in(lines);
  JsonLinesCount read = import_json_lines(copy, in, "log.jsonl");
  EXPECT_EQ(read.records, 1);
  EXPECT_EQ(read.model_choices, 2);
  EXPECT_EQ(copy.all_records(), std::vector<TuningRecord>{record});
  EXPECT_EQ(copy.model_choices(), choices);
  EXPECT_TRUE(copy.model_choices()[1].config.is_null());
  std::stringstream again;
  export_json_lines(copy, again);
  EXPECT_EQ(again.str(), lines);
}

}  // namespace
}  // namespace temper::tuning_db
