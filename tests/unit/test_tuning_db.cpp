// The tuning log: round trips through both Database implementations, the best-record
// query, JSON lines, and several processes (or a killed one) sharing one SQLite file.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "compiler/ops/workload.h"
#include "tuning_db/json_lines.h"
#include "tuning_db/memory_database.h"
#include "tuning_db/schedule_ranking.h"
#include "tuning_db/sqlite_database.h"

namespace temper::tuning_db {
namespace {

namespace fs = std::filesystem;

// A fresh folder under /tmp, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "temper_tuning_db_XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

const WorkloadKey kMatmul{"matmul", "matmul:M=64,N=64,K=64,dtype=float32"};
const WorkloadKey kRelu{"relu", "relu:shape=64,dtype=float32"};

TuningRecord make_record(const WorkloadKey& workload, const std::string& target, double mean,
                         ErrorKind error = ErrorKind::None, int tag = 0) {
  TuningRecord r;
  r.workload = workload;
  r.target = {target, "Test CPU @ 1GHz", "fpu sse avx512f", 2, "LLVM 19.1.7", ""};
  r.trace = {{"version", 1}, {"instructions", nlohmann::json::array({{{"kind", "Split"}, {"tag", tag}}})}};
  r.config = {{"tile_i", tag}};
  if (std::isfinite(mean)) r.costs = {mean, mean * 1.01, mean * 0.99};
  r.mean = mean;
  r.error = error;
  r.error_message = error == ErrorKind::None ? "" : "it went wrong";
  r.timestamp = 1700000000 + tag;
  r.temper_version = temper_version();
  return r;
}

std::vector<double> means(const std::vector<TuningRecord>& records) {
  std::vector<double> out;
  for (const auto& r : records) out.push_back(r.mean);
  return out;
}

TEST(TuningRecord, ValidityNeedsNoErrorAndAFinitePositiveMean) {
  EXPECT_TRUE(make_record(kMatmul, "llvm", 1e-3).is_valid());
  EXPECT_FALSE(make_record(kMatmul, "llvm", 1e-3, ErrorKind::WrongResult).is_valid());
  EXPECT_FALSE(make_record(kMatmul, "llvm", 0).is_valid());
  EXPECT_FALSE(make_record(kMatmul, "llvm", -1).is_valid());
  EXPECT_FALSE(make_record(kMatmul, "llvm", INFINITY).is_valid());
  EXPECT_FALSE(make_record(kMatmul, "llvm", NAN).is_valid());
}

TEST(TuningRecord, JsonRoundTripAndErrorKindNames) {
  TuningRecord r = make_record(kMatmul, "llvm -mcpu=native", 2e-3, ErrorKind::RunTimeout, 7);
  r.config = nullptr;
  EXPECT_EQ(record_from_json(nlohmann::json::parse(record_to_json(r).dump())), r);
  for (ErrorKind kind : {ErrorKind::None, ErrorKind::CompileError, ErrorKind::CompileTimeout, ErrorKind::RuntimeError,
                         ErrorKind::RunTimeout, ErrorKind::WrongResult, ErrorKind::InstantiationError}) {
    EXPECT_EQ(parse_error_kind(error_kind_name(kind)), kind);
  }
}

TEST(TuningRecord, KeysAndHostFingerprint) {
  EXPECT_EQ(WorkloadKey::from(ops::Workload::parse("matmul:K=8,N=4,M=2")),
            WorkloadKey::from(ops::Workload::parse("matmul:M=2,N=4,K=8")));
  EXPECT_EQ(WorkloadKey::from(ops::Workload::parse("matmul:M=2,N=4,K=8")).op, "matmul");
  TargetInfo llvm = host_target_info(Target::parse("llvm -mcpu=native"));
  EXPECT_EQ(llvm.target, "llvm -mcpu=native");
  EXPECT_GE(llvm.cores, 1);
  EXPECT_EQ(llvm.compiler.rfind("LLVM 19", 0), 0u) << llvm.compiler;
  EXPECT_FALSE(llvm.cpu_model.empty());
  EXPECT_NE(host_target_info(Target::parse("c")).compiler.find_first_of("0123456789"), std::string::npos);
}

// Every Database implementation must pass the same behaviour tests.
class DatabaseTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<Database> open() {
    if (GetParam() == "memory") return std::make_unique<MemoryDatabase>();
    return std::make_unique<SQLiteDatabase>(dir_.file("log.db"));
  }
  TempDir dir_;
};

TEST_P(DatabaseTest, RecordsRoundTripInCommitOrder) {
  auto db = open();
  EXPECT_EQ(db->size(), 0);
  std::vector<TuningRecord> committed = {make_record(kMatmul, "llvm", 3e-3, ErrorKind::None, 1),
                                         make_record(kRelu, "c", NAN, ErrorKind::CompileError, 2),
                                         make_record(kMatmul, "llvm", 1e-3, ErrorKind::None, 3)};
  committed[1].config = nullptr;
  db->commit_record(committed[0]);
  db->commit_records({committed[1], committed[2]});
  EXPECT_EQ(db->size(), 3);
  std::vector<TuningRecord> read = db->all_records();
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[0], committed[0]);
  EXPECT_TRUE(std::isnan(read[1].mean));
  read[1].mean = committed[1].mean = 0;  // NaN never compares equal
  EXPECT_EQ(read[1], committed[1]);
  EXPECT_EQ(read[2], committed[2]);
  db->commit_workload({"softmax", "softmax:shape=8,axis=-1,dtype=float32"});
  db->commit_workload(kMatmul);
  std::vector<WorkloadKey> workloads = db->workloads();
  ASSERT_EQ(workloads.size(), 3u);
  EXPECT_EQ(workloads[0], kMatmul);
  EXPECT_EQ(workloads[1], kRelu);
  EXPECT_EQ(workloads[2].op, "softmax");
}

TEST_P(DatabaseTest, TopKIsFastestValidFirstForThatWorkloadAndTarget) {
  auto db = open();
  db->commit_records({
      make_record(kMatmul, "llvm", 5e-3, ErrorKind::None, 1),
      make_record(kMatmul, "llvm", 1e-4, ErrorKind::WrongResult, 2),  // fast but wrong
      make_record(kMatmul, "llvm", 2e-3, ErrorKind::None, 3),
      make_record(kMatmul, "llvm", 0, ErrorKind::None, 4),         // no time
      make_record(kMatmul, "llvm", INFINITY, ErrorKind::None, 5),  // no time
      make_record(kMatmul, "c", 1e-5, ErrorKind::None, 6),         // other target
      make_record(kRelu, "llvm", 1e-6, ErrorKind::None, 7),        // other workload
      make_record(kMatmul, "llvm", 4e-3, ErrorKind::None, 8),
      make_record(kMatmul, "llvm", 2e-3, ErrorKind::None, 9),  // ties keep commit order
  });
  std::vector<TuningRecord> top = db->top_k(kMatmul, "llvm", 3);
  EXPECT_EQ(means(top), (std::vector<double>{2e-3, 2e-3, 4e-3}));
  EXPECT_EQ(top[0].config["tile_i"], 3);
  EXPECT_EQ(top[1].config["tile_i"], 9);
  EXPECT_EQ(means(db->top_k(kMatmul, "llvm", 10)), (std::vector<double>{2e-3, 2e-3, 4e-3, 5e-3}));
  EXPECT_TRUE(db->top_k(kMatmul, "llvm", 0).empty());
  EXPECT_TRUE(db->top_k(kMatmul, "llvm -mcpu=native", 5).empty());
  EXPECT_EQ(db->records_for(kMatmul, "llvm").size(), 7u);
  EXPECT_EQ(db->records_for(kMatmul, "c").size(), 1u);
}

TEST_P(DatabaseTest, TopKRanksASchedulesRecordsByTheirMedianAndDropsOneThatWasEverWrong) {
  auto db = open();
  // Schedule 1: one lucky 1 ms, then 3 and 4 ms when measured again; its median is 3 ms.
  // Schedule 2: 2 ms once. Schedule 3: 2.5 ms and 2.6 ms; of an even count the slower
  // middle. Schedule 4: fast, but wrong once. Schedule 5: one valid, one failed run.
  TuningRecord one = make_record(kMatmul, "llvm", 1e-3, ErrorKind::None, 1);
  TuningRecord one_again = one, one_third = one;
  one_again.mean = 3e-3;
  one_third.mean = 4e-3;
  one_third.timestamp = one_again.timestamp = one.timestamp + 100;
  TuningRecord three = make_record(kMatmul, "llvm", 2.5e-3, ErrorKind::None, 3), three_again = three;
  three_again.mean = 2.6e-3;
  TuningRecord four = make_record(kMatmul, "llvm", 0.5e-3, ErrorKind::None, 4);
  TuningRecord four_wrong = make_record(kMatmul, "llvm", NAN, ErrorKind::WrongResult, 4);
  TuningRecord five = make_record(kMatmul, "llvm", 5e-3, ErrorKind::None, 5);
  TuningRecord five_failed = make_record(kMatmul, "llvm", NAN, ErrorKind::RunTimeout, 5);
  db->commit_records({one, make_record(kMatmul, "llvm", 2e-3, ErrorKind::None, 2), three, four, five, one_again,
                      three_again, four_wrong, one_third, five_failed});
  std::vector<TuningRecord> top = db->top_k(kMatmul, "llvm", 10);
  EXPECT_EQ(means(top), (std::vector<double>{2e-3, 2.6e-3, 3e-3, 5e-3}));
  EXPECT_EQ(top[2], one_again) << "a schedule is represented by its median record";

  std::vector<RankedSchedule> ranked = rank_schedules(db->records_for(kMatmul, "llvm"), 2);
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(ranked[0].measurements, 1);
  EXPECT_EQ(ranked[1].measurements, 2);
  EXPECT_EQ(schedule_identity(ranked[1].record), schedule_identity(three));
  EXPECT_NE(schedule_identity(one), schedule_identity(three));
  EXPECT_THROW(rank_schedules({}, -1), UserError);
}

INSTANTIATE_TEST_SUITE_P(Implementations, DatabaseTest, ::testing::Values("memory", "sqlite"));

TEST(SQLiteDatabase, RecordsPersistAcrossReopeningAndAnEmptyFileBecomesALog) {
  TempDir dir;
  std::string path = dir.file("log.db");
  { std::ofstream(path).flush(); }  // an existing empty file: schema 0, migrated on open
  {
    SQLiteDatabase db(path);
    db.commit_record(make_record(kMatmul, "llvm", 1e-3, ErrorKind::None, 1));
  }
  SQLiteDatabase db(path);
  EXPECT_EQ(db.size(), 1);
  EXPECT_EQ(db.top_k(kMatmul, "llvm", 1).at(0).config["tile_i"], 1);
  EXPECT_EQ(sqlite_schema_version(), 6);
}

TEST(JsonLines, ExportImportRoundTripAndImportAdds) {
  TempDir dir;
  SQLiteDatabase source(dir.file("a.db"));
  source.commit_records({make_record(kMatmul, "llvm", 1e-3, ErrorKind::None, 1),
                         make_record(kRelu, "c", NAN, ErrorKind::RuntimeError, 2)});
  EXPECT_EQ(export_json_lines(source, dir.file("a.jsonl")).records, 2);

  SQLiteDatabase target(dir.file("b.db"));
  target.commit_record(make_record(kMatmul, "llvm", 5e-4, ErrorKind::None, 3));
  EXPECT_EQ(import_json_lines(target, dir.file("a.jsonl")).records, 2);
  EXPECT_EQ(target.size(), 3);
  EXPECT_EQ(means(target.top_k(kMatmul, "llvm", 5)), (std::vector<double>{5e-4, 1e-3}));
  std::vector<TuningRecord> all = target.all_records();
  EXPECT_EQ(all[1], source.all_records()[0]);
  EXPECT_EQ(all[2].error, ErrorKind::RuntimeError);
  EXPECT_EQ(all[2].error_message, "it went wrong");

  std::stringstream text;
  export_json_lines(target, text);
  MemoryDatabase memory;
  std::stringstream with_blank_line("\n" + text.str() + "\n");
  EXPECT_EQ(import_json_lines(memory, with_blank_line, "memory").records, 3);
  std::stringstream again;
  export_json_lines(memory, again);
  EXPECT_EQ(again.str(), text.str());
}

// Runs body in a child process; the child's exit status is 0 when body returned.
pid_t spawn(const std::function<void()>& body) {
  pid_t pid = fork();
  if (pid == 0) {
    try {
      body();
    } catch (...) {
      _exit(1);
    }
    _exit(0);
  }
  return pid;
}

int exit_status(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(SQLiteDatabase, TwoProcessesCommitIntoOneFileWithoutLossOrDuplicates) {
  TempDir dir;
  std::string path = dir.file("shared.db");
  constexpr int kPerProcess = 200;
  // No connection may cross fork(): each process opens its own, here on a new file.
  std::vector<pid_t> children;
  for (int process = 0; process < 2; ++process) {
    children.push_back(spawn([&, process] {
      SQLiteDatabase db(path);
      for (int i = 0; i < kPerProcess; ++i) {
        db.commit_record(make_record(kMatmul, "llvm", 1e-3 + i * 1e-6, ErrorKind::None, process * 1000 + i));
      }
    }));
  }
  for (pid_t child : children) EXPECT_EQ(exit_status(child), 0);

  SQLiteDatabase db(path);
  EXPECT_EQ(db.size(), 2 * kPerProcess);
  std::set<int> tags;
  for (const TuningRecord& r : db.all_records()) tags.insert(r.config["tile_i"].get<int>());
  EXPECT_EQ(tags.size(), 2u * kPerProcess);
  EXPECT_EQ(*tags.begin(), 0);
  EXPECT_EQ(*tags.rbegin(), 1000 + kPerProcess - 1);
  EXPECT_EQ(db.workloads().size(), 1u);
}

TEST(SQLiteDatabase, AProcessKilledMidCommitLeavesAReadableLog) {
  TempDir dir;
  std::string path = dir.file("killed.db");
  constexpr int kBatch = 10;
  pid_t child = spawn([&] {
    SQLiteDatabase db(path);
    std::vector<TuningRecord> batch;
    for (int i = 0; i < kBatch; ++i) batch.push_back(make_record(kMatmul, "llvm", 1e-3, ErrorKind::None, i));
    // A tuning job commits a batch after measuring it; a writer that never pauses could
    // hold the watcher's open (which takes the write lock to check the schema) past its busy
    // timeout, since SQLite queues no waiters: it did under ASan on a loaded machine.
    while (true) {
      db.commit_records(batch);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  // However this test ends, the child does not outlive it.
  std::unique_ptr<pid_t, void (*)(pid_t*)> reaper(&child, [](pid_t* pid) { kill(*pid, SIGKILL); });
  {
    // Wait until the child is committing steadily, then kill it without warning.
    SQLiteDatabase watcher(path);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (watcher.size() < 20 * kBatch && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  kill(child, SIGKILL);
  EXPECT_EQ(exit_status(child), 128 + SIGKILL);

  SQLiteDatabase db(path);
  int64_t size = db.size();
  EXPECT_GE(size, 20 * kBatch);
  EXPECT_EQ(size % kBatch, 0) << "a batch was committed in part";
  EXPECT_EQ(static_cast<int64_t>(db.all_records().size()), size);
  db.commit_record(make_record(kMatmul, "llvm", 5e-4, ErrorKind::None, 99));
  EXPECT_EQ(db.top_k(kMatmul, "llvm", 1).at(0).config["tile_i"], 99);
}

}  // namespace
}  // namespace temper::tuning_db
