// temper db: look into a tuning log and keep it in shape. Every subcommand names the log
// with --db; list, best, stats and export open it read-only (a missing file is an error,
// never a new log), import and merge add records without repeating one already there
// (tuning_db/merge.h), and prune is the only one that deletes.
//
// Output is columns two spaces apart under a header line: readable in a terminal, and
// one line per item for grep.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/command_line.h"
#include "cli/probe_machine.h"
#include "cli/commands.h"
#include "compiler/ir/error.h"
#include "compiler/ir/text.h"
#include "compiler/ops/workload.h"
#include "compiler/target/target.h"
#include "measure/fma_peak.h"
#include "search/record_replay_check.h"
#include "tuning_db/json_lines.h"
#include "tuning_db/memory_database.h"
#include "tuning_db/merge.h"
#include "tuning_db/record_check.h"
#include "tuning_db/schedule_ranking.h"
#include "tuning_db/sqlite_database.h"

namespace po = boost::program_options;

namespace temper::cli {
namespace {

using tuning_db::LogStats;
using tuning_db::OpenMode;
using tuning_db::RankedSchedule;
using tuning_db::rank_schedules;
using tuning_db::SQLiteDatabase;
using tuning_db::TuningRecord;

const char* kDbUsage =
    "usage: temper db SUBCOMMAND --db FILE [options]\n"
    "\n"
    "subcommands:\n"
    "  list                        one line per workload and target: records, best time, GFLOP/s\n"
    "  best WORKLOAD [-k N]        the fastest schedules of a workload [--target T] [--trace-out FILE]\n"
    "  stats                       records by error kind, workloads, targets and their machines, time span\n"
    "  export [-o OUT.jsonl]       every record as JSON lines (to stdout without -o)\n"
    "  import IN.jsonl...          add the records of JSON-lines files (skipping ones already present)\n"
    "  merge OTHER.db...           add the records of other logs (skipping ones already present)\n"
    "  prune --keep N              keep the records of the N best schedules per workload and target [--drop-errors]\n"
    "  probe                       measure this machine's fp32 and int8 peaks and memory bandwidth into the log\n"
    "\n"
    "`temper db SUBCOMMAND --help` for a subcommand's options.\n";

const char* kSubcommands = "list, best, stats, export, import, merge, prune, probe";

void add_db_option(po::options_description& desc, std::string& db_path) {
  desc.add_options()("db", po::value(&db_path), "the tuning log (an SQLite file)");
}

void require_db(const std::string& db_path, const std::string& usage) {
  if (db_path.empty()) throw UserError(str("missing --db FILE (the tuning log)\n", usage));
}

std::string format(const char* spec, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, value);
  return buf;
}

std::string format_ms(double seconds) {
  return format("%.4f", seconds * 1e3);
}

std::string format_bytes(uintmax_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  if (bytes < 1024 * 1024) return format("%.1f KiB", bytes / 1024.0);
  if (bytes < 1024ull * 1024 * 1024) return format("%.1f MiB", bytes / (1024.0 * 1024));
  return format("%.1f GiB", bytes / (1024.0 * 1024 * 1024));
}

// ISO 8601 in UTC, one word: 2023-11-14T22:13:20Z.
std::string format_time(int64_t timestamp) {
  std::time_t t = static_cast<std::time_t>(timestamp);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Rows under a header (none when header is empty), columns two spaces apart;
// right_aligned marks the numeric columns. The last column is not padded, so a long
// config or machine description does not widen the others.
void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                 const std::vector<bool>& right_aligned, const std::string& indent = "") {
  std::vector<size_t> widths(right_aligned.size(), 0);
  for (size_t c = 0; c < widths.size(); ++c) {
    if (!header.empty()) widths[c] = header[c].size();
    for (const auto& row : rows) widths[c] = std::max(widths[c], row[c].size());
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line = indent;
    for (size_t c = 0; c < row.size(); ++c) {
      bool last = c + 1 == row.size();
      std::string padding(widths[c] - row[c].size(), ' ');
      if (right_aligned[c]) {
        line += padding + row[c];
      } else {
        line += row[c] + (last ? "" : padding);
      }
      if (!last) line += "  ";
    }
    std::cout << line << "\n";
  };
  if (!header.empty()) print_row(header);
  for (const auto& row : rows) print_row(row);
}

// The FLOPs of one run of the workload, or nothing when the op does not count them or
// the workload no longer parses (a log written by another Temper).
std::optional<double> workload_flops(const std::string& workload) {
  try {
    double flops = ops::instantiate(ops::Workload::parse(workload)).flops;
    if (flops > 0) return flops;
  } catch (const UserError&) {
  }
  return std::nullopt;
}

std::string format_gflops(const std::optional<double>& flops, const std::optional<double>& seconds) {
  if (!flops || !seconds) return "-";
  return format("%.2f", *flops / *seconds * 1e-9);
}

// A log's file size, with the write-ahead log beside it when one is left.
std::string describe_file_size(const std::string& path) {
  std::string size = format_bytes(std::filesystem::file_size(path));
  std::error_code error;
  uintmax_t wal = std::filesystem::file_size(path + "-wal", error);
  if (!error && wal > 0) size += " (+ " + format_bytes(wal) + " write-ahead log)";
  return size;
}

// After a subcommand read the log: the records it skipped as unreadable, on stderr.
void warn_unreadable(const SQLiteDatabase& db) {
  std::string warning = tuning_db::unreadable_records_warning(db);
  if (!warning.empty()) std::cerr << warning << "\n";
}

// The arguments of a subcommand whose only option is --db (list, stats, import, merge).
struct DbArgs {
  std::string db_path;
  std::vector<std::string> positionals;
};

// Parses them, with between min_positionals and max_positionals (-1: no limit) of what
// usage calls positional_name; nothing when --help was given.
std::optional<DbArgs> parse_db_args(const std::vector<std::string>& args, const std::string& usage,
                                    const std::string& description, const std::string& positional_name = "",
                                    int min_positionals = 0, int max_positionals = 0) {
  DbArgs parsed;
  po::options_description desc(description);
  add_db_option(desc, parsed.db_path);
  po::variables_map vm;
  if (!parse_command_line(args, usage, desc, positional_name, min_positionals, max_positionals, parsed.positionals,
                          vm)) {
    return std::nullopt;
  }
  require_db(parsed.db_path, usage);
  return parsed;
}

int db_list(const std::vector<std::string>& args) {
  std::optional<DbArgs> parsed = parse_db_args(args, "usage: temper db list --db FILE",
                                               "temper db list: one line per workload and target in a tuning log");
  if (!parsed) return 0;
  const std::string& db_path = parsed->db_path;

  SQLiteDatabase db(db_path, OpenMode::ReadOnly);
  LogStats stats = db.stats();
  if (stats.groups.empty()) {
    std::cout << "tuning log " << db_path << " holds no workloads\n";
    return 0;
  }
  std::map<std::string, std::optional<double>> flops;
  std::vector<std::vector<std::string>> rows;
  for (const LogStats::Group& group : stats.groups) {
    if (!flops.count(group.workload.workload)) flops[group.workload.workload] = workload_flops(group.workload.workload);
    rows.push_back({group.workload.workload, group.target.empty() ? "-" : group.target, std::to_string(group.records),
                    std::to_string(group.valid_records), group.best_mean ? format_ms(*group.best_mean) : "-",
                    format_gflops(flops[group.workload.workload], group.best_mean)});
  }
  print_table({"WORKLOAD", "TARGET", "RECORDS", "VALID", "BEST_MS", "GFLOP/S"}, rows,
              {false, false, true, true, true, true});
  warn_unreadable(db);
  return 0;
}

// The log's spelling of a workload: the canonical string when it parses, else the text
// as given (a workload of an op this Temper no longer has) when the log holds it.
std::string log_workload(const std::string& text, const LogStats& stats) {
  try {
    return ops::Workload::parse(text).to_string();
  } catch (const UserError&) {
    for (const LogStats::Group& group : stats.groups) {
      if (group.workload.workload == text) return text;
    }
    throw;
  }
}

int db_best(const std::vector<std::string>& args) {
  const std::string usage = "usage: temper db best WORKLOAD --db FILE [--target T] [-k N] [--trace-out FILE]";
  std::string db_path;
  std::string target_text;
  std::string trace_out;
  int k = 5;
  po::options_description desc("temper db best: the fastest valid records of a workload");
  add_db_option(desc, db_path);
  // clang-format off
  desc.add_options()
      ("target", po::value(&target_text), "only this target (default: every target the workload has records on)")
      ("top,k", po::value(&k)->default_value(5), "how many records to show per target")
      ("trace-out", po::value(&trace_out),
       "write the best record's schedule trace (JSON) here, for `temper run WORKLOAD --trace FILE`");
  // clang-format on
  std::vector<std::string> positionals;
  po::variables_map vm;
  if (!parse_command_line(args, usage, desc, "WORKLOAD", 1, 1, positionals, vm)) return 0;
  require_db(db_path, usage);
  if (k < 1) throw UserError(str("-k must be at least 1, got ", k));

  SQLiteDatabase db(db_path, OpenMode::ReadOnly);
  LogStats stats = db.stats();
  std::string workload = log_workload(positionals[0], stats);
  std::vector<const LogStats::Group*> groups;
  for (const LogStats::Group& group : stats.groups) {
    if (group.workload.workload == workload && group.records > 0) groups.push_back(&group);
  }
  if (groups.empty()) {
    throw UserError(str("no records of ", workload, " in ", db_path, "; `temper db list --db ", db_path,
                        "` shows the workloads it holds"));
  }
  std::vector<std::string> targets;
  for (const LogStats::Group* group : groups) targets.push_back(group->target);
  if (!target_text.empty()) {
    std::string target = target_text;
    try {
      target = Target::parse(target_text).to_string();
    } catch (const UserError&) {
      // A target this Temper cannot parse may still key records written by another.
    }
    auto found = std::find_if(groups.begin(), groups.end(), [&](auto* group) { return group->target == target; });
    if (found == groups.end()) {
      throw UserError(str("no records of ", workload, " on target '", target, "' in ", db_path,
                          "; it has records on: ", join(targets, ", ")));
    }
    groups = {*found};
  }
  if (!trace_out.empty() && groups.size() > 1) {
    throw UserError(str(workload, " has records on several targets (", join(targets, ", "),
                        "): choose one with --target to write its best trace"));
  }

  std::optional<double> flops = workload_flops(workload);
  std::cout << "workload  " << workload << "\n";
  for (const LogStats::Group* group : groups) {
    std::cout << "target    " << group->target << "  (" << plural(group->records, "record") << ", "
              << group->valid_records << " valid)\n";
    // As top_k ranks them, with the number of times each schedule was measured.
    std::vector<RankedSchedule> ranked = rank_schedules(db.records_for(group->workload, group->target), k);
    std::vector<TuningRecord> top;
    for (const RankedSchedule& r : ranked) top.push_back(r.record);
    if (top.empty()) {
      std::cout
          << "  no valid records: every measurement failed or has no time (`temper db stats` counts them by error)\n";
      if (!trace_out.empty()) throw UserError(str("no valid record of ", workload, " to write a trace from"));
      continue;
    }
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < top.size(); ++i) {
      std::vector<std::string> costs;
      for (double cost : top[i].costs) costs.push_back(format_ms(cost));
      rows.push_back({std::to_string(i + 1), format_ms(top[i].mean), format_gflops(flops, top[i].mean),
                      std::to_string(ranked[i].measurements), join(costs, ","), format_time(top[i].timestamp),
                      top[i].tuner.empty() ? "-" : top[i].tuner,
                      top[i].config.is_null() ? "-" : top[i].config.dump()});
    }
    print_table({"RANK", "MEAN_MS", "GFLOP/S", "TIMES", "COSTS_MS", "TIME", "TUNER", "CONFIG"}, rows,
                {true, true, true, true, false, false, false, false}, "  ");
    if (std::any_of(ranked.begin(), ranked.end(), [](const RankedSchedule& r) { return r.measurements > 1; })) {
      std::cout << "  a schedule measured several TIMES ranks by its median record, shown\n";
    }
    std::cout << "  best measured on " << tuning_db::describe_machine(top[0].target) << "\n";
    if (!trace_out.empty()) {
      std::ofstream out(trace_out);
      if (!out || !(out << top[0].trace.dump(2) << "\n")) throw UserError(str("cannot write '", trace_out, "'"));
      std::cout << "wrote the best trace to " << trace_out << "; replay it with `temper run " << workload
                << " --target '" << group->target << "' --trace " << trace_out << "`\n";
    }
  }
  warn_unreadable(db);
  return 0;
}

int db_stats(const std::vector<std::string>& args) {
  std::optional<DbArgs> parsed =
      parse_db_args(args, "usage: temper db stats --db FILE", "temper db stats: what a tuning log holds");
  if (!parsed) return 0;
  const std::string& db_path = parsed->db_path;

  SQLiteDatabase db(db_path, OpenMode::ReadOnly);
  LogStats stats = db.stats();
  int64_t workloads_with_records = 0;
  std::string previous;
  for (const LogStats::Group& group : stats.groups) {
    if (group.records > 0 && group.workload.workload != previous) ++workloads_with_records;
    previous = group.workload.workload;
  }
  auto line = [](const std::string& label, const std::string& value) {
    std::cout << label << std::string(14 - label.size(), ' ') << value << "\n";
  };
  line("log", db_path);
  line("schema", std::to_string(stats.schema_version));
  line("file size", describe_file_size(db_path));
  line("records", std::to_string(stats.records) + " (" + std::to_string(stats.valid_records) + " valid)");
  std::vector<std::vector<std::string>> errors;
  for (const auto& [kind, count] : stats.records_by_error) errors.push_back({kind, std::to_string(count)});
  print_table({}, errors, {false, true}, "  ");
  line("workloads", std::to_string(stats.workloads) + " (" + std::to_string(workloads_with_records) + " with records)");
  line("targets", std::to_string(stats.targets.size()));
  std::vector<std::vector<std::string>> targets;
  for (const auto& [target, records] : stats.targets) {
    targets.push_back({target.target, plural(records, "record"), tuning_db::describe_machine(target)});
  }
  print_table({}, targets, {false, true, false}, "  ");
  if (stats.first_timestamp) {
    line("first record", format_time(*stats.first_timestamp));
    line("last record", format_time(*stats.last_timestamp));
  }
  warn_unreadable(db);
  return 0;
}

// "12 records and 3 model choices", or "12 records" where there is no choice.
std::string describe(const tuning_db::JsonLinesCount& count) {
  std::string text = plural(count.records, "record");
  if (count.model_choices > 0) text += " and " + plural(count.model_choices, "model choice");
  return text;
}

int db_export(const std::vector<std::string>& args) {
  const std::string usage = "usage: temper db export --db FILE [-o OUT.jsonl]";
  std::string db_path;
  std::string output;
  po::options_description desc("temper db export: every record of a tuning log as JSON lines");
  add_db_option(desc, db_path);
  desc.add_options()("output,o", po::value(&output), "write to this file (default: stdout)");
  std::vector<std::string> positionals;
  po::variables_map vm;
  if (!parse_command_line(args, usage, desc, "", 0, 0, positionals, vm)) return 0;
  require_db(db_path, usage);

  SQLiteDatabase db(db_path, OpenMode::ReadOnly);
  if (output.empty() || output == "-") {
    tuning_db::JsonLinesCount count = tuning_db::export_json_lines(db, std::cout);
    std::cerr << "exported " << describe(count) << " from " << db_path << "\n";
  } else {
    tuning_db::JsonLinesCount count = tuning_db::export_json_lines(db, output);
    std::cout << "exported " << describe(count) << " from " << db_path << " to " << output << "\n";
  }
  warn_unreadable(db);
  return 0;
}

// What import and merge check beyond a record's plausibility on any machine: a record of
// this machine against its measured FMA peak (measured once, when the first such record
// comes), and that each record's schedule still replays.
tuning_db::RecordCheck import_check() {
  auto here = std::make_shared<tuning_db::TargetInfo>(tuning_db::host_target_info(Target::parse("llvm")));
  auto peak = std::make_shared<std::optional<double>>();
  auto peak_flops = [here, peak] {
    if (!*peak) *peak = measure::measure_fma_peak(std::max(1, here->cores)).gflops * 1e9;
    return **peak;
  };
  return [here, peak_flops](const tuning_db::TuningRecord& record) {
    std::string why = tuning_db::faster_than_this_machine(record, *here, peak_flops);
    return why.empty() ? search::record_does_not_replay(record) : why;
  };
}

void print_merge_result(const tuning_db::MergeResult& result, const std::string& db_path) {
  std::cout << "added " << plural(result.added, "record") << " to " << db_path << ", skipped " << result.skipped
            << " already present\n";
  if (result.refused.empty()) return;
  constexpr size_t kNamed = 5;
  std::cerr << "warning: refused " << plural(static_cast<int64_t>(result.refused.size()), "record")
            << " (not plausible measurements, which a build would apply, or schedules that no longer replay on "
               "their workload, which it would skip):\n";
  for (size_t i = 0; i < std::min(kNamed, result.refused.size()); ++i) std::cerr << "  " << result.refused[i] << "\n";
  if (result.refused.size() > kNamed) std::cerr << "  and " << result.refused.size() - kNamed << " more\n";
}

// Adds the model choices `into` does not hold already, and says how many where there were any.
void print_added_choices(tuning_db::Database& into, const std::vector<tuning_db::ModelChoice>& choices) {
  int64_t added = tuning_db::add_new_model_choices(into, choices);
  if (!choices.empty()) std::cout << "added " << plural(added, "model choice") << "\n";
}

int db_import(const std::vector<std::string>& args) {
  std::optional<DbArgs> parsed = parse_db_args(
      args, "usage: temper db import --db FILE IN.jsonl [IN2.jsonl ...]",
      "temper db import: add the records of JSON-lines files to a tuning log (created if missing), skipping those "
      "already in it; a malformed line stops the import before anything is added",
      "IN.jsonl", 1, -1);
  if (!parsed) return 0;
  const std::string& db_path = parsed->db_path;
  const std::vector<std::string>& inputs = parsed->positionals;

  // Every file is read before the log is opened, so a bad line leaves it as it was.
  tuning_db::MemoryDatabase staged;
  for (const std::string& input : inputs) {
    tuning_db::JsonLinesCount count = tuning_db::import_json_lines(staged, input);
    std::cout << "read " << describe(count) << " from " << input << "\n";
  }
  SQLiteDatabase db(db_path, OpenMode::Create);
  print_merge_result(tuning_db::add_new_records(db, staged.all_records(), import_check()), db_path);
  print_added_choices(db, staged.model_choices());
  return 0;
}

int db_merge(const std::vector<std::string>& args) {
  std::optional<DbArgs> parsed = parse_db_args(
      args, "usage: temper db merge --db FILE OTHER.db [OTHER2.db ...]",
      "temper db merge: add the records of other tuning logs (opened read-only) to --db (created if missing), "
      "skipping those already in it",
      "OTHER.db", 1, -1);
  if (!parsed) return 0;
  const std::string& db_path = parsed->db_path;
  const std::vector<std::string>& sources = parsed->positionals;

  // Every source is read in full before the log is opened: one that cannot be read adds
  // nothing from any.
  std::vector<TuningRecord> records;
  std::vector<tuning_db::MachineProbe> probes;
  std::vector<tuning_db::SweepResult> sweeps;
  std::vector<tuning_db::ModelChoice> choices;
  for (const std::string& source : sources) {
    SQLiteDatabase source_db(source, OpenMode::ReadOnly);
    std::vector<TuningRecord> read = source_db.all_records();
    std::cout << "read " << plural(static_cast<int64_t>(read.size()), "record") << " from " << source << "\n";
    warn_unreadable(source_db);
    records.insert(records.end(), read.begin(), read.end());
    std::vector<tuning_db::MachineProbe> read_probes = source_db.probes();
    probes.insert(probes.end(), read_probes.begin(), read_probes.end());
    std::vector<tuning_db::SweepResult> read_sweeps = source_db.sweep_results();
    sweeps.insert(sweeps.end(), read_sweeps.begin(), read_sweeps.end());
    std::vector<tuning_db::ModelChoice> read_choices = source_db.model_choices();
    choices.insert(choices.end(), read_choices.begin(), read_choices.end());
  }
  SQLiteDatabase db(db_path, OpenMode::Create);
  print_merge_result(tuning_db::add_new_records(db, records, import_check()), db_path);
  int64_t added_probes = tuning_db::add_new_probes(db, probes);
  if (!probes.empty()) std::cout << "added " << plural(added_probes, "machine probe") << "\n";
  int64_t added_sweeps = tuning_db::add_new_sweep_results(db, sweeps);
  if (!sweeps.empty()) std::cout << "added " << plural(added_sweeps, "sweep result") << "\n";
  print_added_choices(db, choices);
  return 0;
}

int db_prune(const std::vector<std::string>& args) {
  const std::string usage = "usage: temper db prune --db FILE --keep N [--drop-errors]";
  std::string db_path;
  int keep = 0;
  bool drop_errors = false;
  po::options_description desc(
      "temper db prune: keep the fastest valid records of each workload and target, delete the others, compact the "
      "file");
  add_db_option(desc, db_path);
  // clang-format off
  desc.add_options()
      ("keep", po::value(&keep),
       "how many of the fastest valid records to keep per workload and target (required; a resumed search may "
       "measure a deleted schedule again)")
      ("drop-errors", po::bool_switch(&drop_errors), "also delete the records of failed measurements");
  // clang-format on
  std::vector<std::string> positionals;
  po::variables_map vm;
  if (!parse_command_line(args, usage, desc, "", 0, 0, positionals, vm)) return 0;
  require_db(db_path, usage);
  if (!vm.count("keep")) {
    throw UserError(
        str("missing --keep N: prune deletes records, so say how many of the fastest valid records of "
            "each workload and target to keep\n",
            usage));
  }
  if (keep < 0) throw UserError(str("--keep must be 0 or more, got ", keep));

  SQLiteDatabase db(db_path, OpenMode::Existing);
  std::string size_before = describe_file_size(db_path);
  tuning_db::PruneResult result = db.prune(keep, drop_errors);
  warn_unreadable(db);
  if (result.removed == 0) {
    std::cout << "nothing to remove from " << db_path << " (" << plural(result.kept, "record") << ")\n";
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& group : result.groups) {
    rows.push_back({group.workload.workload, group.target, std::to_string(group.kept),
                    std::to_string(group.removed_valid), std::to_string(group.removed_failed)});
  }
  print_table({"WORKLOAD", "TARGET", "KEPT", "REMOVED_VALID", "REMOVED_FAILED"}, rows,
              {false, false, true, true, true});
  std::cout << "removed " << plural(result.removed, "record") << ", kept " << result.kept << "; " << db_path << ": "
            << size_before << " -> " << describe_file_size(db_path) << "\n";
  return 0;
}

int db_probe(const std::vector<std::string>& args) {
  const std::string usage = "usage: temper db probe --db FILE [--threads N] [--target T]";
  std::string db_path;
  int threads = 0;
  std::string target_text = "llvm -mcpu=native";
  po::options_description desc(
      "temper db probe: measure this machine's fp32 FMA peak, int8 dot-product peak and memory bandwidth (a few "
      "seconds) and keep them in the log beside its records, for `temper report`'s roofline");
  add_db_option(desc, db_path);
  // clang-format off
  desc.add_options()
      ("threads", po::value(&threads), "threads to measure on together (default: one per core)")
      ("target", po::value(&target_text), "the CPU target whose records the probe goes with (default llvm -mcpu=native)");
  // clang-format on
  std::vector<std::string> positionals;
  po::variables_map vm;
  if (!parse_command_line(args, usage, desc, "", 0, 0, positionals, vm)) return 0;
  require_db(db_path, usage);
  if (threads < 0) throw UserError(str("--threads must be 0 (one per core) or more, got ", threads));
  Target target = Target::parse(target_text);
  check_probe_target(target);  // before the log is created
  SQLiteDatabase db(db_path, OpenMode::Create);
  probe_into_log(db, target, threads, std::cout);
  return 0;
}

}  // namespace

int cmd_db(const std::vector<std::string>& args) {
  if (args.empty()) throw UserError(str("missing subcommand: use one of ", kSubcommands, "\n", kDbUsage));
  const std::string& subcommand = args[0];
  if (subcommand == "--help" || subcommand == "-h" || subcommand == "help") {
    std::cout << kDbUsage;
    return 0;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (subcommand == "list") return db_list(rest);
  if (subcommand == "best") return db_best(rest);
  if (subcommand == "stats") return db_stats(rest);
  if (subcommand == "export") return db_export(rest);
  if (subcommand == "import") return db_import(rest);
  if (subcommand == "merge") return db_merge(rest);
  if (subcommand == "prune") return db_prune(rest);
  if (subcommand == "probe") return db_probe(rest);
  throw UserError(str("unknown db subcommand '", subcommand, "'; use one of ", kSubcommands));
}

}  // namespace temper::cli
