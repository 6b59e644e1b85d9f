// `temper tune --report PAGE.html`: the job's report page (report/html_report.h), written
// after each batch -- at most every few seconds, so that a long job spends its time
// measuring -- and at the end, so that an overnight job can be watched in a browser.
// The page is drawn from the whole log, earlier jobs included.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "compiler/target/target.h"

namespace temper::cli {

// UserError unless path's folder exists and can be written, and Chart.js is installed:
// what a command checks before its work when it will write a page at the end.
void check_report_path(const std::string& path);

class TuneReport {
 public:
  // An empty path makes a report that does nothing. Checks that the page's folder can be
  // written (UserError before any tuning) and, for a CPU target, measures this machine's
  // limits into the log (cli/probe_machine.h) when the log has none of it, for the page's
  // roofline.
  TuneReport(std::string path, std::string db_path, const Target& target);

  // After a batch: rewrites the page when the last write is old enough. Thread-safe.
  void after_batch();
  // At the end of the job: rewrites the page and says where it is.
  void finish();

 private:
  void write();

  std::string path_;
  std::string db_path_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point last_write_{};
  bool written_ = false;
};

}  // namespace temper::cli
