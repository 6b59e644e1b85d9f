#include "cli/tune_report.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <unistd.h>

#include "cli/probe_machine.h"
#include "compiler/ir/error.h"
#include "report/html_report.h"
#include "tuning_db/sqlite_database.h"

namespace temper::cli {
namespace {

// Drawing the page reads the whole log; a job measures for at least this long between two.
constexpr double kRefreshSeconds = 10;

}  // namespace

void check_report_path(const std::string& path) {
  std::filesystem::path folder = std::filesystem::absolute(path).parent_path();
  if (!std::filesystem::is_directory(folder) || access(folder.c_str(), W_OK | X_OK) != 0) {
    throw UserError(str("cannot write --report ", path, ": its folder ", folder.string(),
                        " does not exist or is not writable"));
  }
  report::find_chart_js();  // a missing Chart.js fails before the job, not after it
}

TuneReport::TuneReport(std::string path, std::string db_path, const Target& target)
    : path_(std::move(path)), db_path_(std::move(db_path)) {
  if (path_.empty()) return;
  check_report_path(path_);
  if (target.is_gpu()) return;
  tuning_db::SQLiteDatabase log(db_path_);
  if (!log_has_probe_of_this_machine(log, target)) {
    std::printf("probe      measuring this machine's limits for the report's roofline, once per log\n");
    std::printf("           ");
    std::fflush(stdout);
    probe_into_log(log, target, 0, std::cout);
    std::cout.flush();
  }
}

void TuneReport::write() {
  tuning_db::SQLiteDatabase log(db_path_, tuning_db::OpenMode::ReadOnly);
  report::ReportOptions options;
  options.log_path = db_path_;
  report::write_report(log, options, path_);
  last_write_ = std::chrono::steady_clock::now();
  written_ = true;
}

void TuneReport::after_batch() {
  if (path_.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_write_).count();
  if (written_ && since < kRefreshSeconds) return;
  try {
    write();
  } catch (const UserError& e) {
    // The job goes on; the page is rewritten at the next batch.
    std::fprintf(stderr, "warning: the report was not updated: %s\n", e.what());
  }
}

void TuneReport::finish() {
  if (path_.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  write();
  std::printf("report     %s\n", path_.c_str());
  std::fflush(stdout);
}

}  // namespace temper::cli
