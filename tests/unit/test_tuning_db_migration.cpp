// The tuning log's schema 2 (a GPU target's fingerprint names its device): a log written
// by schema 1 is read as it is when opened read-only, and migrated in place, keeping every
// record, when opened for writing; records that differ only in their device are told apart.
// Schema 6's record tuner: "" for the records of older logs, kept for new ones, carried by JSON.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "compiler/ir/error.h"
#include "tuning_db/record.h"
#include "tuning_db/sqlite_database.h"

namespace temper::tuning_db {
namespace {

namespace fs = std::filesystem;

const WorkloadKey kMatmul{"matmul", "matmul:M=64,N=64,K=64,dtype=float32"};
const TargetInfo kCpu{"llvm -mcpu=native", "Test CPU @ 1GHz", "fpu avx2", 2, "LLVM 19.1.7", ""};

TuningRecord make_record(const TargetInfo& target, double mean, int tag) {
  TuningRecord r;
  r.workload = kMatmul;
  r.target = target;
  r.trace = {{"version", 1}, {"instructions", nlohmann::json::array({{{"kind", "Split"}, {"tag", tag}}})}};
  r.config = {{"tile_i", tag}};
  r.costs = {mean};
  r.mean = mean;
  r.timestamp = 1700000000 + tag;
  r.temper_version = "0.1.0";
  return r;
}

void exec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "") << "\n" << sql;
}

// A log as Temper wrote it with schema 1: two targets, three records (one failed).
void write_schema_1_log(const std::string& path) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  exec(db, R"sql(
    CREATE TABLE workloads (id INTEGER PRIMARY KEY, op TEXT NOT NULL, workload TEXT NOT NULL UNIQUE);
    CREATE TABLE targets (
      id INTEGER PRIMARY KEY, target TEXT NOT NULL, cpu_model TEXT NOT NULL, cpu_features TEXT NOT NULL,
      cores INTEGER NOT NULL, compiler TEXT NOT NULL,
      UNIQUE (target, cpu_model, cpu_features, cores, compiler));
    CREATE TABLE records (
      id INTEGER PRIMARY KEY, workload_id INTEGER NOT NULL REFERENCES workloads(id),
      target_id INTEGER NOT NULL REFERENCES targets(id), trace TEXT NOT NULL, config TEXT, costs TEXT NOT NULL,
      mean REAL, error_kind TEXT NOT NULL, error_message TEXT NOT NULL, timestamp INTEGER NOT NULL,
      temper_version TEXT NOT NULL);
    CREATE INDEX records_best ON records (workload_id, target_id, mean);
    INSERT INTO workloads VALUES (1, 'matmul', 'matmul:M=64,N=64,K=64,dtype=float32');
    INSERT INTO targets VALUES (7, 'llvm -mcpu=native', 'Test CPU @ 1GHz', 'fpu avx2', 2, 'LLVM 19.1.7');
    INSERT INTO targets VALUES (9, 'c', 'Test CPU @ 1GHz', 'fpu avx2', 2, 'cc 12.2');
    INSERT INTO records VALUES (1, 1, 7, '{"version":1,"instructions":[]}', '{"tile_i":1}', '[0.002]', 0.002,
                                'None', '', 1700000001, '0.1.0');
    INSERT INTO records VALUES (2, 1, 9, '{"version":1,"instructions":[]}', NULL, '[]', NULL,
                                'CompileError', 'it went wrong', 1700000002, '0.1.0');
    INSERT INTO records VALUES (3, 1, 7, '{"version":1,"instructions":[]}', '{"tile_i":3}', '[0.001]', 0.001,
                                'None', '', 1700000003, '0.1.0');
    PRAGMA user_version = 1;
  )sql");
  sqlite3_close(db);
}

int64_t user_version(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, nullptr);
  int64_t version = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1;
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return version;
}

class TuningDbMigration : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "temper_tuning_db_migration_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/old.db";
    write_schema_1_log(path_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string dir_;
  std::string path_;
};

void expect_the_schema_1_records(const std::vector<TuningRecord>& records) {
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].target, kCpu);
  EXPECT_EQ(records[0].mean, 0.002);
  EXPECT_EQ(records[0].config["tile_i"], 1);
  EXPECT_EQ(records[1].target.target, "c");
  EXPECT_EQ(records[1].target.compiler, "cc 12.2");
  EXPECT_EQ(records[1].error, ErrorKind::CompileError);
  EXPECT_EQ(records[1].error_message, "it went wrong");
  EXPECT_TRUE(std::isnan(records[1].mean));
  EXPECT_EQ(records[2].timestamp, 1700000003);
  for (const TuningRecord& r : records) {
    EXPECT_EQ(r.target.device, "");
    EXPECT_EQ(r.tuner, "");  // no record named its tuner before schema 6
  }
}

TEST_F(TuningDbMigration, ASchema1LogOpenedReadOnlyIsReadAsItIs) {
  {
    SQLiteDatabase db(path_, OpenMode::ReadOnly);
    expect_the_schema_1_records(db.all_records());
    EXPECT_EQ(db.top_k(kMatmul, "llvm -mcpu=native", 1).at(0).mean, 0.001);
    LogStats stats = db.stats();
    EXPECT_EQ(stats.schema_version, 1);
    EXPECT_TRUE(db.probes().empty());  // no table before schema 3
    EXPECT_TRUE(db.sweep_results().empty());  // nor before 4
    EXPECT_TRUE(db.model_choices().empty());  // nor before 5
    ASSERT_EQ(stats.targets.size(), 2u);
    EXPECT_EQ(stats.targets[0].target, kCpu);
    EXPECT_EQ(stats.targets[0].records, 2);
  }
  EXPECT_EQ(user_version(path_), 1);
}

TEST_F(TuningDbMigration, ASchema1LogOpenedForWritingIsMigratedKeepingEveryRecord) {
  {
    SQLiteDatabase db(path_);
    expect_the_schema_1_records(db.all_records());
    EXPECT_EQ(db.stats().schema_version, 6);
    EXPECT_TRUE(db.probes().empty());
    EXPECT_TRUE(db.sweep_results().empty());
    EXPECT_TRUE(db.model_choices().empty());
    // The ids stayed: a record of the migrated CPU target shares its row.
    TuningRecord by_ga = make_record(kCpu, 5e-4, 4);
    by_ga.tuner = "ga";
    db.commit_record(by_ga);
    EXPECT_EQ(db.stats().targets.size(), 2u);
  }
  EXPECT_EQ(user_version(path_), 6);
  SQLiteDatabase db(path_, OpenMode::ReadOnly);
  std::vector<TuningRecord> records = db.all_records();
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[3].target, kCpu);
  EXPECT_EQ(records[3].tuner, "ga");
  EXPECT_EQ(records[0].tuner, "");
  EXPECT_EQ(db.top_k(kMatmul, "llvm -mcpu=native", 1).at(0).mean, 5e-4);
}

// One target string and host, two devices (a driver update, another GPU of one model):
// two fingerprints, and the best-record query, by target string, sees both.
TEST_F(TuningDbMigration, RecordsOfOneTargetOnTwoDevicesKeepTheirDevices) {
  TargetInfo old_driver{"cuda -arch=sm_90", "Test CPU @ 1GHz", "fpu avx2", 2, "", "NVIDIA H200 | 12080 | sm_90"};
  TargetInfo new_driver = old_driver;
  new_driver.device = "NVIDIA H200 | 13000 | sm_90";
  SQLiteDatabase db(path_);
  db.commit_records({make_record(old_driver, 3e-5, 5), make_record(new_driver, 2e-5, 6)});
  std::vector<TuningRecord> best = db.top_k(kMatmul, "cuda -arch=sm_90", 2);
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].target, new_driver);
  EXPECT_EQ(best[1].target, old_driver);
  LogStats stats = db.stats();
  ASSERT_EQ(stats.targets.size(), 4u);
  EXPECT_EQ(stats.targets[2].target.device, old_driver.device);
  EXPECT_EQ(stats.targets[3].target.device, new_driver.device);
}

TEST(TuningRecordTuner, JsonCarriesTheTunerAndOlderExportsReadWithout) {
  TuningRecord r = make_record(kCpu, 1e-4, 1);
  r.tuner = "xgb";
  nlohmann::json json = record_to_json(r);
  EXPECT_EQ(json["tuner"], "xgb");
  EXPECT_EQ(record_from_json(json), r);
  json.erase("tuner");
  EXPECT_EQ(record_from_json(json).tuner, "");
  json["tuner"] = nlohmann::json::array();
  try {
    record_from_json(json);
    FAIL() << "a tuner that is not a string was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'tuner' must be a string"), std::string::npos) << e.what();
  }
}

TEST(TuningRecordDevice, JsonCarriesTheDeviceAndOlderExportsReadWithout) {
  TargetInfo gpu{"opencl", "Test CPU @ 1GHz", "fpu avx2", 2, "", "pthread-Test CPU | 6.0 | OpenCL 3.0 PoCL"};
  TuningRecord r = make_record(gpu, 1e-4, 1);
  nlohmann::json json = record_to_json(r);
  EXPECT_EQ(json["target"]["device"], gpu.device);
  EXPECT_EQ(record_from_json(json), r);
  json["target"].erase("device");
  EXPECT_EQ(record_from_json(json).target.device, "");
  json["target"]["device"] = 3;
  try {
    record_from_json(json);
    FAIL() << "a numeric device was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'device' must be a string"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace temper::tuning_db
