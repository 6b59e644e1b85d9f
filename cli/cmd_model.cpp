// temper model: build a cost model offline from a tuning log, and judge one against it.
//
// Both subcommands read the log's records of one op (--op) or of every op, on one target,
// re-apply each record's config through the op's template and featurize the lowered code
// (search/transfer.h's collect_samples): a record whose workload or config this Temper's
// templates no longer take is skipped and counted. The log is opened read-only: a missing
// file is an error, never a new log. Records compare only within their workload, so
// accuracy is reported per workload and over all of them.
#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <optional>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "compiler/ir/error.h"
#include "compiler/ir/text.h"
#include "compiler/ops/op_table.h"
#include "compiler/target/target.h"
#include "cost_model/cost_model.h"
#include "cost_model/metrics.h"
#include "search/transfer.h"
#include "tuning_db/sqlite_database.h"

namespace po = boost::program_options;

namespace temper::cli {
namespace {

const char* kModelUsage =
    "usage: temper model SUBCOMMAND --db FILE [options]\n"
    "\n"
    "subcommands:\n"
    "  train --out FILE            fit an XGBoost cost model on the log's records [--op OP] [--target T]\n"
    "                              [--objective rank|reg] [--rounds N]\n"
    "  eval --model FILE           how well a model ranks the log's records: pairwise accuracy and top-k\n"
    "                              recall per workload [--op OP] [--target T] [--top-k K]\n"
    "\n"
    "`temper model SUBCOMMAND --help` for a subcommand's options.\n";

const char* kSubcommands = "train, eval";

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Options every subcommand takes: which log, and which of its records.
struct LogSelection {
  std::string db_path;
  std::string op;  // "" for every op
  std::string target_text;
  int max_records = 20000;
};

void add_selection_options(po::options_description& desc, LogSelection& selection) {
  // clang-format off
  desc.add_options()
      ("db", po::value(&selection.db_path), "the tuning log (an SQLite file; opened read-only)")
      ("op", po::value(&selection.op), "only the records of this op (default: every op in the log)")
      ("target", po::value(&selection.target_text)->default_value("llvm -mcpu=native"),
       "the target string the records were tuned for")
      ("max-records", po::value(&selection.max_records)->default_value(20000),
       "read at most this many records per op, the newest");
  // clang-format on
}

// The records of a selection, featurized, with what was read from where.
struct LogSamples {
  search::TransferSet set;
  std::vector<std::string> ops;  // the ops that gave at least one sample
  std::string target;            // as the log keys it
  std::string what;              // "matmul on 'llvm -mcpu=native'", for messages
};

// The selection's target, once its options are checked.
Target check_selection(const LogSelection& selection, const std::string& usage) {
  if (selection.db_path.empty()) throw UserError(str("missing --db FILE (the tuning log)\n", usage));
  if (selection.max_records < 1) throw UserError(str("--max-records must be at least 1, got ", selection.max_records));
  Target target = Target::parse(selection.target_text);
  if (!selection.op.empty()) ops::find_op_spec(selection.op);  // UserError naming the known ops
  return target;
}

LogSamples read_samples(const tuning_db::SQLiteDatabase& db, const LogSelection& selection, const Target& target) {
  LogSamples out;
  out.target = target.to_string();
  out.what = str(selection.op.empty() ? "any op" : selection.op, " on '", out.target, "'");
  std::vector<std::string> ops;
  if (!selection.op.empty()) {
    ops.push_back(selection.op);
  } else {
    for (const tuning_db::WorkloadKey& key : db.workloads()) {
      if (std::find(ops.begin(), ops.end(), key.op) == ops.end()) ops.push_back(key.op);
    }
  }
  for (const std::string& op : ops) {
    search::TransferSet set = search::collect_samples(db, op, target, nullptr, selection.max_records);
    if (!set.samples.empty()) out.ops.push_back(op);
    out.set.samples.insert(out.set.samples.end(), std::make_move_iterator(set.samples.begin()),
                           std::make_move_iterator(set.samples.end()));
    out.set.workloads += set.workloads;
    out.set.records_skipped += set.records_skipped;
    out.set.failed += set.failed;
  }

  if (out.set.samples.empty() && out.set.records_skipped == 0) {
    // Say where the records are, when they are on another target.
    std::vector<std::string> targets;
    for (const tuning_db::LogStats::Group& group : db.stats().groups) {
      bool selected = selection.op.empty() || group.workload.op == selection.op;
      std::string quoted = "'" + group.target + "'";
      if (selected && group.records > 0 && std::find(targets.begin(), targets.end(), quoted) == targets.end()) {
        targets.push_back(quoted);
      }
    }
    std::string where = targets.empty() ? str("; tune first: temper tune WORKLOAD --db ", selection.db_path)
                                        : str("; it has records of it on: ", join(targets, ", "), " (use --target)");
    throw UserError(str("the log ", selection.db_path, " has no records of ", out.what, where));
  }
  if (out.set.samples.empty()) {
    throw UserError(str("none of the ", plural(out.set.records_skipped, "record"), " of ", out.what, " in ",
                        selection.db_path,
                        " could be featurized: their workloads, configs or traces no longer fit this version of Temper"));
  }
  return out;
}

void print_samples(const LogSelection& selection, const LogSamples& samples) {
  std::printf("log        %s\n", selection.db_path.c_str());
  std::printf("target     %s\n", samples.target.c_str());
  std::printf("samples    %zu from %s of %s (%d failed, %d skipped)\n", samples.set.samples.size(),
              plural(samples.set.workloads, "workload").c_str(), join(samples.ops, ", ").c_str(), samples.set.failed,
              samples.set.records_skipped);
}

// UserError now, rather than after the work, when path's folder does not exist.
void check_output_folder(const std::string& path, const std::string& flag) {
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (!folder.empty() && !std::filesystem::is_directory(folder)) {
    throw UserError(str("cannot write ", flag, " ", path, ": no folder ", folder.string()));
  }
}

int model_train(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: temper model train --db FILE --out MODEL [--op OP] [--target T] [--objective rank|reg] [--rounds N]";
  LogSelection selection;
  std::string out_path;
  cost_model::ModelOptions options;
  po::options_description desc(
      "temper model train: fit an XGBoost cost model on every record of a tuning log (records compare within "
      "their workload; failed ones teach 'slow'), and save it for `temper tune --tuner xgb --model FILE`");
  add_selection_options(desc, selection);
  // clang-format off
  desc.add_options()
      ("out", po::value(&out_path), "where to save the model (JSON)")
      ("objective", po::value(&options.objective)->default_value("rank"),
       "rank (pairwise ranking within each workload) or reg (regression on the relative speed)")
      ("rounds", po::value(&options.rounds)->default_value(100), "boosting rounds")
      ("seed", po::value(&options.seed)->default_value(0), "XGBoost's random seed");
  // clang-format on
  std::vector<std::string> positionals;
  po::variables_map vm;
  if (!parse_command_line(args, usage, desc, "", 0, 0, positionals, vm)) return 0;
  if (selection.db_path.empty()) throw UserError(str("missing --db FILE (the tuning log)\n", usage));
  if (out_path.empty()) throw UserError(str("missing --out FILE: where to save the model\n", usage));
  if (options.rounds < 1) throw UserError(str("--rounds must be at least 1, got ", options.rounds));
  check_output_folder(out_path, "--out");
  Target target = check_selection(selection, usage);
  // An unknown objective is refused before the log is read.
  std::unique_ptr<cost_model::CostModel> model = cost_model::make_cost_model("xgb", options);
  tuning_db::SQLiteDatabase db(selection.db_path, tuning_db::OpenMode::ReadOnly);

  Clock::time_point start = Clock::now();
  LogSamples samples = read_samples(db, selection, target);
  double featurize_s = seconds_since(start);
  if (samples.set.failed == static_cast<int>(samples.set.samples.size())) {
    throw UserError(str("all ", plural(samples.set.failed, "record"), " of ", samples.what, " in ", selection.db_path,
                        " failed: nothing to learn from"));
  }
  print_samples(selection, samples);
  start = Clock::now();
  model->update(samples.set.samples);
  double fit_s = seconds_since(start);
  if (!model->trained()) {
    throw UserError(str("no workload of ", samples.what, " in ", selection.db_path,
                        " has a successful record the model could learn from"));
  }
  model->save(out_path);
  std::printf("trained    xgb, objective %s, %d rounds, in %.2f s (featurizing %.2f s)\n", options.objective.c_str(),
              options.rounds, fit_s, featurize_s);
  std::printf("saved      %s (judge it on another log: temper model eval --db LOG --model %s)\n", out_path.c_str(),
              out_path.c_str());
  return 0;
}

std::string format_metric(double value) {
  if (std::isnan(value)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", value);
  return buf;
}

// The workload part of a sample group ("<workload> @ <target>").
std::string group_workload(const std::string& group, const std::string& target) {
  const std::string suffix = " @ " + target;
  if (group.size() > suffix.size() && group.compare(group.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return group.substr(0, group.size() - suffix.size());
  }
  return group;
}

int model_eval(const std::vector<std::string>& args) {
  const std::string usage = "usage: temper model eval --db FILE --model MODEL [--op OP] [--target T] [--top-k K]";
  LogSelection selection;
  std::string model_path;
  int k = 5;
  po::options_description desc(
      "temper model eval: score a tuning log's records with a saved model and compare with the measured times. "
      "pairwise: the share of pairs of records of one workload that the model orders like the measurements; "
      "top-k: the share of the k fastest records found among the k best scored. Judge a model on workloads it "
      "was not trained on: on its own training records it looks better than it is");
  add_selection_options(desc, selection);
  // clang-format off
  desc.add_options()
      ("model", po::value(&model_path), "the saved model (temper model train --out, or temper tune --save-model)")
      ("top-k", po::value(&k)->default_value(5), "k of the top-k recall");
  // clang-format on
  std::vector<std::string> positionals;
  po::variables_map vm;
  if (!parse_command_line(args, usage, desc, "", 0, 0, positionals, vm)) return 0;
  if (selection.db_path.empty()) throw UserError(str("missing --db FILE (the tuning log)\n", usage));
  if (model_path.empty()) throw UserError(str("missing --model FILE: the model to judge\n", usage));
  if (k < 1) throw UserError(str("--top-k must be at least 1, got ", k));
  Target target = check_selection(selection, usage);
  std::unique_ptr<cost_model::CostModel> model = cost_model::load_cost_model(model_path);
  tuning_db::SQLiteDatabase db(selection.db_path, tuning_db::OpenMode::ReadOnly);
  LogSamples samples = read_samples(db, selection, target);
  std::printf("model      %s (%s, trained on %s)\n", model_path.c_str(), model->kind().c_str(),
              plural(model->num_samples(), "sample").c_str());
  print_samples(selection, samples);
  if (!model->trained()) {
    std::printf("note       the model has learned from no successful measurement: it scores every record alike\n");
  }

  const std::vector<cost_model::Sample>& all = samples.set.samples;
  std::vector<std::vector<float>> rows;
  std::vector<double> costs;
  std::vector<std::string> groups;
  for (const cost_model::Sample& s : all) {
    rows.push_back(s.features);
    costs.push_back(s.cost);
    groups.push_back(s.group);
  }
  std::vector<double> scores = model->predict(rows);

  // Per workload, in the order the log first committed them.
  std::vector<std::string> order;
  std::map<std::string, std::vector<size_t>> members;
  for (size_t i = 0; i < all.size(); ++i) {
    if (!members.count(groups[i])) order.push_back(groups[i]);
    members[groups[i]].push_back(i);
  }
  std::vector<std::vector<std::string>> table;
  const std::string top_header = "TOP-" + std::to_string(k);
  table.push_back({"WORKLOAD", "RECORDS", "VALID", "PAIRWISE", top_header});
  int64_t valid_total = 0;
  for (const std::string& group : order) {
    std::vector<double> group_scores, group_costs;
    for (size_t i : members[group]) {
      group_scores.push_back(scores[i]);
      group_costs.push_back(costs[i]);
    }
    std::vector<std::string> same(group_costs.size(), group);
    int64_t valid = 0;
    for (double c : group_costs) valid += cost_model::is_failed_cost(c) ? 0 : 1;
    valid_total += valid;
    table.push_back({group_workload(group, samples.target), std::to_string(group_costs.size()), std::to_string(valid),
                     format_metric(cost_model::pairwise_accuracy(group_scores, group_costs, same)),
                     format_metric(cost_model::top_k_recall(group_scores, group_costs, same, k))});
  }
  table.push_back({"overall", std::to_string(all.size()), std::to_string(valid_total),
                   format_metric(cost_model::pairwise_accuracy(scores, costs, groups)),
                   format_metric(cost_model::top_k_recall(scores, costs, groups, k))});

  std::vector<size_t> widths(table[0].size(), 0);
  for (const auto& row : table) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : table) {
    std::string line = row[0] + std::string(widths[0] - row[0].size(), ' ');
    for (size_t c = 1; c < row.size(); ++c) line += "  " + std::string(widths[c] - row[c].size(), ' ') + row[c];
    std::cout << line << "\n";
  }
  return 0;
}

}  // namespace

int cmd_model(const std::vector<std::string>& args) {
  if (args.empty()) throw UserError(str("missing subcommand: use one of ", kSubcommands, "\n", kModelUsage));
  const std::string& subcommand = args[0];
  if (subcommand == "--help" || subcommand == "-h" || subcommand == "help") {
    std::cout << kModelUsage;
    return 0;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (subcommand == "train") return model_train(rest);
  if (subcommand == "eval") return model_eval(rest);
  throw UserError(str("unknown model subcommand '", subcommand, "'; use one of ", kSubcommands));
}

}  // namespace temper::cli
