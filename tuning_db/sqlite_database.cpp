#include "tuning_db/sqlite_database.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <set>
#include <thread>

#include "compiler/ir/error.h"
#include "compiler/ir/text.h"
#include "tuning_db/schedule_ranking.h"

namespace temper::tuning_db {

namespace {

// What to tell a user whose --db cannot be used as it is.
const char* kLeftUntouched = "the file was left untouched";

// TuningRecord::is_valid() in SQL, over `records r` (a non-finite mean is stored as NULL).
const std::string kValidRecord = "(r.error_kind = 'None' AND r.mean > 0)";

// A UserError naming the log, what was being done, and SQLite's own words.
[[noreturn]] void fail(sqlite3* db, const std::string& path, const std::string& what) {
  int code = db ? sqlite3_extended_errcode(db) & 0xff : SQLITE_ERROR;
  std::string sqlite_message = db ? sqlite3_errmsg(db) : "out of memory";
  if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) {
    throw UserError(str("tuning log ", path, " is not a Temper tuning log or is damaged (SQLite: ", sqlite_message,
                        ") while ", what, "; ", kLeftUntouched,
                        ": pass another --db path, or move this file away and start a new log"));
  }
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED) {
    throw UserError(str("tuning log ", path, " stayed locked by another process while ", what,
                        " (SQLite: ", sqlite_message, "); retry when the other job has finished its commit"));
  }
  if (code == SQLITE_READONLY || code == SQLITE_CANTOPEN || code == SQLITE_IOERR || code == SQLITE_FULL) {
    throw UserError(str("tuning log ", path, ": ", what, " failed (SQLite: ", sqlite_message,
                        "): check that the log and its folder are writable (WAL mode writes ", path, "-wal and ", path,
                        "-shm beside it) and that the disk has room, or pass another --db path"));
  }
  throw UserError(str("tuning log ", path, ": ", what, " failed (SQLite: ", sqlite_message, ")"));
}

// One prepared statement, finalized when it goes out of scope.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& path, const std::string& sql) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) fail(db, path, "preparing a query");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are numbered from 1, as in SQLite.
  void bind(int i, const std::string& text) { sqlite3_bind_text(stmt_, i, text.c_str(), -1, SQLITE_TRANSIENT); }
  void bind(int i, int64_t value) { sqlite3_bind_int64(stmt_, i, value); }
  void bind(int i, double value) { sqlite3_bind_double(stmt_, i, value); }
  void bind_null(int i) { sqlite3_bind_null(stmt_, i); }
  // Ready to run again with new bindings.
  void reset() { sqlite3_reset(stmt_); }

  // True while a row is ready; false when done.
  bool step(const char* what) {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(db_, path_, what);
  }

  std::string text(int column) const {
    const unsigned char* p = sqlite3_column_text(stmt_, column);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }

 private:
  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* stmt_ = nullptr;
};

void exec(sqlite3* db, const std::string& path, const std::string& sql, const std::string& what) {
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) fail(db, path, what);
}

// Runs body inside one write transaction: BEGIN IMMEDIATE takes the write lock up front,
// so a busy log is waited for there rather than failing half-way; ROLLBACK when body
// throws, so that nothing of it lands.
template <typename Body>
void write_transaction(sqlite3* db, const std::string& path, const char* locking, const char* committing, Body body) {
  exec(db, path, "BEGIN IMMEDIATE", locking);
  try {
    body();
    exec(db, path, "COMMIT", committing);
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

// The six columns of a target's fingerprint (target, cpu_model, cpu_features, cores,
// compiler, device), in that order from column `first` of the row.
TargetInfo target_columns(const Statement& row, int first) {
  return {row.text(first),     row.text(first + 1), row.text(first + 2), static_cast<int>(row.integer(first + 3)),
          row.text(first + 4), row.text(first + 5)};
}

int64_t query_int(sqlite3* db, const std::string& path, const std::string& sql, const std::string& what) {
  Statement statement(db, path, sql);
  TEMPER_CHECK(statement.step(what.c_str()), "query returned no row: ", sql);
  return statement.integer(0);
}

// Schema migrations: kMigrations[v] takes a log of schema v to v + 1, inside a
// transaction the caller owns. A new log runs them all; an old one, those it lacks.
using Migration = void (*)(sqlite3* db, const std::string& path);

void create_schema_v1(sqlite3* db, const std::string& path) {
  exec(db, path, R"sql(
    CREATE TABLE workloads (
      id INTEGER PRIMARY KEY,
      op TEXT NOT NULL,
      workload TEXT NOT NULL UNIQUE
    );
    CREATE TABLE targets (
      id INTEGER PRIMARY KEY,
      target TEXT NOT NULL,
      cpu_model TEXT NOT NULL,
      cpu_features TEXT NOT NULL,
      cores INTEGER NOT NULL,
      compiler TEXT NOT NULL,
      UNIQUE (target, cpu_model, cpu_features, cores, compiler)
    );
    CREATE TABLE records (
      id INTEGER PRIMARY KEY,
      workload_id INTEGER NOT NULL REFERENCES workloads(id),
      target_id INTEGER NOT NULL REFERENCES targets(id),
      trace TEXT NOT NULL,
      config TEXT,
      costs TEXT NOT NULL,
      mean REAL,
      error_kind TEXT NOT NULL,
      error_message TEXT NOT NULL,
      timestamp INTEGER NOT NULL,
      temper_version TEXT NOT NULL
    );
    CREATE INDEX records_best ON records (workload_id, target_id, mean);
  )sql",
       "creating the schema");
}

// v2: a target's fingerprint names its GPU device (TargetInfo::device; '' for CPU
// targets and for the records of v1). The UNIQUE constraint changes with it, which
// SQLite cannot alter: the table is rebuilt with the same ids, so records keep their
// target_id. Foreign keys are not enforced during migration (the connection turns them
// on afterwards), so dropping the old table leaves the references alone.
void add_target_device_v2(sqlite3* db, const std::string& path) {
  exec(db, path, R"sql(
    CREATE TABLE targets_v2 (
      id INTEGER PRIMARY KEY,
      target TEXT NOT NULL,
      cpu_model TEXT NOT NULL,
      cpu_features TEXT NOT NULL,
      cores INTEGER NOT NULL,
      compiler TEXT NOT NULL,
      device TEXT NOT NULL DEFAULT '',
      UNIQUE (target, cpu_model, cpu_features, cores, compiler, device)
    );
    INSERT INTO targets_v2 (id, target, cpu_model, cpu_features, cores, compiler)
      SELECT id, target, cpu_model, cpu_features, cores, compiler FROM targets;
    DROP TABLE targets;
    ALTER TABLE targets_v2 RENAME TO targets;
  )sql",
       "adding the device fingerprint to the targets (schema 2)");
}

// v3: machine probes (machine_probe.h), keyed by the target they ran for.
void add_machine_probes_v3(sqlite3* db, const std::string& path) {
  exec(db, path, R"sql(
    CREATE TABLE machine_probes (
      id INTEGER PRIMARY KEY,
      target_id INTEGER NOT NULL REFERENCES targets(id),
      threads INTEGER NOT NULL,
      fp32_gflops REAL NOT NULL,
      int8_gops REAL NOT NULL,
      bandwidth_gbs REAL NOT NULL,
      timestamp INTEGER NOT NULL,
      temper_version TEXT NOT NULL
    );
  )sql",
       "adding the machine probes (schema 3)");
}

// v4: benchmark sweep results (sweep_result.h), keyed by the machine they ran on.
void add_sweep_results_v4(sqlite3* db, const std::string& path) {
  exec(db, path, R"sql(
    CREATE TABLE sweep_results (
      id INTEGER PRIMARY KEY,
      target_id INTEGER NOT NULL REFERENCES targets(id),
      sweep TEXT NOT NULL,
      entry TEXT NOT NULL,
      entry_kind TEXT NOT NULL,
      contender TEXT NOT NULL,
      status TEXT NOT NULL,
      why TEXT NOT NULL,
      description TEXT NOT NULL,
      seconds REAL NOT NULL,
      round_seconds TEXT NOT NULL,
      flops REAL NOT NULL,
      threads INTEGER NOT NULL,
      details TEXT NOT NULL,
      timestamp INTEGER NOT NULL,
      temper_version TEXT NOT NULL
    );
  )sql",
       "adding the sweep results (schema 4)");
}

// v5: schedules chosen inside a model (model_choice.h), keyed like records by workload
// and target.
void add_model_choices_v5(sqlite3* db, const std::string& path) {
  exec(db, path, R"sql(
    CREATE TABLE model_choices (
      id INTEGER PRIMARY KEY,
      workload_id INTEGER NOT NULL REFERENCES workloads(id),
      target_id INTEGER NOT NULL REFERENCES targets(id),
      model TEXT NOT NULL,
      trace TEXT NOT NULL,
      config TEXT,
      picked TEXT NOT NULL,
      model_seconds REAL NOT NULL,
      log_best_seconds REAL NOT NULL,
      timestamp INTEGER NOT NULL,
      temper_version TEXT NOT NULL
    );
  )sql",
       "adding the model choices (schema 5)");
}

// v6: each record names the tuner that proposed it (TuningRecord::tuner; '' for the
// records of v5 and before).
void add_record_tuner_v6(sqlite3* db, const std::string& path) {
  exec(db, path, "ALTER TABLE records ADD COLUMN tuner TEXT NOT NULL DEFAULT ''",
       "adding the tuner to the records (schema 6)");
}

constexpr Migration kMigrations[] = {create_schema_v1,     add_target_device_v2,  add_machine_probes_v3,
                                     add_sweep_results_v4, add_model_choices_v5, add_record_tuner_v6};

// The first schema that stores TargetInfo::device, and the first with machine probes,
// sweep results, model choices and record tuners.
constexpr int kDeviceSchema = 2;
constexpr int kProbeSchema = 3;
constexpr int kSweepSchema = 4;
constexpr int kModelChoiceSchema = 5;
constexpr int kRecordTunerSchema = 6;
constexpr int kSchemaVersion = static_cast<int>(std::size(kMigrations));

[[noreturn]] void refuse_newer_schema(const std::string& path, int version) {
  throw UserError(str("tuning log ", path, " was written by a newer Temper (schema ", version,
                      "); this one reads up to ", kSchemaVersion,
                      ": use that newer Temper, or pass another --db path"));
}

[[noreturn]] void refuse_foreign_database(const std::string& path, const std::string& why = "") {
  throw UserError(str("tuning log ", path, " is an SQLite database but not a Temper tuning log",
                      why.empty() ? "" : " (" + why + ")", "; ", kLeftUntouched, ": pass another --db path"));
}

// The columns each schema version's tables have (those a later version adds included
// from that version on).
struct SchemaTable {
  const char* table;
  std::vector<std::pair<const char*, int>> columns;  // name, the first schema that has it
};
const SchemaTable kSchemaTables[] = {
    {"workloads", {{"id", 1}, {"op", 1}, {"workload", 1}}},
    {"targets",
     {{"id", 1}, {"target", 1}, {"cpu_model", 1}, {"cpu_features", 1}, {"cores", 1}, {"compiler", 1}, {"device", 2}}},
    {"records",
     {{"id", 1},
      {"workload_id", 1},
      {"target_id", 1},
      {"trace", 1},
      {"config", 1},
      {"costs", 1},
      {"mean", 1},
      {"error_kind", 1},
      {"error_message", 1},
      {"timestamp", 1},
      {"temper_version", 1},
      {"tuner", 6}}},
    {"machine_probes",
     {{"id", 3},
      {"target_id", 3},
      {"threads", 3},
      {"fp32_gflops", 3},
      {"int8_gops", 3},
      {"bandwidth_gbs", 3},
      {"timestamp", 3},
      {"temper_version", 3}}},
    {"sweep_results",
     {{"id", 4},
      {"target_id", 4},
      {"sweep", 4},
      {"entry", 4},
      {"entry_kind", 4},
      {"contender", 4},
      {"status", 4},
      {"why", 4},
      {"description", 4},
      {"seconds", 4},
      {"round_seconds", 4},
      {"flops", 4},
      {"threads", 4},
      {"details", 4},
      {"timestamp", 4},
      {"temper_version", 4}}},
    {"model_choices",
     {{"id", 5},
      {"workload_id", 5},
      {"target_id", 5},
      {"model", 5},
      {"trace", 5},
      {"config", 5},
      {"picked", 5},
      {"model_seconds", 5},
      {"log_best_seconds", 5},
      {"timestamp", 5},
      {"temper_version", 5}}},
};

// Refuses a file whose schema version no Temper writes (negative) or this one cannot read
// (newer), and one whose version is Temper's but whose tables are not (another program's
// database that happens to set user_version): before anything is written to it.
void check_schema(sqlite3* db, const std::string& path, int version) {
  if (version < 0) refuse_foreign_database(path, str("its schema version is ", version, ", which no Temper writes"));
  if (version > kSchemaVersion) refuse_newer_schema(path, version);
  if (version == 0) return;  // new, or foreign: told apart by whether it has tables
  for (const SchemaTable& table : kSchemaTables) {
    int table_since = table.columns.front().second;
    if (table_since > version) continue;  // a table a later version adds
    Statement info(db, path, "SELECT name FROM pragma_table_info(?)");
    info.bind(1, std::string(table.table));
    std::set<std::string> present;
    while (info.step("reading the log's tables")) present.insert(info.text(0));
    if (present.empty()) {
      refuse_foreign_database(path, str("schema version ", version, " but no table '", table.table, "'"));
    }
    for (const auto& [column, since] : table.columns) {
      if (since <= version && !present.count(column)) {
        refuse_foreign_database(
            path, str("schema version ", version, " but table '", table.table, "' has no column '", column, "'"));
      }
    }
  }
}

// A read-only log cannot be migrated: it is read with the schema it has (every version
// since 1 holds every field but the newer ones, which read as empty).
void check_schema_read_only(sqlite3* db, const std::string& path, int version) {
  check_schema(db, path, version);
  if (version > 0) return;
  if (query_int(db, path, "SELECT count(*) FROM sqlite_master", "listing tables") > 0) refuse_foreign_database(path);
  throw UserError(str("tuning log ", path, " is empty, not a Temper tuning log: pass another --db path"));
}

// Brings the log to kSchemaVersion. Each step reads the version under the write lock,
// so two processes opening one new or old log migrate it once, and a file with tables
// but no version (another program's database) is refused before anything is written.
void migrate(sqlite3* db, const std::string& path) {
  while (true) {
    exec(db, path, "BEGIN IMMEDIATE", "locking the log to check its schema");
    try {
      int version = static_cast<int>(query_int(db, path, "PRAGMA user_version", "reading the schema version"));
      check_schema(db, path, version);
      if (version == kSchemaVersion) {
        exec(db, path, "COMMIT", "finishing the schema check");
        return;
      }
      if (version == 0 && query_int(db, path, "SELECT count(*) FROM sqlite_master", "listing tables") > 0) {
        refuse_foreign_database(path);
      }
      kMigrations[version](db, path);
      exec(db, path, str("PRAGMA user_version = ", version + 1), "recording the schema version");
      exec(db, path, "COMMIT", "committing the schema update");
    } catch (...) {
      sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }
}

// Puts the log in WAL mode. Switching needs the file to itself, and SQLite does not wait
// for that on its own, so a busy switch is retried until busy_timeout_ms has passed.
void use_wal(sqlite3* db, const std::string& path, int busy_timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
  while (true) {
    int rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return;
    if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline) {
      fail(db, path, "switching the log to WAL mode");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// What SQLite would only call "unable to open" or "disk I/O error": a folder given as the
// log, a log or a folder this process may not write (WAL mode writes PATH-wal and
// PATH-shm beside the log).
void check_openable(const std::string& path, OpenMode mode) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw UserError(str("--db ", path, " is a folder, not a tuning log file: pass a file path such as ",
                        (std::filesystem::path(path) / "tuning.db").string()));
  }
  if (mode == OpenMode::ReadOnly) {
    if (std::filesystem::exists(path, error) && access(path.c_str(), R_OK) != 0) {
      throw UserError(str("tuning log ", path, " is not readable by this user: check its permissions"));
    }
    return;
  }
  std::filesystem::path folder = std::filesystem::absolute(path, error).parent_path();
  if (std::filesystem::exists(path, error) && access(path.c_str(), R_OK | W_OK) != 0) {
    throw UserError(str("tuning log ", path,
                        " is not writable by this user, and tuning writes to it: make it "
                        "writable (chmod u+w), or pass another --db path; `temper run` and `temper build` "
                        "only read it"));
  }
  if (std::filesystem::is_directory(folder, error) && access(folder.c_str(), W_OK | X_OK) != 0) {
    throw UserError(str("the folder of tuning log ", path, " (", folder.string(),
                        ") is not writable by this user, "
                        "and the log writes its write-ahead files (",
                        path, "-wal, ", path,
                        "-shm) there: make it "
                        "writable, or pass a --db path in another folder"));
  }
}

int64_t workload_id(sqlite3* db, const std::string& path, const WorkloadKey& workload) {
  Statement insert(db, path, "INSERT INTO workloads (op, workload) VALUES (?, ?) ON CONFLICT (workload) DO NOTHING");
  insert.bind(1, workload.op);
  insert.bind(2, workload.workload);
  insert.step("adding a workload");
  Statement select(db, path, "SELECT id FROM workloads WHERE workload = ?");
  select.bind(1, workload.workload);
  TEMPER_CHECK(select.step("finding a workload"), "workload just inserted is missing: ", workload.workload);
  return select.integer(0);
}

int64_t target_id(sqlite3* db, const std::string& path, const TargetInfo& target) {
  Statement insert(db, path,
                   "INSERT INTO targets (target, cpu_model, cpu_features, cores, compiler, device) "
                   "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING");
  Statement select(db, path,
                   "SELECT id FROM targets WHERE target = ? AND cpu_model = ? AND cpu_features = ? AND cores = ? "
                   "AND compiler = ? AND device = ?");
  for (Statement* statement : {&insert, &select}) {
    statement->bind(1, target.target);
    statement->bind(2, target.cpu_model);
    statement->bind(3, target.cpu_features);
    statement->bind(4, static_cast<int64_t>(target.cores));
    statement->bind(5, target.compiler);
    statement->bind(6, target.device);
  }
  insert.step("adding a target");
  TEMPER_CHECK(select.step("finding a target"), "target just inserted is missing: ", target.target);
  return select.integer(0);
}

// A stored record that cannot be read back: what is wrong with it.
class UnreadableRecord : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

nlohmann::json parse_stored_json(const std::string& text, const char* column) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw UnreadableRecord(str("malformed ", column, " JSON (", e.what(), ")"));
  }
}

std::vector<double> parse_stored_costs(const std::string& text) {
  nlohmann::json costs = parse_stored_json(text, "costs");
  if (!costs.is_array() || !std::all_of(costs.begin(), costs.end(), [](const auto& c) { return c.is_number(); })) {
    throw UnreadableRecord("costs JSON is not a list of numbers");
  }
  return costs.get<std::vector<double>>();
}

ErrorKind parse_stored_error_kind(const std::string& text) {
  try {
    return parse_error_kind(text);
  } catch (const UserError& e) {
    throw UnreadableRecord(e.what());
  }
}

}  // namespace

int sqlite_schema_version() {
  return kSchemaVersion;
}

std::string SQLiteDatabase::device_column() const {
  return schema_version_ >= kDeviceSchema ? "t.device" : "''";
}

SQLiteDatabase::SQLiteDatabase(const std::string& path, int busy_timeout_ms)
    : SQLiteDatabase(path, OpenMode::Create, busy_timeout_ms) {}

SQLiteDatabase::SQLiteDatabase(const std::string& path, OpenMode mode, int busy_timeout_ms) : path_(path) {
  if (mode != OpenMode::Create && !std::filesystem::exists(path)) {
    throw UserError(str("no tuning log at ", path, ": check the --db path"));
  }
  check_openable(path, mode);
  int flags = SQLITE_OPEN_FULLMUTEX;
  if (mode == OpenMode::ReadOnly) flags |= SQLITE_OPEN_READONLY;
  if (mode != OpenMode::ReadOnly) flags |= SQLITE_OPEN_READWRITE;
  if (mode == OpenMode::Create) flags |= SQLITE_OPEN_CREATE;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw UserError(str("cannot open tuning log ", path, " (SQLite: ", message, "); check that ",
                        mode == OpenMode::ReadOnly ? "it is readable" : "its folder exists and is writable",
                        ", or pass another --db path"));
  }
  try {
    sqlite3_busy_timeout(db_, busy_timeout_ms);
    // Refuse a newer or foreign log before writing anything, the WAL switch included;
    // migrate() checks again under the write lock.
    int version = static_cast<int>(query_int(db_, path_, "PRAGMA user_version", "reading the schema version"));
    if (mode == OpenMode::ReadOnly) {
      check_schema_read_only(db_, path_, version);
      schema_version_ = version;
      return;
    }
    migrate(db_, path_);
    schema_version_ = kSchemaVersion;
    // WAL lets readers and one writer share the file; NORMAL sync keeps every committed
    // transaction across a process crash (only a power loss may drop the last ones).
    use_wal(db_, path_, busy_timeout_ms);
    exec(db_, path_, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON", "setting up the connection");
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

SQLiteDatabase::~SQLiteDatabase() {
  sqlite3_close(db_);
}

void SQLiteDatabase::commit_workload(const WorkloadKey& workload) {
  write_transaction(db_, path_, "locking the log to commit", "committing a workload",
                    [&] { workload_id(db_, path_, workload); });
}

void SQLiteDatabase::commit_record(const TuningRecord& record) {
  commit_records({record});
}

void SQLiteDatabase::commit_records(const std::vector<TuningRecord>& records) {
  write_transaction(db_, path_, "locking the log to commit", "committing records", [&] {
    Statement insert(db_, path_,
                     "INSERT INTO records (workload_id, target_id, trace, config, costs, mean, error_kind, "
                     "error_message, timestamp, temper_version, tuner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const TuningRecord& record : records) {
      insert.reset();
      insert.bind(1, workload_id(db_, path_, record.workload));
      insert.bind(2, target_id(db_, path_, record.target));
      insert.bind(3, record.trace.dump());
      if (record.config.is_null()) {
        insert.bind_null(4);
      } else {
        insert.bind(4, record.config.dump());
      }
      insert.bind(5, nlohmann::json(record.costs).dump());
      if (std::isfinite(record.mean)) {
        insert.bind(6, record.mean);
      } else {
        insert.bind_null(6);
      }
      insert.bind(7, std::string(error_kind_name(record.error)));
      insert.bind(8, record.error_message);
      insert.bind(9, record.timestamp);
      insert.bind(10, record.temper_version);
      insert.bind(11, record.tuner);
      insert.step("adding a record");
    }
  });
}

std::vector<TuningRecord> SQLiteDatabase::query_records(const std::string& where_and_order,
                                                        const std::vector<std::string>& text_params, int limit) const {
  Statement select(db_, path_,
                   "SELECT r.id, w.op, w.workload, t.target, t.cpu_model, t.cpu_features, t.cores, t.compiler, "
                   "r.trace, r.config, r.costs, r.mean, r.error_kind, r.error_message, r.timestamp, "
                   "r.temper_version, " +
                       device_column() + ", " + (schema_version_ >= kRecordTunerSchema ? "r.tuner" : "''") +
                       " FROM records r JOIN workloads w ON r.workload_id = w.id "
                       "JOIN targets t ON r.target_id = t.id " +
                       where_and_order + " LIMIT ?");
  for (size_t i = 0; i < text_params.size(); ++i) select.bind(static_cast<int>(i) + 1, text_params[i]);
  select.bind(static_cast<int>(text_params.size()) + 1, static_cast<int64_t>(limit));
  std::vector<TuningRecord> records;
  while (select.step("reading records")) {
    int64_t id = select.integer(0);
    TuningRecord r;
    try {
      r.workload = {select.text(1), select.text(2)};
      r.target = {select.text(3), select.text(4), select.text(5), static_cast<int>(select.integer(6)),
                  select.text(7), select.text(16)};
      r.trace = parse_stored_json(select.text(8), "trace");
      r.config = select.is_null(9) ? nlohmann::json(nullptr) : parse_stored_json(select.text(9), "config");
      r.costs = parse_stored_costs(select.text(10));
      r.mean = select.is_null(11) ? NAN : select.real(11);
      r.error = parse_stored_error_kind(select.text(12));
    } catch (const UnreadableRecord& e) {
      note_unreadable(id, e.what());
      continue;
    }
    r.error_message = select.text(13);
    r.timestamp = select.integer(14);
    r.temper_version = select.text(15);
    r.tuner = select.text(17);
    records.push_back(std::move(r));
  }
  return records;
}

void SQLiteDatabase::note_unreadable(int64_t id, const std::string& why) const {
  std::lock_guard<std::mutex> lock(unreadable_mutex_);
  unreadable_.emplace(id, why);
}

std::map<int64_t, std::string> SQLiteDatabase::unreadable_records() const {
  std::lock_guard<std::mutex> lock(unreadable_mutex_);
  return unreadable_;
}

std::vector<TuningRecord> SQLiteDatabase::top_k(const WorkloadKey& workload, const std::string& target, int k) const {
  if (k < 0) throw UserError(str("top_k: k must be at least 0, not ", k));
  return best_schedules(query_records("WHERE w.workload = ? AND t.target = ? AND (" + kValidRecord +
                                          " OR r.error_kind = 'WrongResult') ORDER BY r.id",
                                      {workload.workload, target}, -1),
                        k);
}

std::vector<TuningRecord> SQLiteDatabase::records_for(const WorkloadKey& workload, const std::string& target) const {
  return query_records("WHERE w.workload = ? AND t.target = ? ORDER BY r.id", {workload.workload, target}, -1);
}

std::vector<TuningRecord> SQLiteDatabase::all_records() const {
  return query_records("ORDER BY r.id", {}, -1);
}

int64_t SQLiteDatabase::size() const {
  return query_int(db_, path_, "SELECT count(*) FROM records", "counting records");
}

void SQLiteDatabase::commit_probe(const MachineProbe& probe) {
  write_transaction(db_, path_, "locking the log to commit", "committing a machine probe", [&] {
    Statement insert(db_, path_,
                     "INSERT INTO machine_probes (target_id, threads, fp32_gflops, int8_gops, bandwidth_gbs, "
                     "timestamp, temper_version) VALUES (?, ?, ?, ?, ?, ?, ?)");
    insert.bind(1, target_id(db_, path_, probe.machine));
    insert.bind(2, static_cast<int64_t>(probe.threads));
    insert.bind(3, probe.fp32_gflops);
    insert.bind(4, probe.int8_gops);
    insert.bind(5, probe.bandwidth_gbs);
    insert.bind(6, probe.timestamp);
    insert.bind(7, probe.temper_version);
    insert.step("adding a machine probe");
  });
}

std::vector<MachineProbe> SQLiteDatabase::probes() const {
  std::vector<MachineProbe> probes;
  if (schema_version_ < kProbeSchema) return probes;
  Statement select(db_, path_,
                   "SELECT t.target, t.cpu_model, t.cpu_features, t.cores, t.compiler, t.device, p.threads, "
                   "p.fp32_gflops, p.int8_gops, p.bandwidth_gbs, p.timestamp, p.temper_version "
                   "FROM machine_probes p JOIN targets t ON p.target_id = t.id ORDER BY p.id");
  while (select.step("reading machine probes")) {
    MachineProbe p;
    p.machine = target_columns(select, 0);
    p.threads = static_cast<int>(select.integer(6));
    p.fp32_gflops = select.real(7);
    p.int8_gops = select.real(8);
    p.bandwidth_gbs = select.real(9);
    p.timestamp = select.integer(10);
    p.temper_version = select.text(11);
    probes.push_back(std::move(p));
  }
  return probes;
}

void SQLiteDatabase::commit_sweep_results(const std::vector<SweepResult>& results) {
  write_transaction(db_, path_, "locking the log to commit", "committing sweep results", [&] {
    Statement insert(db_, path_,
                     "INSERT INTO sweep_results (target_id, sweep, entry, entry_kind, contender, status, why, "
                     "description, seconds, round_seconds, flops, threads, details, timestamp, temper_version) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const SweepResult& r : results) {
      insert.reset();
      insert.bind(1, target_id(db_, path_, r.machine));
      insert.bind(2, r.sweep);
      insert.bind(3, r.entry);
      insert.bind(4, r.entry_kind);
      insert.bind(5, r.contender);
      insert.bind(6, r.status);
      insert.bind(7, r.why);
      insert.bind(8, r.description);
      insert.bind(9, r.seconds);
      insert.bind(10, nlohmann::json(r.round_seconds).dump());
      insert.bind(11, r.flops);
      insert.bind(12, static_cast<int64_t>(r.threads));
      insert.bind(13, r.details);
      insert.bind(14, r.timestamp);
      insert.bind(15, r.temper_version);
      insert.step("adding a sweep result");
    }
  });
}

std::vector<SweepResult> SQLiteDatabase::sweep_results() const {
  std::vector<SweepResult> results;
  if (schema_version_ < kSweepSchema) return results;
  Statement select(
      db_, path_,
      "SELECT t.target, t.cpu_model, t.cpu_features, t.cores, t.compiler, t.device, s.sweep, s.entry, "
      "s.entry_kind, s.contender, s.status, s.why, s.description, s.seconds, s.round_seconds, s.flops, "
      "s.threads, s.details, s.timestamp, s.temper_version FROM sweep_results s JOIN targets t ON s.target_id = t.id "
      "ORDER BY s.id");
  while (select.step("reading sweep results")) {
    SweepResult r;
    r.machine = target_columns(select, 0);
    r.sweep = select.text(6);
    r.entry = select.text(7);
    r.entry_kind = select.text(8);
    r.contender = select.text(9);
    r.status = select.text(10);
    r.why = select.text(11);
    r.description = select.text(12);
    r.seconds = select.real(13);
    nlohmann::json rounds = nlohmann::json::parse(select.text(14), nullptr, false);
    if (rounds.is_array()) {
      for (const auto& v : rounds) {
        if (v.is_number()) r.round_seconds.push_back(v.get<double>());
      }
    }
    r.flops = select.real(15);
    r.threads = static_cast<int>(select.integer(16));
    r.details = select.text(17);
    r.timestamp = select.integer(18);
    r.temper_version = select.text(19);
    results.push_back(std::move(r));
  }
  return results;
}

void SQLiteDatabase::commit_model_choices(const std::vector<ModelChoice>& choices) {
  write_transaction(db_, path_, "locking the log to commit", "committing model choices", [&] {
    Statement insert(db_, path_,
                     "INSERT INTO model_choices (workload_id, target_id, model, trace, config, picked, model_seconds, "
                     "log_best_seconds, timestamp, temper_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const ModelChoice& c : choices) {
      insert.reset();
      insert.bind(1, workload_id(db_, path_, c.workload));
      insert.bind(2, target_id(db_, path_, c.target));
      insert.bind(3, c.model);
      insert.bind(4, c.trace.dump());
      if (c.config.is_null()) {
        insert.bind_null(5);
      } else {
        insert.bind(5, c.config.dump());
      }
      insert.bind(6, c.picked);
      insert.bind(7, c.model_seconds);
      insert.bind(8, c.log_best_seconds);
      insert.bind(9, c.timestamp);
      insert.bind(10, c.temper_version);
      insert.step("adding a model choice");
    }
  });
}

std::vector<ModelChoice> SQLiteDatabase::model_choices() const {
  std::vector<ModelChoice> choices;
  if (schema_version_ < kModelChoiceSchema) return choices;
  Statement select(db_, path_,
                   "SELECT w.op, w.workload, t.target, t.cpu_model, t.cpu_features, t.cores, t.compiler, t.device, "
                   "c.model, c.trace, c.config, c.picked, c.model_seconds, c.log_best_seconds, c.timestamp, "
                   "c.temper_version FROM model_choices c JOIN workloads w ON c.workload_id = w.id "
                   "JOIN targets t ON c.target_id = t.id ORDER BY c.id");
  while (select.step("reading model choices")) {
    ModelChoice c;
    try {
      c.trace = parse_stored_json(select.text(9), "trace");
      c.config = select.is_null(10) ? nlohmann::json(nullptr) : parse_stored_json(select.text(10), "config");
    } catch (const UnreadableRecord&) {
      // Skipped like an unreadable record, so that one damaged row does not stop a build;
      // unreadable_records() names records only.
      continue;
    }
    c.workload = {select.text(0), select.text(1)};
    c.target = target_columns(select, 2);
    c.model = select.text(8);
    c.picked = select.text(11);
    c.model_seconds = select.real(12);
    c.log_best_seconds = select.real(13);
    c.timestamp = select.integer(14);
    c.temper_version = select.text(15);
    choices.push_back(std::move(c));
  }
  return choices;
}

std::vector<WorkloadKey> SQLiteDatabase::workloads() const {
  Statement select(db_, path_, "SELECT op, workload FROM workloads ORDER BY id");
  std::vector<WorkloadKey> workloads;
  while (select.step("listing workloads")) workloads.push_back({select.text(0), select.text(1)});
  return workloads;
}

LogStats SQLiteDatabase::stats() const {
  // One read transaction, so that the counts agree with each other while others commit.
  exec(db_, path_, "BEGIN", "starting to read the log");
  try {
    LogStats stats;
    stats.schema_version = static_cast<int>(query_int(db_, path_, "PRAGMA user_version", "reading the schema version"));
    Statement totals(db_, path_,
                     "SELECT count(*), count(CASE WHEN " + kValidRecord +
                         " THEN 1 END), min(r.timestamp), max(r.timestamp) FROM records r");
    TEMPER_CHECK(totals.step("counting records"), "count(*) returned no row");
    stats.records = totals.integer(0);
    stats.valid_records = totals.integer(1);
    if (stats.records > 0) {
      stats.first_timestamp = totals.integer(2);
      stats.last_timestamp = totals.integer(3);
    }
    Statement by_error(
        db_, path_, "SELECT error_kind, count(*) FROM records GROUP BY error_kind ORDER BY count(*) DESC, error_kind");
    while (by_error.step("counting records by error")) {
      stats.records_by_error.emplace_back(by_error.text(0), by_error.integer(1));
    }
    stats.workloads = query_int(db_, path_, "SELECT count(*) FROM workloads", "counting workloads");
    Statement targets(db_, path_,
                      "SELECT t.target, t.cpu_model, t.cpu_features, t.cores, t.compiler, " + device_column() +
                          ", count(r.id) FROM targets t LEFT JOIN records r ON r.target_id = t.id GROUP BY t.id "
                          "ORDER BY t.id");
    while (targets.step("counting records by target")) {
      TargetInfo info = target_columns(targets, 0);
      stats.targets.push_back({info, targets.integer(6)});
    }
    Statement groups(db_, path_,
                     "SELECT w.op, w.workload, t.target, count(r.id), count(CASE WHEN " + kValidRecord +
                         " THEN 1 END) FROM workloads w LEFT JOIN records r ON r.workload_id = w.id "
                         "LEFT JOIN targets t ON r.target_id = t.id GROUP BY w.id, t.target ORDER BY w.id, min(r.id)");
    while (groups.step("counting records by workload")) {
      LogStats::Group group;
      group.workload = {groups.text(0), groups.text(1)};
      group.target = groups.text(2);
      group.records = groups.integer(3);
      group.valid_records = groups.integer(4);
      stats.groups.push_back(std::move(group));
    }
    // The best as a build takes it: a re-measured schedule by its median.
    for (LogStats::Group& group : stats.groups) {
      if (group.valid_records == 0) continue;
      std::vector<TuningRecord> best = top_k(group.workload, group.target, 1);
      if (!best.empty()) group.best_mean = best[0].mean;
    }
    exec(db_, path_, "COMMIT", "finishing reading the log");
    return stats;
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

PruneResult SQLiteDatabase::prune(int keep, bool drop_failed) {
  if (keep < 0) throw UserError(str("prune: the number of records to keep must be at least 0, not ", keep));
  PruneResult result;
  write_transaction(db_, path_, "locking the log to prune it", "committing the removal", [&] {
    // Deleting from a log that cannot be read would lose more than asked: check the
    // file, then read (and parse) every record before the first DELETE.
    Statement check(db_, path_, "PRAGMA quick_check");
    std::string problems;
    while (check.step("checking the log")) {
      if (check.text(0) != "ok") problems += (problems.empty() ? "" : "; ") + check.text(0);
    }
    if (!problems.empty()) {
      throw UserError(str("tuning log ", path_, " is damaged (SQLite quick_check: ", problems,
                          "); nothing was removed: export the records you need and start a new log"));
    }

    // Each (workload, target string) in turn: the records of its `keep` best schedules
    // (rank_schedules: by median, so a re-measured schedule keeps all its times) stay.
    Statement select(db_, path_,
                     "SELECT r.id, w.id, w.op, w.workload, t.target, r.trace, r.config, r.mean, r.error_kind, r.costs "
                     "FROM records r JOIN workloads w ON r.workload_id = w.id JOIN targets t ON r.target_id = t.id "
                     "ORDER BY w.id, t.target, r.id");
    std::vector<int64_t> doomed;
    int64_t group_workload_id = -1;
    PruneResult::Group group;
    std::vector<TuningRecord> records;
    std::vector<int64_t> ids;
    auto finish_group = [&] {
      std::set<std::string> kept_schedules;
      for (const RankedSchedule& r : rank_schedules(records, keep)) kept_schedules.insert(schedule_identity(r.record));
      for (size_t i = 0; i < records.size(); ++i) {
        bool valid = records[i].is_valid();
        if (valid && kept_schedules.count(schedule_identity(records[i]))) {
          ++group.kept;
        } else if (valid || drop_failed) {
          ++(valid ? group.removed_valid : group.removed_failed);
          doomed.push_back(ids[i]);
        } else {
          ++group.kept;
        }
      }
      if (group.removed_valid + group.removed_failed > 0) result.groups.push_back(group);
      records.clear();
      ids.clear();
    };
    while (select.step("reading records to prune")) {
      if (select.integer(1) != group_workload_id || select.text(4) != group.target) {
        if (group_workload_id != -1) finish_group();
        group_workload_id = select.integer(1);
        group = PruneResult::Group();
        group.workload = {select.text(2), select.text(3)};
        group.target = select.text(4);
      }
      int64_t id = select.integer(0);
      TuningRecord r;
      try {
        r.trace = parse_stored_json(select.text(5), "trace");
        r.config = select.is_null(6) ? nlohmann::json(nullptr) : parse_stored_json(select.text(6), "config");
        r.error = parse_stored_error_kind(select.text(8));
        parse_stored_costs(select.text(9));  // unreadable to top_k, so neither ranked nor removed here
      } catch (const UnreadableRecord& e) {
        // Neither ranked nor removed: what cannot be read is kept as it is.
        note_unreadable(id, e.what());
        ++result.unreadable_kept;
        continue;
      }
      r.mean = select.is_null(7) ? NAN : select.real(7);
      records.push_back(std::move(r));
      ids.push_back(id);
    }
    if (group_workload_id != -1) finish_group();

    Statement remove(db_, path_, "DELETE FROM records WHERE id = ?");
    for (int64_t id : doomed) {
      remove.reset();
      remove.bind(1, id);
      remove.step("removing a record");
    }
    result.removed = static_cast<int64_t>(doomed.size());
    result.kept = query_int(db_, path_, "SELECT count(*) FROM records", "counting records");
  });
  if (result.removed == 0) return result;
  // VACUUM rewrites the file without the freed pages; in WAL mode the rewrite lands in
  // the write-ahead log, and the TRUNCATE checkpoint moves it into the file.
  try {
    exec(db_, path_, "VACUUM", "compacting the log");
    exec(db_, path_, "PRAGMA wal_checkpoint(TRUNCATE)", "writing the compacted log back");
  } catch (const UserError& e) {
    throw UserError(str(result.removed, " records were removed, but ", e.what(),
                        "; the log is complete, only not compacted: prune again later to compact it"));
  }
  return result;
}

std::string unreadable_records_warning(const SQLiteDatabase& db) {
  std::map<int64_t, std::string> unreadable = db.unreadable_records();
  if (unreadable.empty()) return "";
  constexpr size_t kNamed = 3;
  std::vector<std::string> named;
  for (const auto& [id, why] : unreadable) {
    if (named.size() == kNamed) break;
    named.push_back(str("record ", id, ": ", why));
  }
  size_t more = unreadable.size() - named.size();
  return str("warning: tuning log ", db.path(), ": ",
             unreadable.size() == 1 ? "1 record" : str(unreadable.size(), " records"), " cannot be read and ",
             unreadable.size() == 1 ? "was" : "were", " skipped (", join(named, "; "),
             more > 0 ? str("; and ", more, " more") : std::string(),
             "); they stay in the log; `temper db export` writes all the others, to import into a new log");
}

}  // namespace temper::tuning_db
