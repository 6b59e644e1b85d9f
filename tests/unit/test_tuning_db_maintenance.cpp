// What `temper db` asks of the tuning log beyond the Database interface: opening a log
// read-only or only if it exists, its statistics, pruning it, and adding records without
// repeating a measurement.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "tuning_db/memory_database.h"
#include "tuning_db/merge.h"
#include "tuning_db/record_check.h"
#include "tuning_db/sqlite_database.h"
#include "tuning_db_test_util.h"

namespace temper::tuning_db {
namespace {

namespace fs = std::filesystem;
using log_testing::read_bytes;
using log_testing::user_error;
using log_testing::write_bytes;

class TuningDbMaintenance : public log_testing::TempDirTest {
 protected:
  TuningDbMaintenance() : TempDirTest("temper_tuning_db_maintenance") {}
};

const WorkloadKey kMatmul{"matmul", "matmul:M=64,N=64,K=64,dtype=float32"};
const WorkloadKey kRelu{"relu", "relu:shape=64,dtype=float32"};
const TargetInfo kLlvm{"llvm -mcpu=native", "Test CPU @ 1GHz", "fpu avx2 fma", 2, "LLVM 19.1.7", ""};
const TargetInfo kC{"c", "Test CPU @ 1GHz", "fpu avx2 fma", 2, "cc 12.2", ""};

// A record whose trace carries `tag` (and `padding` bytes, to make records take room).
TuningRecord make_record(const WorkloadKey& workload, const TargetInfo& target, double mean, int tag,
                         ErrorKind error = ErrorKind::None, size_t padding = 0) {
  TuningRecord r;
  r.workload = workload;
  r.target = target;
  r.trace = {{"version", 1}, {"instructions", nlohmann::json::array()}, {"tag", tag}, {"padding", std::string(padding, 'x')}};
  r.config = {{"tile", tag}};
  if (std::isfinite(mean)) r.costs = {mean, mean};
  r.mean = mean;
  r.error = error;
  r.error_message = error == ErrorKind::None ? "" : "failed";
  r.timestamp = 1700000000 + tag;
  r.temper_version = temper_version();
  return r;
}

std::vector<int> tags(const std::vector<TuningRecord>& records) {
  std::vector<int> out;
  for (const TuningRecord& r : records) out.push_back(r.trace["tag"].get<int>());
  return out;
}

TEST_F(TuningDbMaintenance, ReadOnlyAndExistingModesNeverCreateALog) {
  std::string missing = file("missing.db");
  EXPECT_NE(user_error([&] { SQLiteDatabase db(missing, OpenMode::ReadOnly); }).find("no tuning log at " + missing),
            std::string::npos);
  EXPECT_NE(user_error([&] { SQLiteDatabase db(missing, OpenMode::Existing); }).find("no tuning log at " + missing),
            std::string::npos);
  EXPECT_FALSE(fs::exists(missing));

  std::string empty = file("empty.db");
  std::ofstream{empty};
  EXPECT_NE(user_error([&] { SQLiteDatabase db(empty, OpenMode::ReadOnly); }).find("is empty, not a Temper tuning log"),
            std::string::npos);
  EXPECT_EQ(fs::file_size(empty), 0u);

  std::string text = file("notes.txt");
  std::ofstream(text) << std::string(300, 'x');
  EXPECT_NE(user_error([&] { SQLiteDatabase db(text, OpenMode::ReadOnly); }).find("not a Temper tuning log"),
            std::string::npos);
  EXPECT_EQ(read_bytes(text), std::string(300, 'x'));
}

TEST_F(TuningDbMaintenance, ReadOnlyLogIsReadButNeverWritten) {
  std::string path = file("log.db");
  { SQLiteDatabase(path).commit_record(make_record(kMatmul, kLlvm, 1e-3, 1)); }
  std::string before = read_bytes(path);
  SQLiteDatabase db(path, OpenMode::ReadOnly);
  EXPECT_EQ(tags(db.all_records()), std::vector<int>{1});
  std::string message = user_error([&] { db.commit_record(make_record(kMatmul, kLlvm, 1e-3, 2)); });
  EXPECT_NE(message.find("readonly"), std::string::npos) << message;
  EXPECT_EQ(db.size(), 1);
  EXPECT_EQ(read_bytes(path), before);
}

TEST_F(TuningDbMaintenance, StatsCountRecordsByErrorTargetAndWorkload) {
  SQLiteDatabase db(file("log.db"));
  LogStats empty = db.stats();
  EXPECT_EQ(empty.schema_version, sqlite_schema_version());
  EXPECT_EQ(empty.records, 0);
  EXPECT_FALSE(empty.first_timestamp.has_value());
  EXPECT_TRUE(empty.groups.empty());

  db.commit_records({
      make_record(kMatmul, kLlvm, 3e-3, 5),                          // valid
      make_record(kMatmul, kLlvm, 1e-3, 2),                          // valid, the best of matmul on llvm
      make_record(kMatmul, kLlvm, NAN, 9, ErrorKind::CompileError),  // the last time stamp
      make_record(kMatmul, kC, 4e-3, 3),                             // valid, on another target
      make_record(kRelu, kLlvm, NAN, 1, ErrorKind::RunTimeout),      // the first time stamp
      make_record(kRelu, kLlvm, NAN, 4, ErrorKind::CompileError),    // relu has no valid record
      make_record(kMatmul, kLlvm, 0, 7),                             // no time: not valid
  });
  db.commit_workload({"softmax", "softmax:shape=8,axis=-1,dtype=float32"});
  LogStats stats = db.stats();
  EXPECT_EQ(stats.records, 7);
  EXPECT_EQ(stats.valid_records, 3);
  using Count = std::pair<std::string, int64_t>;
  EXPECT_EQ(stats.records_by_error, (std::vector<Count>{{"None", 4}, {"CompileError", 2}, {"RunTimeout", 1}}));
  EXPECT_EQ(stats.workloads, 3);
  ASSERT_EQ(stats.targets.size(), 2u);
  EXPECT_EQ(stats.targets[0].target, kLlvm);
  EXPECT_EQ(stats.targets[0].records, 6);
  EXPECT_EQ(stats.targets[1].target, kC);
  EXPECT_EQ(stats.targets[1].records, 1);
  EXPECT_EQ(stats.first_timestamp, 1700000001);
  EXPECT_EQ(stats.last_timestamp, 1700000009);

  ASSERT_EQ(stats.groups.size(), 4u);
  EXPECT_EQ(stats.groups[0].workload, kMatmul);
  EXPECT_EQ(stats.groups[0].target, kLlvm.target);
  EXPECT_EQ(stats.groups[0].records, 4);
  EXPECT_EQ(stats.groups[0].valid_records, 2);
  EXPECT_EQ(stats.groups[0].best_mean, 1e-3);
  EXPECT_EQ(stats.groups[1].target, "c");
  EXPECT_EQ(stats.groups[1].best_mean, 4e-3);
  EXPECT_EQ(stats.groups[2].workload, kRelu);
  EXPECT_EQ(stats.groups[2].records, 2);
  EXPECT_EQ(stats.groups[2].valid_records, 0);
  EXPECT_FALSE(stats.groups[2].best_mean.has_value());
  EXPECT_EQ(stats.groups[3].workload.op, "softmax");  // known, never measured
  EXPECT_EQ(stats.groups[3].target, "");
  EXPECT_EQ(stats.groups[3].records, 0);
}

TEST_F(TuningDbMaintenance, PruneKeepsTheFastestValidPerWorkloadAndTarget) {
  std::string path = file("log.db");
  SQLiteDatabase db(path);
  db.commit_records({
      make_record(kMatmul, kLlvm, 5e-3, 1),
      make_record(kMatmul, kLlvm, 2e-3, 2),
      make_record(kMatmul, kLlvm, NAN, 3, ErrorKind::WrongResult),
      make_record(kMatmul, kLlvm, 1e-3, 4),
      make_record(kMatmul, kLlvm, 2e-3, 5),  // ties with 2: the earlier stays
      make_record(kMatmul, kC, 9e-3, 6),
      make_record(kRelu, kLlvm, 1e-5, 7),
  });
  // A fingerprint of another machine with the same target string is the same group.
  TargetInfo other_machine = kLlvm;
  other_machine.cpu_model = "Other CPU";
  db.commit_record(make_record(kMatmul, other_machine, 3e-3, 8));

  PruneResult result = db.prune(2, false);
  EXPECT_EQ(result.removed, 3);
  EXPECT_EQ(result.kept, 5);
  ASSERT_EQ(result.groups.size(), 1u);
  EXPECT_EQ(result.groups[0].workload, kMatmul);
  EXPECT_EQ(result.groups[0].target, kLlvm.target);
  EXPECT_EQ(result.groups[0].kept, 3);
  EXPECT_EQ(result.groups[0].removed_valid, 3);
  EXPECT_EQ(result.groups[0].removed_failed, 0);
  EXPECT_EQ(tags(db.records_for(kMatmul, kLlvm.target)), (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(tags(db.records_for(kMatmul, "c")), std::vector<int>{6});
  EXPECT_EQ(tags(db.records_for(kRelu, kLlvm.target)), std::vector<int>{7});

  result = db.prune(1, true);
  EXPECT_EQ(result.removed, 2);
  EXPECT_EQ(result.groups[0].removed_valid, 1);
  EXPECT_EQ(result.groups[0].removed_failed, 1);
  EXPECT_EQ(tags(db.records_for(kMatmul, kLlvm.target)), std::vector<int>{4});

  result = db.prune(1, true);
  EXPECT_EQ(result.removed, 0);
  EXPECT_TRUE(result.groups.empty());
  EXPECT_EQ(db.size(), 3);
  EXPECT_NE(user_error([&] { db.prune(-1, false); }).find("at least 0"), std::string::npos);
}

TEST_F(TuningDbMaintenance, PruneCompactsTheFile) {
  std::string path = file("log.db");
  SQLiteDatabase db(path);
  std::vector<TuningRecord> records;
  for (int i = 0; i < 200; ++i)
    records.push_back(make_record(kMatmul, kLlvm, 1e-3 * (i + 1), i, ErrorKind::None, 4000));
  db.commit_records(records);
  db.prune(0, false);  // flushes the write-ahead log too
  uintmax_t empty_size = fs::file_size(path);
  db.commit_records(records);
  db.prune(150, false);
  EXPECT_LT(fs::file_size(path), empty_size + 200 * 4000);
  EXPECT_GT(fs::file_size(path), empty_size + 150 * 4000);
  EXPECT_EQ(db.size(), 150);
  EXPECT_EQ(db.top_k(kMatmul, kLlvm.target, 1)[0].trace["tag"], 0);
}

TEST_F(TuningDbMaintenance, PruneLeavesADamagedLogAsItWas) {
  std::string path = file("log.db");
  {
    SQLiteDatabase db(path);
    std::vector<TuningRecord> records;
    for (int i = 0; i < 40; ++i)
      records.push_back(make_record(kMatmul, kLlvm, 1e-3 * (i + 1), i, ErrorKind::None, 3000));
    db.commit_records(records);
  }
  // Damage pages in the middle of the records table; the header and schema stay readable.
  std::string bytes = read_bytes(path);
  ASSERT_GT(bytes.size(), 100000u);
  for (size_t i = 60000; i < 70000; ++i) bytes[i] = static_cast<char>(i * 7);
  write_bytes(path, bytes);

  SQLiteDatabase db(path);
  std::string message = user_error([&] { db.prune(1, true); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("damaged"), std::string::npos) << message;
  EXPECT_EQ(read_bytes(path), bytes);
}

TEST(AddNewRecords, SkipsMeasurementsAlreadyPresent) {
  MemoryDatabase db;
  TuningRecord a = make_record(kMatmul, kLlvm, 1e-3, 1);
  TuningRecord b = make_record(kMatmul, kLlvm, 2e-3, 2);
  db.commit_record(a);

  TuningRecord later = a;  // the schedule measured again: a new record
  later.timestamp += 60;
  TuningRecord other_costs = a;
  other_costs.costs = {1e-3, 1.0000001e-3};
  TuningRecord other_machine = a;
  other_machine.target.cores = 4;
  TuningRecord other_config = a;  // the same measurement, whatever the config says
  other_config.config = nullptr;
  EXPECT_TRUE(same_measurement(a, other_config));
  EXPECT_FALSE(same_measurement(a, later));

  MergeResult result = add_new_records(db, {a, b, later, b, other_costs, other_machine, other_config});
  EXPECT_EQ(result.added, 4);
  EXPECT_EQ(result.skipped, 3);
  std::vector<TuningRecord> all = db.all_records();
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[1], b);
  EXPECT_EQ(all[2], later);
  EXPECT_EQ(all[3], other_costs);
  EXPECT_EQ(all[4], other_machine);

  result = add_new_records(db, all);
  EXPECT_EQ(result.added, 0);
  EXPECT_EQ(result.skipped, 5);
  EXPECT_EQ(db.size(), 5);
}

// What import and merge refuse to add: records that cannot be real measurements, one of
// which, made up fast, a build would otherwise apply.
TEST(AddNewRecords, RefusesImplausibleRecords) {
  TuningRecord good = make_record(kMatmul, kLlvm, 1e-3, 1);
  EXPECT_EQ(implausible_record(good), "");
  TuningRecord too_fast = make_record(kMatmul, kLlvm, 1e-9, 2);  // 2 * 64^3 FLOPs in 1 ns: 524 TFLOP/s on 2 cores
  TuningRecord mean_not_a_cost = make_record(kMatmul, kLlvm, 1e-3, 3);
  mean_not_a_cost.costs = {2e-3, 3e-3};
  TuningRecord negative_cost = make_record(kMatmul, kLlvm, 1e-3, 4);
  negative_cost.costs = {-1e-3, 1e-3};
  TuningRecord failed_with_time = make_record(kMatmul, kLlvm, 1e-3, 5, ErrorKind::RunTimeout);
  TuningRecord wrong_op = make_record({"relu", kMatmul.workload}, kLlvm, 1e-3, 6);
  TuningRecord bad_trace = make_record(kMatmul, kLlvm, 1e-3, 7);
  bad_trace.trace = {{"version", 1}};
  TuningRecord unknown_op = make_record({"oldop", "oldop:x=1"}, kLlvm, 1e-12, 8);  // nothing to check it against
  TuningRecord gpu = make_record(kMatmul, kLlvm, 1e-9, 9);  // 524 TFLOP/s: within a GPU's bound
  gpu.target.device = "NVIDIA H200 | 13.0 | sm_90";
  EXPECT_NE(implausible_record(too_fast).find("is 524288 GFLOP/s, more than any CPU of 2 cores can do (3072 GFLOP/s)"),
            std::string::npos)
      << implausible_record(too_fast);
  EXPECT_NE(implausible_record(mean_not_a_cost).find("is not among its costs"), std::string::npos);
  EXPECT_NE(implausible_record(negative_cost).find("is not a time"), std::string::npos);
  EXPECT_NE(implausible_record(failed_with_time).find("it failed (RunTimeout) but has a mean time"), std::string::npos);
  EXPECT_NE(implausible_record(wrong_op).find("is of op matmul, not relu"), std::string::npos);
  EXPECT_NE(implausible_record(bad_trace).find("its trace is not a schedule trace"), std::string::npos);
  EXPECT_EQ(implausible_record(unknown_op), "");
  EXPECT_EQ(implausible_record(gpu), "");

  MemoryDatabase db;
  MergeResult result =
      add_new_records(db, {good, too_fast, mean_not_a_cost, negative_cost, failed_with_time, wrong_op, bad_trace});
  EXPECT_EQ(result.added, 1);
  ASSERT_EQ(result.refused.size(), 6u);
  EXPECT_EQ(result.refused[0].rfind("record 2: its time, ", 0), 0u) << result.refused[0];
  EXPECT_EQ(db.size(), 1);
}

}  // namespace
}  // namespace temper::tuning_db
