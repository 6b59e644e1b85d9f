// The tuning log as an SQLite file, through SQLite's C API.
//
// Schema (version 5, kept in PRAGMA user_version):
//   workloads(id, op, workload UNIQUE)
//   targets(id, target, cpu_model, cpu_features, cores, compiler, device; UNIQUE over all
//           six; device since version 2)
//   records(id, workload_id -> workloads, target_id -> targets, trace, config, costs
//           (JSON text), mean, error_kind, error_message, timestamp, temper_version)
//   index records_best(workload_id, target_id, mean) for the best-record query.
//   machine_probes(id, target_id -> targets, threads, fp32_gflops, int8_gops,
//           bandwidth_gbs, timestamp, temper_version; since version 3)
//   sweep_results(id, target_id -> targets, sweep, entry, entry_kind, contender, status,
//           why, description, seconds, round_seconds (JSON), flops, threads, details (JSON),
//           timestamp, temper_version; since version 4)
//   model_choices(id, workload_id -> workloads, target_id -> targets, model, trace, config
//           (JSON text), picked, model_seconds, log_best_seconds, timestamp,
//           temper_version; since version 5)
//
// Several processes may tune into one file at once: the file is in WAL mode, writers
// wait up to busy_timeout for each other, and each commit is one transaction, so a
// process killed mid-commit leaves the log as it was before that commit.
//
// Opening checks the file before changing anything: a file that is not an SQLite
// database, an SQLite database that is not a tuning log, or a log written by a newer
// schema is a UserError naming the file, and the file is left untouched. A log of an
// older schema is migrated in place, one version step per transaction, when opened for
// writing; opened read-only it is read as it is.
//
// Beyond the Database interface, the log answers the questions of `temper db`: what it
// holds (stats) and how to shrink it (prune, the only operation that deletes records).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tuning_db/database.h"

struct sqlite3;

namespace temper::tuning_db {

// The schema this Temper writes and the newest it reads.
int sqlite_schema_version();

// How a log is opened.
enum class OpenMode {
  Create,    // read and write; a missing file becomes a new, empty log
  Existing,  // read and write; a missing file is a UserError ("no tuning log at PATH")
  // Read only: a missing file is a UserError, and nothing is ever written, so a log of an
  // older schema is read without being migrated. (SQLite may leave the -wal and -shm
  // files of WAL mode beside the log; the next writer removes them.)
  ReadOnly,
};

// What a log holds, from aggregate queries (no trace is read).
struct LogStats {
  // The records of one workload on one target string (the key of the best-record query).
  struct Group {
    WorkloadKey workload;
    std::string target;  // "" for a workload the log knows but holds no record of
    int64_t records = 0;
    int64_t valid_records = 0;
    std::optional<double> best_mean;  // seconds, of the top_k schedule; none without one
  };
  // One hardware fingerprint and how many records were measured on it.
  struct TargetCount {
    TargetInfo target;
    int64_t records = 0;
  };

  int schema_version = 0;
  int64_t records = 0;
  int64_t valid_records = 0;
  // Error kind name and count, most frequent first.
  std::vector<std::pair<std::string, int64_t>> records_by_error;
  // Workloads known to the log, with records or not.
  int64_t workloads = 0;
  // In the order first committed.
  std::vector<TargetCount> targets;
  // By workload in first-commit order, then by target in first-record order.
  std::vector<Group> groups;
  // None in a log without records.
  std::optional<int64_t> first_timestamp;
  std::optional<int64_t> last_timestamp;
};

// What prune removed from each (workload, target string) that lost a record.
struct PruneResult {
  struct Group {
    WorkloadKey workload;
    std::string target;
    int64_t kept = 0;
    int64_t removed_valid = 0;   // valid records slower than the kept ones
    int64_t removed_failed = 0;  // failed records (only with drop_failed)
  };
  std::vector<Group> groups;
  int64_t kept = 0;  // records left in the log
  int64_t removed = 0;
  int64_t unreadable_kept = 0;  // records that cannot be read (unreadable_records()), left as they are
};

class SQLiteDatabase : public Database {
 public:
  // Opens the log at path, creating it (and its schema) if missing. busy_timeout_ms is
  // how long a commit waits for another process's before failing.
  explicit SQLiteDatabase(const std::string& path, int busy_timeout_ms = 10000);
  SQLiteDatabase(const std::string& path, OpenMode mode, int busy_timeout_ms = 10000);
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
  void commit_probe(const MachineProbe& probe) override;
  // A log of schema 2 or older, opened read-only, has none.
  std::vector<MachineProbe> probes() const override;
  void commit_sweep_results(const std::vector<SweepResult>& results) override;
  // A log of schema 3 or older, opened read-only, has none.
  std::vector<SweepResult> sweep_results() const override;
  void commit_model_choices(const std::vector<ModelChoice>& choices) override;
  // A log of schema 4 or older, opened read-only, has none.
  std::vector<ModelChoice> model_choices() const override;

  const std::string& path() const { return path_; }

  LogStats stats() const;

  // Keeps, for each workload and target string, the valid records of its `keep` best
  // schedules (as top_k ranks them: a re-measured schedule keeps all its times) and,
  // unless drop_failed, every record that is not valid; removes
  // the others in one transaction, then compacts the file (VACUUM). The file is checked
  // (SQLite's quick_check) before anything is removed: a damaged one is a UserError and
  // stays as it was. A record that cannot be read is kept. UserError for keep < 0.
  PruneResult prune(int keep, bool drop_failed);

  // The records this connection has met that cannot be read back (malformed JSON in a
  // trace, config or costs, an unknown error kind; written by another program or a damaged
  // copy), by id, with what is wrong: every query skips them, so one bad row does not stop
  // a build, an export or a prune; the commands that read the whole log report them.
  std::map<int64_t, std::string> unreadable_records() const;

 private:
  void note_unreadable(int64_t id, const std::string& why) const;

  std::vector<TuningRecord> query_records(const std::string& where_and_order,
                                          const std::vector<std::string>& text_params, int limit) const;

  // The column of TargetInfo::device in queries over `targets t`: '' in an older log
  // opened read-only.
  std::string device_column() const;

  std::string path_;
  sqlite3* db_ = nullptr;
  int schema_version_ = 0;  // of the file as this connection reads it
  mutable std::mutex unreadable_mutex_;
  mutable std::map<int64_t, std::string> unreadable_;
};

// A warning naming the records db has skipped as unreadable so far (the first few, with
// what is wrong), or "" when there are none.
std::string unreadable_records_warning(const SQLiteDatabase& db);

}  // namespace temper::tuning_db
