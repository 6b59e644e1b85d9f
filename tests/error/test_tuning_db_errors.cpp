// Tuning logs that cannot be used: each is refused with a message naming the file and
// what to do, and the file is left exactly as it was.
#include <gtest/gtest.h>

#include <sstream>

#include "tuning_db/json_lines.h"
#include "tuning_db/memory_database.h"
#include "tuning_db/sqlite_database.h"
#include "sqlite_test_util.h"
#include "tuning_db_test_util.h"

namespace temper::tuning_db {
namespace {

using log_testing::read_bytes;
using log_testing::sqlite_exec;
using log_testing::user_error;
using log_testing::write_bytes;

class TuningDbErrors : public log_testing::TempDirTest {
 protected:
  TuningDbErrors() : TempDirTest("temper_tuning_db_errors") {}
};

TuningRecord some_record() {
  TuningRecord r;
  r.workload = {"matmul", "matmul:M=8,N=8,K=8,dtype=float32"};
  r.target = {"llvm", "cpu", "avx2", 2, "LLVM 19", ""};
  r.trace = {{"version", 1}, {"instructions", nlohmann::json::array()}};
  r.costs = {1e-3};
  r.mean = 1e-3;
  r.temper_version = temper_version();
  return r;
}

// Writes a log with one record and sets its schema version (the big-endian int at byte
// 60 of an SQLite file, PRAGMA user_version) to `version`.
void write_log_with_schema(const std::string& path, uint32_t version) {
  { SQLiteDatabase(path).commit_record(some_record()); }
  std::string bytes = read_bytes(path);
  ASSERT_GT(bytes.size(), 64u);
  for (int i = 0; i < 4; ++i) bytes[60 + i] = static_cast<char>(version >> (24 - 8 * i));
  write_bytes(path, bytes);
}

TEST_F(TuningDbErrors, GarbageFileIsRefusedAndKept) {
  std::string path = file("garbage.db");
  std::string garbage;
  for (int i = 0; i < 8192; ++i) garbage += static_cast<char>((i * 131 + 7) % 251);
  write_bytes(path, garbage);
  std::string message = user_error([&] { SQLiteDatabase db(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("not a Temper tuning log or is damaged"), std::string::npos) << message;
  EXPECT_NE(message.find("pass another --db path"), std::string::npos) << message;
  EXPECT_EQ(read_bytes(path), garbage);
}

TEST_F(TuningDbErrors, TextFileIsRefusedAndKept) {
  std::string path = file("notes.txt");
  std::string text(200, 'x');
  write_bytes(path, text);
  EXPECT_NE(user_error([&] { SQLiteDatabase db(path); }).find("not a Temper tuning log"), std::string::npos);
  EXPECT_EQ(read_bytes(path), text);
}

TEST_F(TuningDbErrors, NewerSchemaIsRefusedAndKept) {
  std::string path = file("future.db");
  write_log_with_schema(path, 99);
  std::string before = read_bytes(path);
  std::string message = user_error([&] { SQLiteDatabase db(path); });
  EXPECT_NE(message.find("tuning log " + path + " was written by a newer Temper (schema 99); this one reads up to " +
                         std::to_string(sqlite_schema_version())),
            std::string::npos)
      << message;
  EXPECT_EQ(read_bytes(path), before);
}

TEST_F(TuningDbErrors, ForeignSQLiteDatabaseIsRefusedAndKept) {
  std::string path = file("other_app.db");
  write_log_with_schema(path, 0);  // tables, but no Temper schema version
  std::string before = read_bytes(path);
  std::string message = user_error([&] { SQLiteDatabase db(path); });
  EXPECT_NE(message.find("is an SQLite database but not a Temper tuning log"), std::string::npos) << message;
  EXPECT_EQ(read_bytes(path), before);
}

TEST_F(TuningDbErrors, NegativeSchemaIsRefusedAndKept) {
  std::string path = file("negative.db");
  write_log_with_schema(path, static_cast<uint32_t>(-1));
  std::string before = read_bytes(path);
  for (OpenMode mode : {OpenMode::Create, OpenMode::Existing, OpenMode::ReadOnly}) {
    std::string message = user_error([&] { SQLiteDatabase db(path, mode); });
    EXPECT_NE(message.find("tuning log " + path + " is an SQLite database but not a Temper tuning log (its schema "
                           "version is -1, which no Temper writes)"),
              std::string::npos)
        << message;
  }
  EXPECT_EQ(read_bytes(path), before);
}

// Another program's database whose user_version happens to be one of Temper's: refused
// by its tables, before the WAL switch (which would rewrite the file's header).
TEST_F(TuningDbErrors, ForeignDatabaseWithTemperSchemaVersionIsRefusedAndKept) {
  for (int version : {1, 2}) {
    std::string path = file(str("other_app_v", version, ".db"));
    sqlite_exec(path, str("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES "
                          "('keep me'); PRAGMA user_version = ",
                          version));
    std::string before = read_bytes(path);
    for (OpenMode mode : {OpenMode::Create, OpenMode::ReadOnly}) {
      std::string message = user_error([&] { SQLiteDatabase db(path, mode); });
      EXPECT_NE(message.find(str("is an SQLite database but not a Temper tuning log (schema version ", version,
                                 " but no table 'workloads')")),
                std::string::npos)
          << message;
    }
    EXPECT_EQ(read_bytes(path), before);
  }
  // Temper's tables, one column short.
  std::string path = file("renamed_column.db");
  { SQLiteDatabase(path).commit_record(some_record()); }
  sqlite_exec(path, "PRAGMA journal_mode = DELETE; ALTER TABLE records RENAME COLUMN trace TO schedule");
  std::string before = read_bytes(path);
  EXPECT_NE(user_error([&] { SQLiteDatabase db(path); }).find("table 'records' has no column 'trace'"),
            std::string::npos);
  EXPECT_EQ(read_bytes(path), before);
}

// A row another program damaged does not stop reading the others: queries skip it and
// name it, prune keeps it, and the rest of the log stays usable.
TEST_F(TuningDbErrors, UnreadableRecordsAreSkippedNamedAndKept) {
  std::string path = file("one_bad_row.db");
  {
    SQLiteDatabase db(path);
    for (double mean : {3e-3, 1e-3, 2e-3, 4e-3}) {
      TuningRecord r = some_record();
      r.mean = mean;
      r.costs = {mean};
      r.config = {{"tile", mean * 1e3}};
      db.commit_record(r);
    }
  }
  sqlite_exec(path, "UPDATE records SET trace = '{\"version\": ' WHERE id = 2; "
                    "UPDATE records SET costs = '[\"fast\"]' WHERE id = 3");
  SQLiteDatabase db(path);
  std::vector<TuningRecord> all = db.all_records();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_DOUBLE_EQ(all[0].mean, 3e-3);
  EXPECT_DOUBLE_EQ(all[1].mean, 4e-3);
  std::vector<TuningRecord> best = db.top_k(some_record().workload, "llvm", 1);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_DOUBLE_EQ(best[0].mean, 3e-3);  // the fastest readable one
  std::map<int64_t, std::string> unreadable = db.unreadable_records();
  ASSERT_EQ(unreadable.size(), 2u);
  EXPECT_NE(unreadable[2].find("malformed trace JSON"), std::string::npos) << unreadable[2];
  EXPECT_EQ(unreadable[3], "costs JSON is not a list of numbers");
  std::string warning = unreadable_records_warning(db);
  EXPECT_NE(warning.find("warning: tuning log " + path + ": 2 records cannot be read and were skipped (record 2: "
                         "malformed trace JSON"),
            std::string::npos)
      << warning;
  EXPECT_NE(warning.find("record 3: costs JSON is not a list of numbers"), std::string::npos) << warning;

  PruneResult pruned = db.prune(1, true);
  EXPECT_EQ(pruned.removed, 1);  // the 4 ms record; the 3 ms one is kept, and both unreadable ones
  EXPECT_EQ(pruned.unreadable_kept, 2);
  EXPECT_EQ(pruned.kept, 3);
  EXPECT_EQ(db.size(), 3);
}

TEST_F(TuningDbErrors, UnwritablePathNamesTheFile) {
  std::string path = file("no/such/folder/log.db");
  std::string message = user_error([&] { SQLiteDatabase db(path); });
  EXPECT_NE(message.find("cannot open tuning log " + path), std::string::npos) << message;
  EXPECT_NE(message.find("writable"), std::string::npos) << message;
  std::string folder_message = user_error([&] { SQLiteDatabase db(dir_); });
  EXPECT_NE(folder_message.find("--db " + dir_ + " is a folder, not a tuning log file"), std::string::npos)
      << folder_message;
}

TEST_F(TuningDbErrors, MalformedJsonLineNamesTheLineAndImportsNothing) {
  MemoryDatabase db;
  db.commit_record(some_record());
  std::string good = record_to_json(some_record()).dump();
  std::stringstream broken(good + "\n" + good + "\n{\"workload\": \n");
  std::string message = user_error([&] { import_json_lines(db, broken, "records.jsonl"); });
  EXPECT_NE(message.find("records.jsonl:3: not valid JSON"), std::string::npos) << message;
  EXPECT_EQ(db.size(), 1);

  nlohmann::json wrong = record_to_json(some_record());
  wrong["error"] = "Exploded";
  std::stringstream bad_kind(good + "\n" + wrong.dump() + "\n");
  message = user_error([&] { import_json_lines(db, bad_kind, "records.jsonl"); });
  EXPECT_NE(message.find("records.jsonl:2: unknown measurement error kind 'Exploded'"), std::string::npos) << message;
  wrong = record_to_json(some_record());
  wrong.erase("costs");
  std::stringstream missing(wrong.dump());
  EXPECT_NE(user_error([&] {
              import_json_lines(db, missing, "r.jsonl");
            }).find("r.jsonl:1: tuning record has no field 'costs'"),
            std::string::npos);
  EXPECT_EQ(db.size(), 1);
  // A model choice missing a field: named, with its line; nothing of the file is added.
  std::stringstream bad_choice(good + "\n" + R"({"model_choice": {"model": "m.onnx"}})" + "\n");
  message = user_error([&] { import_json_lines(db, bad_choice, "log.jsonl"); });
  EXPECT_NE(message.find("log.jsonl:2: model choice has no field 'workload'"), std::string::npos) << message;
  EXPECT_EQ(db.size(), 1);
  EXPECT_TRUE(db.model_choices().empty());
  EXPECT_NE(user_error([&] { import_json_lines(db, file("absent.jsonl")); }).find("absent.jsonl"), std::string::npos);
  EXPECT_NE(user_error([&] { db.top_k(some_record().workload, "llvm", -1); }).find("k must be at least 0"),
            std::string::npos);
}

}  // namespace
}  // namespace temper::tuning_db
