// The tuning log as an SQLite file, through SQLite's C API.
//
// Schema (version 1, kept in PRAGMA user_version):
//   workloads(id, op, workload UNIQUE)
//   targets(id, target, cpu_model, cpu_features, cores, compiler; UNIQUE over all five)
//   records(id, workload_id -> workloads, target_id -> targets, trace, config, costs
//           (JSON text), mean, error_kind, error_message, timestamp, temper_version)
//   index records_best(workload_id, target_id, mean) for the best-record query.
//
// Several processes may tune into one file at once: the file is in WAL mode, writers
// wait up to busy_timeout for each other, and each commit is one transaction, so a
// process killed mid-commit leaves the log as it was before that commit.
//
// Opening checks the file before changing anything: a file that is not an SQLite
// database, an SQLite database that is not a tuning log, or a log written by a newer
// schema is a UserError naming the file, and the file is left untouched. A log of an
// older schema is migrated in place, one version step per transaction.
#pragma once

#include <string>

#include "tuning_db/database.h"

struct sqlite3;

namespace temper::tuning_db {

// The schema this Temper writes and the newest it reads.
int sqlite_schema_version();

class SQLiteDatabase : public Database {
 public:
  // Opens the log at path, creating it (and its schema) if missing. busy_timeout_ms is
  // how long a commit waits for another process's before failing.
  explicit SQLiteDatabase(const std::string& path, int busy_timeout_ms = 10000);
  ~SQLiteDatabase() override;
  SQLiteDatabase(const SQLiteDatabase&) = delete;
  SQLiteDatabase& operator=(const SQLiteDatabase&) = delete;

  void commit_workload(const WorkloadKey& workload) override;
  void commit_record(const TuningRecord& record) override;
  void commit_records(const std::vector<TuningRecord>& records) override;
  std::vector<TuningRecord> top_k(const WorkloadKey& workload, const std::string& target, int k) const override;
  std::vector<TuningRecord> records_for(const WorkloadKey& workload, const std::string& target) const override;
  std::vector<TuningRecord> all_records() const override;
  int64_t size() const override;
  std::vector<WorkloadKey> workloads() const override;

  const std::string& path() const { return path_; }

 private:
  std::vector<TuningRecord> query_records(const std::string& where_and_order,
                                          const std::vector<std::string>& text_params, int limit) const;

  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace temper::tuning_db
