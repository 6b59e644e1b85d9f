// Tuning logs that cannot be used: each is refused with a message naming the file and
// what to do, and the file is left exactly as it was.
#include <gtest/gtest.h>

#include <sstream>

#include "tuning_db/json_lines.h"
#include "tuning_db/memory_database.h"
#include "tuning_db/sqlite_database.h"
#include "tuning_db_test_util.h"

namespace temper::tuning_db {
namespace {

using log_testing::read_bytes;
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
  write_log_with_schema(path, 7);
  std::string before = read_bytes(path);
  std::string message = user_error([&] { SQLiteDatabase db(path); });
  EXPECT_NE(message.find("tuning log " + path + " was written by a newer Temper (schema 7); this one reads up to " +
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

TEST_F(TuningDbErrors, UnwritablePathNamesTheFile) {
  std::string path = file("no/such/folder/log.db");
  std::string message = user_error([&] { SQLiteDatabase db(path); });
  EXPECT_NE(message.find("cannot open tuning log " + path), std::string::npos) << message;
  EXPECT_NE(message.find("writable"), std::string::npos) << message;
  EXPECT_NE(user_error([&] { SQLiteDatabase db(dir_); }).find(dir_), std::string::npos);
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
  EXPECT_NE(user_error([&] { import_json_lines(db, file("absent.jsonl")); }).find("absent.jsonl"), std::string::npos);
  EXPECT_NE(user_error([&] { db.top_k(some_record().workload, "llvm", -1); }).find("k must be at least 0"),
            std::string::npos);
}

}  // namespace
}  // namespace temper::tuning_db
