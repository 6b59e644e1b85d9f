// Helpers the tuning-log tests share (unit/test_tuning_db_maintenance,
// error/test_tuning_db_errors): a fixture giving each test a fresh temporary directory,
// a file's raw bytes read and written, and the message of an expected UserError.
// Header-only: each test file is an executable of its own.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "compiler/ir/error.h"

namespace temper::tuning_db::log_testing {

// A fixture whose tests write their logs into a temporary directory of their own
// (prefix_XXXXXX under the system's temporary directory), removed after the test.
class TempDirTest : public ::testing::Test {
 protected:
  explicit TempDirTest(const std::string& prefix) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    dir_ = mkdtemp(pattern.data());
  }
  ~TempDirTest() override { std::filesystem::remove_all(dir_); }
  std::string file(const std::string& name) const { return (std::filesystem::path(dir_) / name).string(); }

  std::string dir_;
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The message of the UserError that f throws (a failed expectation if it throws none).
template <typename F>
std::string user_error(F f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UserError";
  return "";
}

}  // namespace temper::tuning_db::log_testing
