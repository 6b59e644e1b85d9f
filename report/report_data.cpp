#include "report/report_data.h"

#include <algorithm>
#include <ctime>
#include <iterator>
#include <map>
#include <sstream>
#include <tuple>

#include "compiler/ir/error.h"
#include "compiler/ops/workload.h"
#include "tuning_db/machine_probe.h"
#include "tuning_db/schedule_ranking.h"

namespace temper::report {
namespace {

using nlohmann::json;
using tuning_db::TargetInfo;
using tuning_db::TuningRecord;

constexpr int kSpreadSchedules = 20;

std::string utc_date(int64_t timestamp, const char* format) {
  std::time_t t = static_cast<std::time_t>(timestamp);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

// The flags of cpu_features that decide the code a CPU target gets.
std::string simd_flags(const std::string& cpu_features) {
  static const char* kFlags[] = {"avx512f", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile",
                                 "avx2",    "fma",         "avx",         "asimd",       "sve"};
  std::istringstream in(cpu_features);
  std::vector<std::string> present{std::istream_iterator<std::string>(in), {}};
  std::string out;
  for (const char* flag : kFlags) {
    if (std::find(present.begin(), present.end(), flag) != present.end()) out += (out.empty() ? "" : " ") + std::string(flag);
  }
  return out;
}

std::string machine_label(const TargetInfo& t) {
  std::string what = !t.device.empty() ? t.device : (t.cpu_model.empty() ? "unknown CPU" : t.cpu_model);
  return str(what, ", ", t.cores, t.cores == 1 ? " core" : " cores", " (", t.target, ")");
}

// The search a record came from, which the curves and the spread are drawn by: the
// search kind with its tuner, "template (ga)", "auto-scheduler (xgb)"; the kind alone
// for a record that does not name its tuner (a log of a Temper before schema 6).
std::string search_kind(const TuningRecord& r) {
  std::string kind = r.config.is_null() ? "auto-scheduler" : "template";
  return r.tuner.empty() ? kind : kind + " (" + r.tuner + ")";
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct WorkloadCost {
  double flops = 0;
  double bytes = 0;
};

WorkloadCost cost_of(const std::string& workload) {
  WorkloadCost cost;
  try {
    ops::OpInstance op = ops::instantiate(ops::Workload::parse(workload));
    cost.flops = op.flops;
    auto add = [&](const te::Tensor& t) {
      double elements = 1;
      for (const Expr& extent : t.shape()) {
        const int64_t* value = as_const_int(extent);
        elements *= value ? static_cast<double>(*value) : 0.0;
      }
      cost.bytes += elements * t.dtype().bytes();
    };
    for (const te::Tensor& t : op.inputs) add(t);
    for (const te::Tensor& t : op.outputs) add(t);
  } catch (const UserError&) {
    // A workload this Temper no longer knows: drawn without FLOPs.
  }
  return cost;
}

json result_of(const std::vector<TuningRecord>& records, int machine, double flops) {
  json r;
  r["machine"] = machine;
  r["records"] = records.size();
  auto gflops = [&](double seconds) { return flops > 0 && seconds > 0 ? flops / seconds / 1e9 : 0.0; };
  int64_t valid = 0;
  std::map<std::string, int64_t> failures;
  json curve = json::object();
  std::map<std::string, std::pair<int64_t, double>> progress;  // kind: trials, best GFLOP/s
  int64_t start = records.empty() ? 0 : records.front().timestamp;
  const TuningRecord* first_valid = nullptr;
  for (const TuningRecord& rec : records) {
    const std::string kind = search_kind(rec);
    auto& [trials, best] = progress[kind];
    ++trials;
    if (!rec.is_valid()) {
      ++failures[tuning_db::error_kind_name(rec.error)];
      continue;
    }
    ++valid;
    if (!first_valid) first_valid = &rec;
    double g = gflops(rec.mean);
    // One point where the best improves: the page draws the curve stepped.
    if (g > best || !curve.contains(kind)) {
      best = std::max(best, g);
      curve[kind].push_back({trials, static_cast<double>(rec.timestamp - start), best});
    }
  }
  // Each line runs to its last trial.
  for (const auto& [kind, state] : progress) {
    if (!curve.contains(kind)) continue;
    json& points = curve[kind];
    if (points.back()[0].get<int64_t>() == state.first) continue;
    int64_t last = 0;
    for (const TuningRecord& rec : records) {
      if (search_kind(rec) == kind) last = rec.timestamp;
    }
    points.push_back({state.first, static_cast<double>(last - start), state.second});
  }
  r["valid"] = valid;
  r["failures"] = failures;
  r["curve"] = curve;
  std::vector<tuning_db::RankedSchedule> ranked = tuning_db::rank_schedules(records, kSpreadSchedules);
  json spread = json::array();
  for (size_t i = 0; i < ranked.size(); ++i) {
    const std::vector<double>& costs = ranked[i].record.costs;
    if (costs.empty()) continue;
    auto [lo, hi] = std::minmax_element(costs.begin(), costs.end());
    spread.push_back({{"rank", i + 1},
                      {"min_ms", *lo * 1e3},
                      {"median_ms", median_of(costs) * 1e3},
                      {"max_ms", *hi * 1e3},
                      {"repeats", costs.size()},
                      {"kind", search_kind(ranked[i].record)}});
  }
  r["spread"] = spread;
  if (!ranked.empty()) {
    const TuningRecord& best = ranked[0].record;
    r["best_ms"] = best.mean * 1e3;
    r["median_ms"] = median_of(best.costs) * 1e3;
    r["best_gflops"] = gflops(best.mean);
  } else {
    r["best_ms"] = nullptr;
    r["median_ms"] = nullptr;
    r["best_gflops"] = nullptr;
  }
  if (first_valid) {
    r["first_ms"] = first_valid->mean * 1e3;
    r["first_gflops"] = gflops(first_valid->mean);
  } else {
    r["first_ms"] = nullptr;
    r["first_gflops"] = nullptr;
  }
  return r;
}

// Per sweep, entry and machine, the contenders of its latest run, in the order timed.
template <typename MachineOf>
json sweeps_of(const std::vector<tuning_db::SweepResult>& results, MachineOf& machine_of) {
  std::map<std::tuple<std::string, std::string, int>, int64_t> latest;
  for (const tuning_db::SweepResult& r : results) {
    int64_t& t = latest[{r.sweep, r.entry, machine_of(r.machine)}];
    t = std::max(t, r.timestamp);
  }
  json sweeps = json::array();
  std::map<std::tuple<std::string, std::string, int>, size_t> index;
  for (const tuning_db::SweepResult& r : results) {
    std::tuple<std::string, std::string, int> key{r.sweep, r.entry, machine_of(r.machine)};
    if (r.timestamp != latest[key]) continue;
    if (!index.count(key)) {
      index[key] = sweeps.size();
      sweeps.push_back({{"sweep", r.sweep},
                        {"entry", r.entry},
                        {"entry_kind", r.entry_kind},
                        {"machine", std::get<2>(key)},
                        {"date", utc_date(r.timestamp, "%Y-%m-%d %H:%M")},
                        {"flops", r.flops},
                        {"threads", r.threads},
                        {"contenders", json::array()}});
    }
    json contender = {{"contender", r.contender},     {"status", r.status},  {"why", r.why},
                      {"description", r.description}, {"seconds", r.seconds}, {"rounds", r.round_seconds}};
    if (!r.details.empty()) {
      json details = json::parse(r.details, nullptr, false);
      if (!details.is_discarded()) contender["details"] = std::move(details);
    }
    sweeps[index[key]]["contenders"].push_back(std::move(contender));
  }
  return sweeps;
}

}  // namespace

json report_data(const tuning_db::Database& log, const ReportOptions& options) {
  std::vector<TuningRecord> records = log.all_records();
  std::vector<tuning_db::MachineProbe> probes = log.probes();

  // Machines in the order their first record (or probe) appears.
  std::vector<TargetInfo> machines;
  auto machine_of = [&](const TargetInfo& t) {
    for (size_t m = 0; m < machines.size(); ++m) {
      if (machines[m].target == t.target && tuning_db::same_machine(machines[m], t)) return static_cast<int>(m);
    }
    machines.push_back(t);
    return static_cast<int>(machines.size()) - 1;
  };
  // Records by workload (in the log's order of workloads), then machine, in commit order.
  std::vector<std::string> workload_order;
  std::map<std::string, std::string> op_of;
  std::map<std::string, std::map<int, std::vector<TuningRecord>>> grouped;
  for (TuningRecord& r : records) {
    int m = machine_of(r.target);
    if (!grouped.count(r.workload.workload)) {
      workload_order.push_back(r.workload.workload);
      op_of[r.workload.workload] = r.workload.op;
    }
    grouped[r.workload.workload][m].push_back(std::move(r));
  }
  for (const tuning_db::MachineProbe& p : probes) machine_of(p.machine);
  std::vector<tuning_db::SweepResult> sweep_results = log.sweep_results();
  for (const tuning_db::SweepResult& r : sweep_results) machine_of(r.machine);

  json data;
  data["title"] = options.title;
  data["log"] = options.log_path;
  data["generated"] = utc_date(tuning_db::now_timestamp(), "%Y-%m-%d %H:%M UTC");
  data["temper_version"] = tuning_db::temper_version();
  data["machines"] = json::array();
  for (size_t m = 0; m < machines.size(); ++m) {
    const TargetInfo& t = machines[m];
    json machine = {{"id", m},
                    {"label", machine_label(t)},
                    {"target", t.target},
                    {"cpu_model", t.cpu_model},
                    {"cores", t.cores},
                    {"compiler", t.compiler},
                    {"device", t.device},
                    {"simd", simd_flags(t.cpu_features)}};
    const tuning_db::MachineProbe* probe = tuning_db::latest_probe_of(probes, t);
    if (probe) {
      machine["probe"] = {{"fp32_gflops", probe->fp32_gflops},
                          {"int8_gops", probe->int8_gops},
                          {"bandwidth_gbs", probe->bandwidth_gbs},
                          {"threads", probe->threads},
                          {"date", utc_date(probe->timestamp, "%Y-%m-%d")}};
    } else {
      machine["probe"] = nullptr;
    }
    data["machines"].push_back(machine);
  }

  data["workloads"] = json::array();
  std::map<std::pair<int, std::string>, int64_t> failures;
  for (size_t w = 0; w < workload_order.size(); ++w) {
    const std::string& name = workload_order[w];
    WorkloadCost cost = cost_of(name);
    json workload = {{"id", w}, {"workload", name}, {"op", op_of[name]}, {"flops", cost.flops}, {"bytes", cost.bytes}};
    workload["results"] = json::array();
    for (const auto& [m, machine_records] : grouped[name]) {
      json result = result_of(machine_records, m, cost.flops);
      for (const auto& [kind, count] : result["failures"].items()) failures[{m, kind}] += count.get<int64_t>();
      workload["results"].push_back(std::move(result));
    }
    data["workloads"].push_back(std::move(workload));
  }
  data["sweeps"] = sweeps_of(sweep_results, machine_of);
  data["failures"] = json::array();
  for (const auto& [key, count] : failures) {
    data["failures"].push_back({{"machine", key.first}, {"kind", key.second}, {"count", count}});
  }
  return data;
}

}  // namespace temper::report
