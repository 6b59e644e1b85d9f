// For the tuning-log tests that write a file as another program would (an older schema, a
// foreign database, a damaged row): SQL run on a plain SQLite connection, not a Temper log.
// Header-only; the tests that include it link SQLite (tests/CMakeLists.txt).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

namespace temper::tuning_db::log_testing {

inline void sqlite_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

}  // namespace temper::tuning_db::log_testing
