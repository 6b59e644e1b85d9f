// The learned cost model judged by what a user pays for: trials to a good schedule.
//
// 1. Ground truth. Every valid config of each workload's space is measured once, for
//    real, through search::tune (a grid walk: the same builder, the same runner with its
//    check against the reference, the same log records as `temper tune`), into a SQLite
//    tuning log (--table-db). A rerun reuses the records already there and measures only
//    what is missing, so the expensive part runs once. A space of more than
//    kMaxTableConfigs valid configs is sampled at random instead (then "best" means the
//    best of the sample), and a config a search proposes outside the sample is measured
//    when it is proposed and added to the table.
// 2. Search efficiency, replayed on the table: each tuner -- xgb (make_tuner("xgb"): a
//    ModelTuner with an XGBoost ranking model), ga, random, and as a control a ModelTuner
//    whose model scores at random -- runs with several seeds and the same budget, driven
//    like search::tune drives it (next_batch of 8, the costs looked up in the table, +inf
//    for a failed config, update) but without the tune loop's default-config-first step,
//    so every tuner starts from nothing. Per workload, the threshold is 95% of the best
//    GFLOP/s any run found; a run's score is the trials it took to reach it (budget + 1
//    when it never did: printed ">budget", which understates random's count and so
//    flatters no model). Bar: the median xgb run needs at most 0.5x random's trials,
//    judged on the median over workloads of median(xgb) / median(random) and on the
//    median over all runs (a median of an even count is the mean of the middle two).
// 3. Model quality on held-out records: an xgb model (rank objective, and reg for
//    comparison) trained on a random half of a workload's table predicts the other half
//    (pairwise accuracy, top-8 and top-32 recall, averaged over the seeds' splits); and
//    transfer: a model trained on the other workloads of the same op predicts this one.
//    Bar: pairwise accuracy at least 0.8 on held-out records.
// 4. Speed: feature extraction (apply + lower + features, serial and OpenMP batch, and
//    candidate_features alone on pre-lowered functions), one fit on N rows, predict on
//    1000 rows, and the xgb tuner's next_batch.
//
// The figures are timings of a shared machine: run it idle (it waits for an idle CPU
// before measuring the table; the replay and model sections time CPU work only).
//
//   cost_model [--trials N] [--seeds N] [--table-db PATH] [--workloads a,b,...] [--quick]
//
// Defaults: 160 trials, 9 seeds, bench_logs/cost_model_table.db, the six workloads of
// kWorkloads. --workloads takes labels of that list separated by ',', or workload strings
// ("matmul:M=...", with labels too) separated by ';'. --quick runs two workloads with two
// seeds (a smoke check).
#include "cost_model/cost_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "benchmarks/bench_common.h"
#include "compiler/lower/lower.h"
#include "compiler/runtime/c_runtime_api.h"
#include "cost_model/features.h"
#include "cost_model/metrics.h"
#include "search/featurize.h"
#include "search/model_tuner.h"
#include "search/tune.h"
#include "search/tuner.h"
#include "tuning_db/sqlite_database.h"

namespace temper::bench {
namespace {

using Clock = std::chrono::steady_clock;
using schedule_space::Config;

const Target kTarget = Target::parse("llvm -mcpu=native");
constexpr int kBatch = 8;
// A larger space is sampled rather than measured whole.
constexpr int64_t kMaxTableConfigs = 800;
constexpr double kThresholdShare = 0.95;
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
// The tuners compared; "rand-model" is a ModelTuner whose model scores at random.
const std::vector<std::string> kTuners = {"xgb", "ga", "random", "rand-model"};

struct WorkloadSpec {
  std::string label;
  std::string workload;
};

// Modest sizes: the slowest config of each takes tens of milliseconds.
const std::vector<WorkloadSpec> kWorkloads = {
    {"mm512", "matmul:M=512,N=512,K=512"},
    {"mm256x1024x512", "matmul:M=256,N=1024,K=512"},
    {"dense16", "dense:M=16,N=1024,K=1024"},
    {"dense64", "dense:M=64,N=512,K=512"},
    {"conv64_28", "conv2d:N=1,C=64,H=28,W=28,K=64,R=3,S=3,stride=1,pad=1"},
    {"conv128_14", "conv2d:N=1,C=128,H=14,W=14,K=128,R=3,S=3,stride=1,pad=1"},
};
const std::vector<std::string> kQuickWorkloads = {"mm512", "conv128_14"};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double mean_of(const std::vector<double>& values) {
  double sum = 0;
  int n = 0;
  for (double v : values) {
    if (std::isnan(v)) continue;
    sum += v;
    ++n;
  }
  return n ? sum / n : kNaN;
}

// The builder, runner and log that fill the tables.
struct Measurer {
  measure::Builder builder;
  measure::Runner runner;
  tuning_db::SQLiteDatabase db;

  explicit Measurer(const std::string& path) : runner(tuning_runner_options()), db(path) {}
};

// Proposes exactly the configs it is given: how the table measures configs it lacks.
class ListTuner : public search::Tuner {
 public:
  ListTuner(const schedule_space::ConfigSpace& space, std::vector<Config> configs)
      : Tuner(space), configs_(std::move(configs)) {}
  std::string name() const override { return "list"; }
  bool has_next() const override { return next_ < configs_.size(); }
  std::vector<Config> next_batch(int n) override {
    std::vector<Config> batch;
    while (static_cast<int>(batch.size()) < n && next_ < configs_.size()) {
      Config c = configs_[next_++];
      if (visited(c)) continue;
      mark_visited(c);
      batch.push_back(c);
    }
    return batch;
  }

 private:
  std::vector<Config> configs_;
  size_t next_ = 0;
};

// One workload's measured configs: the ground truth the searches replay.
struct Table {
  std::string label;
  std::unique_ptr<schedule_space::Task> task;
  std::string group;  // the cost model's sample group
  int64_t valid = 0;  // valid configs in the space
  bool sampled = false;
  std::map<int64_t, double> cost;                  // config index -> seconds; +inf: failed
  std::map<int64_t, std::vector<float>> features;  // configs the template can apply
  int measured = 0;                                // by this run while filling
  int reused = 0;                                  // found in the log
  int measured_in_replay = 0;                      // proposed outside a sample
  double fill_s = 0;

  double gflops(double seconds) const {
    return std::isfinite(seconds) && seconds > 0 ? task->op().flops / seconds * 1e-9 : 0;
  }
  double best_gflops() const {
    double best = 0;
    for (const auto& [index, seconds] : cost) best = std::max(best, gflops(seconds));
    return best;
  }
  int failed() const {
    return static_cast<int>(
        std::count_if(cost.begin(), cost.end(), [](const auto& e) { return !std::isfinite(e.second); }));
  }
};

// Reads the table's records from the log (the first record of a config wins, as on resume).
void load_costs(Table& t, const tuning_db::Database& db) {
  tuning_db::WorkloadKey key = tuning_db::WorkloadKey::from(t.task->workload());
  std::string target = tuning_db::host_target_info(t.task->target()).target;
  for (const tuning_db::TuningRecord& r : db.records_for(key, target)) {
    if (r.config.is_null()) continue;
    try {
      Config c = t.task->space().from_json(r.config);
      t.cost.emplace(c.index(), r.is_valid() ? r.mean : kInf);
    } catch (const UserError&) {
      continue;  // a config of another version of the template
    }
  }
}

// Measures the configs the log lacks through the tune loop, which skips those it holds.
search::TuneResult measure_into_log(Table& t, Measurer& m, search::Tuner& walker, int trials) {
  search::TuneOptions options;
  options.trials = trials;
  options.batch_size = kBatch;
  options.error_threshold = 0;  // a template's failing corner is data here, not a broken job
  return search::tune(*t.task, walker, m.builder, m.runner, m.db, options);
}

Table fill_table(const WorkloadSpec& spec, Measurer& m) {
  Table t;
  t.label = spec.label;
  t.task = schedule_space::Task::create(ops::Workload::parse(spec.workload), kTarget);
  t.group = search::sample_group(*t.task);
  const schedule_space::ConfigSpace& space = t.task->space();
  for (int64_t i = 0; i < space.size(); ++i) t.valid += space.is_valid(space.get(i));
  t.sampled = t.valid > kMaxTableConfigs;
  std::printf("\n%s  (%s)\n  space: %lld points, %lld valid%s\n", t.label.c_str(),
              t.task->workload().to_string().c_str(), static_cast<long long>(space.size()),
              static_cast<long long>(t.valid),
              t.sampled ? str(", more than ", kMaxTableConfigs, ": the table is a random sample of them").c_str() : "");
  std::fflush(stdout);

  // The wait is for measuring: a table the log already holds whole needs none.
  load_costs(t, m.db);
  int64_t wanted = t.sampled ? kMaxTableConfigs : t.valid;
  double load = static_cast<int64_t>(t.cost.size()) < wanted ? wait_for_idle_cpu() : 0;
  Clock::time_point start = Clock::now();
  // Resumed records count towards the trials: a grid walk with no limit measures what is left.
  std::unique_ptr<search::Tuner> walker = search::make_space_tuner(t.sampled ? "random" : "grid", space, 0);
  int trials = t.sampled ? static_cast<int>(kMaxTableConfigs) : std::numeric_limits<int>::max();
  search::TuneResult r = measure_into_log(t, m, *walker, trials);
  t.fill_s = seconds_since(start);
  t.measured = r.trials_measured;
  t.reused = r.trials_resumed;
  load_costs(t, m.db);
  std::string how = t.measured ? str(t.measured, " measured now in ", std::lround(t.fill_s), " s at load average ",
                                     load, ", ", t.reused, " reused")
                               : str("all reused");
  std::printf("  table: %zu configs (%s from %s), %d failed\n", t.cost.size(), how.c_str(), m.db.path().c_str(),
              t.failed());

  std::vector<Config> configs;
  for (const auto& [index, seconds] : t.cost) configs.push_back(space.get(index));
  std::vector<std::vector<float>> rows = search::config_features(*t.task, configs);
  int featureless = 0;  // measured, yet the featurizer says the template cannot apply them
  for (size_t i = 0; i < configs.size(); ++i) {
    if (!rows[i].empty()) {
      t.features.emplace(configs[i].index(), std::move(rows[i]));
    } else if (std::isfinite(t.cost.at(configs[i].index()))) {
      ++featureless;
    }
  }
  if (featureless) {
    std::printf("  warning: %d measured configs got no features (left out of the model sections)\n", featureless);
  }
  std::fflush(stdout);
  return t;
}

// The costs of configs, measuring (and adding) those a sampled table lacks.
std::vector<double> table_costs(Table& t, Measurer& m, const std::vector<Config>& configs) {
  std::vector<Config> missing;
  for (const Config& c : configs) {
    if (!t.cost.count(c.index())) missing.push_back(c);
  }
  if (!missing.empty()) {
    ListTuner list(t.task->space(), missing);
    t.measured_in_replay += measure_into_log(t, m, list, std::numeric_limits<int>::max()).trials_measured;
    load_costs(t, m.db);
  }
  std::vector<double> out;
  for (const Config& c : configs) out.push_back(t.cost.at(c.index()));
  return out;
}

struct Run {
  std::vector<double> curve;  // best GFLOP/s after each trial
  double next_batch_s = 0;
  int next_batch_calls = 0;
  // ModelTuner's own accounts (model-guided tuners only).
  double featurize_s = 0, fit_s = 0, search_s = 0;
};

std::unique_ptr<search::Tuner> make_bench_tuner(const std::string& name, const Table& t, uint64_t seed) {
  if (name != "rand-model") return search::make_tuner(name, *t.task, seed);
  const schedule_space::Task* task = t.task.get();
  cost_model::ModelOptions options;
  options.seed = seed;
  return std::make_unique<search::ModelTuner>(
      task->space(), [task](const Config& c) { return search::config_features(*task, c); }, t.group,
      cost_model::make_cost_model("random", options), seed);
}

// The tune loop's protocol without measuring: batches of kBatch, costs from the table.
Run replay(Table& t, Measurer& m, search::Tuner& tuner, int trials) {
  Run run;
  double best = 0;
  while (static_cast<int>(run.curve.size()) < trials && tuner.has_next()) {
    int want = std::min(kBatch, trials - static_cast<int>(run.curve.size()));
    Clock::time_point start = Clock::now();
    std::vector<Config> batch = tuner.next_batch(want);
    run.next_batch_s += seconds_since(start);
    ++run.next_batch_calls;
    if (batch.empty()) break;
    std::vector<double> costs = table_costs(t, m, batch);
    tuner.update(batch, costs);
    for (double seconds : costs) {
      best = std::max(best, t.gflops(seconds));
      run.curve.push_back(best);
    }
  }
  if (auto* model_tuner = dynamic_cast<search::ModelTuner*>(&tuner)) {
    run.featurize_s = model_tuner->featurize_s();
    run.fit_s = model_tuner->fit_s();
    run.search_s = model_tuner->search_s();
  }
  return run;
}

// Trials until the curve reached threshold; budget + 1 when it never did.
int trials_to_reach(const std::vector<double>& curve, double threshold, int budget) {
  for (size_t i = 0; i < curve.size(); ++i) {
    if (curve[i] >= threshold) return static_cast<int>(i) + 1;
  }
  return budget + 1;
}

// Three decimals, or "n/a" for NaN (no pair or no group to score).
std::string fixed3(double value) {
  if (std::isnan(value)) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

std::string trials_text(double trials, int budget) {
  return trials > budget ? str(">", budget) : str(static_cast<int>(std::lround(trials)));
}

struct SearchSummary {
  std::map<std::string, std::vector<int>> trials;  // per tuner, one per seed
  std::map<std::string, std::vector<Run>> runs;
  double threshold_gflops = 0;
  double ratio = kNaN;  // median(xgb) / median(random)
};

// The median, the mean of the two middle values for an even count (bench_common's median
// takes the upper one, which would favour one side of a bar).
double middle(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double median_of(const std::vector<int>& v) {
  return middle(std::vector<double>(v.begin(), v.end()));
}

SearchSummary search_efficiency(Table& t, Measurer& m, int trials, int seeds) {
  SearchSummary s;
  double best_found = 0;
  for (const std::string& name : kTuners) {
    for (int seed = 0; seed < seeds; ++seed) {
      std::unique_ptr<search::Tuner> tuner = make_bench_tuner(name, t, static_cast<uint64_t>(seed));
      Run run = replay(t, m, *tuner, trials);
      if (!run.curve.empty()) best_found = std::max(best_found, run.curve.back());
      s.runs[name].push_back(std::move(run));
    }
  }
  s.threshold_gflops = kThresholdShare * best_found;
  int good = 0;
  for (const auto& [index, seconds] : t.cost) good += t.gflops(seconds) >= s.threshold_gflops;
  std::printf(
      "  search (budget %d, batch %d, %d seeds, no default config first): best found %.1f GFLOP/s of the "
      "table's %.1f; threshold %.1f GFLOP/s, reached by %d of %zu configs (uniform draws need %.1f on "
      "average)\n",
      trials, kBatch, seeds, best_found, t.best_gflops(), s.threshold_gflops, good, t.cost.size(),
      (t.cost.size() + 1.0) / (good + 1.0));
  std::printf("    %-11s %8s %8s   %s\n", "tuner", "median", "reached", "trials to the threshold, per seed");
  for (const std::string& name : kTuners) {
    std::vector<int>& v = s.trials[name];
    std::string per_seed;
    for (const Run& run : s.runs[name]) {
      v.push_back(trials_to_reach(run.curve, s.threshold_gflops, trials));
      per_seed += " " + trials_text(v.back(), trials);
    }
    int reached = static_cast<int>(std::count_if(v.begin(), v.end(), [&](int x) { return x <= trials; }));
    std::printf("    %-11s %8s %5d/%-2d  %s\n", name.c_str(), trials_text(median_of(v), trials).c_str(), reached, seeds,
                per_seed.c_str());
  }
  s.ratio = median_of(s.trials["xgb"]) / median_of(s.trials["random"]);
  std::printf("    median(xgb) / median(random) = %.2f\n", s.ratio);
  if (t.measured_in_replay)
    std::printf("    (%d configs outside the sample measured during the replay)\n", t.measured_in_replay);
  std::fflush(stdout);
  return s;
}

std::vector<cost_model::Sample> samples_of(const Table& t, const std::vector<int64_t>& indices) {
  std::vector<cost_model::Sample> out;
  for (int64_t index : indices) out.push_back({t.features.at(index), t.cost.at(index), t.group});
  return out;
}

struct Scores {
  double pairwise = kNaN, top8 = kNaN, top32 = kNaN;
};

Scores evaluate(const cost_model::CostModel& model, const std::vector<cost_model::Sample>& test) {
  std::vector<std::vector<float>> rows;
  std::vector<double> costs;
  std::vector<std::string> groups;
  for (const cost_model::Sample& s : test) {
    rows.push_back(s.features);
    costs.push_back(s.cost);
    groups.push_back(s.group);
  }
  std::vector<double> scores = model.predict(rows);
  return {cost_model::pairwise_accuracy(scores, costs, groups), cost_model::top_k_recall(scores, costs, groups, 8),
          cost_model::top_k_recall(scores, costs, groups, 32)};
}

struct Quality {
  Scores held_out;             // rank objective, averaged over the splits
  double reg_pairwise = kNaN;  // reg objective, same splits
  Scores transfer;             // trained on the op's other workloads
  int transfer_rows = 0;
};

Quality model_quality(const Table& t, const std::vector<Table>& tables, int seeds) {
  Quality q;
  std::vector<int64_t> indices;
  for (const auto& [index, row] : t.features) indices.push_back(index);
  std::vector<double> pair, top8, top32, reg;
  for (int seed = 0; seed < seeds; ++seed) {
    std::vector<int64_t> shuffled = indices;
    std::mt19937_64 rng(seed);
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    size_t half = shuffled.size() / 2;
    std::vector<cost_model::Sample> train = samples_of(t, {shuffled.begin(), shuffled.begin() + half});
    std::vector<cost_model::Sample> test = samples_of(t, {shuffled.begin() + half, shuffled.end()});
    for (const char* objective : {"rank", "reg"}) {
      cost_model::ModelOptions options;
      options.objective = objective;
      options.seed = seed;
      std::unique_ptr<cost_model::CostModel> model = cost_model::make_cost_model("xgb", options);
      model->update(train);
      Scores s = evaluate(*model, test);
      if (std::string(objective) == "reg") {
        reg.push_back(s.pairwise);
        continue;
      }
      pair.push_back(s.pairwise);
      top8.push_back(s.top8);
      top32.push_back(s.top32);
    }
  }
  q.held_out = {mean_of(pair), mean_of(top8), mean_of(top32)};
  q.reg_pairwise = mean_of(reg);

  std::vector<cost_model::Sample> others;
  for (const Table& o : tables) {
    if (&o == &t || o.task->workload().op != t.task->workload().op) continue;
    std::vector<int64_t> all;
    for (const auto& [index, row] : o.features) all.push_back(index);
    for (cost_model::Sample& s : samples_of(o, all)) others.push_back(std::move(s));
  }
  q.transfer_rows = static_cast<int>(others.size());
  if (!others.empty()) {
    std::unique_ptr<cost_model::CostModel> model = cost_model::make_cost_model("xgb");
    model->update(others);
    q.transfer = evaluate(*model, samples_of(t, indices));
  }
  std::printf("%-16s %6zu %9s %7s %7s %9s %10d %9s %7s\n", t.label.c_str(), indices.size(),
              fixed3(q.held_out.pairwise).c_str(), fixed3(q.held_out.top8).c_str(), fixed3(q.held_out.top32).c_str(),
              fixed3(q.reg_pairwise).c_str(), q.transfer_rows, fixed3(q.transfer.pairwise).c_str(),
              fixed3(q.transfer.top8).c_str());
  std::fflush(stdout);
  return q;
}

// Configs per second of f over n items.
double rate(int n, double seconds) {
  return seconds > 0 ? n / seconds : kInf;
}

struct Speed {
  double serial_per_s = 0, parallel_per_s = 0, features_only_per_s = 0;
  std::map<int, double> fit_s;  // rows -> seconds
  double predict_1000_s = 0;
};

Speed speed(const std::vector<Table>& tables, const std::vector<SearchSummary>& searches) {
  Speed out;
  std::printf("\n== speed (%d threads; a shared machine: indicative) ==\n", temper_get_num_threads());
  // Feature extraction, on the first table of each op.
  std::vector<std::string> ops_done;
  std::vector<double> serial, parallel, only;
  for (const Table& t : tables) {
    const std::string& op = t.task->workload().op;
    if (std::find(ops_done.begin(), ops_done.end(), op) != ops_done.end()) continue;
    ops_done.push_back(op);
    std::vector<Config> configs;
    for (const auto& [index, row] : t.features) {
      if (configs.size() < 128) configs.push_back(t.task->space().get(index));
    }
    Clock::time_point start = Clock::now();
    for (const Config& c : configs) search::config_features(*t.task, c);
    double serial_s = seconds_since(start);
    start = Clock::now();
    search::config_features(*t.task, configs);
    double parallel_s = seconds_since(start);
    LowerOptions quiet;
    quiet.verify = false;
    std::vector<PrimFunc> lowered;
    for (const Config& c : configs) lowered.push_back(lower(t.task->apply(c).func(), quiet));
    start = Clock::now();
    for (const PrimFunc& f : lowered) cost_model::candidate_features(f);
    double only_s = seconds_since(start);
    int n = static_cast<int>(configs.size());
    serial.push_back(rate(n, serial_s));
    parallel.push_back(rate(n, parallel_s));
    only.push_back(rate(n, only_s));
    std::printf(
        "  features of %d %s configs: apply+lower+features %.0f/s serial, %.0f/s batch (OpenMP); "
        "candidate_features alone %.0f/s\n",
        n, op.c_str(), serial.back(), parallel.back(), only.back());
  }
  out.serial_per_s = mean_of(serial);
  out.parallel_per_s = mean_of(parallel);
  out.features_only_per_s = mean_of(only);

  // Training and prediction on rows pooled over the workloads (each its own group).
  std::vector<cost_model::Sample> pool;
  for (const Table& t : tables) {
    std::vector<int64_t> all;
    for (const auto& [index, row] : t.features) all.push_back(index);
    for (cost_model::Sample& s : samples_of(t, all)) pool.push_back(std::move(s));
  }
  std::mt19937_64 rng(0);
  std::shuffle(pool.begin(), pool.end(), rng);
  std::unique_ptr<cost_model::CostModel> last;
  for (int rows : {64, 256, 512}) {
    if (rows > static_cast<int>(pool.size())) break;
    std::vector<cost_model::Sample> train(pool.begin(), pool.begin() + rows);
    cost_model::ModelOptions one_thread;
    one_thread.threads = 1;
    std::unique_ptr<cost_model::CostModel> serial = cost_model::make_cost_model("xgb", one_thread);
    Clock::time_point start = Clock::now();
    serial->update(train);
    double serial_s = seconds_since(start);
    std::unique_ptr<cost_model::CostModel> model = cost_model::make_cost_model("xgb");
    start = Clock::now();
    model->update(train);
    out.fit_s[rows] = seconds_since(start);
    std::printf("  xgb fit (rank, %d rounds) on %d rows: %.1f ms (one thread: %.1f ms)\n",
                cost_model::ModelOptions{}.rounds, rows, out.fit_s[rows] * 1e3, serial_s * 1e3);
    last = std::move(model);
  }
  if (last) {
    std::vector<std::vector<float>> rows;
    for (int i = 0; i < 1000; ++i) rows.push_back(pool[i % pool.size()].features);
    std::vector<double> times;
    for (int k = 0; k < 5; ++k) {
      Clock::time_point start = Clock::now();
      last->predict(rows);
      times.push_back(seconds_since(start));
    }
    out.predict_1000_s = median(times);
    std::printf("  xgb predict on 1000 rows: %.2f ms\n", out.predict_1000_s * 1e3);
  }

  // The xgb tuner in the replays: per next_batch call and per run.
  double next_s = 0, featurize_s = 0, fit_s = 0, search_s = 0;
  int calls = 0, runs = 0;
  for (const SearchSummary& s : searches) {
    for (const Run& r : s.runs.at("xgb")) {
      next_s += r.next_batch_s;
      calls += r.next_batch_calls;
      featurize_s += r.featurize_s;
      fit_s += r.fit_s;
      search_s += r.search_s;
      ++runs;
    }
  }
  if (calls) {
    std::printf(
        "  xgb tuner: next_batch(%d) %.1f ms on average over %d calls; per run: featurize %.2f s, fit %.2f s, "
        "annealing %.2f s\n",
        kBatch, next_s / calls * 1e3, calls, featurize_s / runs, fit_s / runs, search_s / runs);
  }
  std::fflush(stdout);
  return out;
}

struct Options {
  // Random search needs ~100-200 trials on these spaces: a smaller budget would cut its
  // count short and flatter it.
  int trials = 160;
  int seeds = 0;  // 0: 9, or 2 with --quick
  std::string table_db = "bench_logs/cost_model_table.db";
  std::vector<std::string> workloads;
  bool quick = false;
};

std::vector<WorkloadSpec> chosen_workloads(const Options& o) {
  std::vector<std::string> names = o.workloads;
  if (names.empty() && o.quick) names = kQuickWorkloads;
  if (names.empty()) return kWorkloads;
  std::vector<WorkloadSpec> out;
  for (const std::string& name : names) {
    if (name.find(':') != std::string::npos) {
      out.push_back({name, name});
      continue;
    }
    auto it =
        std::find_if(kWorkloads.begin(), kWorkloads.end(), [&](const WorkloadSpec& w) { return w.label == name; });
    if (it == kWorkloads.end()) {
      std::string known;
      for (const WorkloadSpec& w : kWorkloads) known += " " + w.label;
      throw UserError(str("unknown workload '", name, "'; use a workload string (op:key=value,...) or one of:", known));
    }
    out.push_back(*it);
  }
  // A bad workload is an error now, not after the others were measured.
  for (const WorkloadSpec& w : out) schedule_space::Task::create(ops::Workload::parse(w.workload), kTarget);
  return out;
}

void run_benchmark(const Options& o) {
  std::vector<WorkloadSpec> specs = chosen_workloads(o);
  std::filesystem::path db_path(o.table_db);
  if (db_path.has_parent_path()) std::filesystem::create_directories(db_path.parent_path());
  Measurer m(o.table_db);
  std::printf("cost_model benchmark: fp32, %d threads, target %s; %zu workloads, %d seeds, budget %d trials\n",
              temper_get_num_threads(), kTarget.to_string().c_str(), specs.size(), o.seeds, o.trials);
  std::printf(
      "ground truth: every valid config measured once (tune loop's builder and checked runner, repeat 3, "
      "at least 20 ms a group) into %s; searches replay it\n",
      o.table_db.c_str());

  std::vector<Table> tables;
  std::vector<SearchSummary> searches;
  double fill_s = 0;
  int measured = 0, reused = 0;
  for (const WorkloadSpec& spec : specs) {
    tables.push_back(fill_table(spec, m));
    fill_s += tables.back().fill_s;
    measured += tables.back().measured;
    reused += tables.back().reused;
    searches.push_back(search_efficiency(tables.back(), m, o.trials, o.seeds));
  }

  std::printf(
      "\n== model quality: xgb trained on a random half of a table, scored on the other half (mean of %d "
      "splits); transfer: trained on the op's other workloads ==\n",
      o.seeds);
  std::printf("%-16s %6s %9s %7s %7s %9s %10s %9s %7s\n", "workload", "rows", "pair_acc", "top8", "top32", "reg_pair",
              "xfer_rows", "xfer_pair", "xfer_t8");
  std::vector<Quality> quality;
  for (const Table& t : tables) quality.push_back(model_quality(t, tables, o.seeds));

  Speed sp = speed(tables, searches);

  // The closing table.
  std::printf(
      "\n== summary (trials to 95%% of the best found; budget %d, %d seeds; >%d: not reached by the median) ==\n",
      o.trials, o.seeds, o.trials);
  std::printf("%-16s %6s %8s %5s %5s %6s %10s %10s %9s %6s %9s\n", "workload", "valid", "best_GF", "xgb", "ga",
              "random", "rand-model", "xgb/random", "pair_acc", "top8", "xfer_pair");
  std::vector<double> ratios, pairs;
  std::vector<int> all_xgb, all_random;
  for (size_t i = 0; i < tables.size(); ++i) {
    const SearchSummary& s = searches[i];
    const Quality& q = quality[i];
    auto med = [&](const std::string& name) { return trials_text(median_of(s.trials.at(name)), o.trials); };
    std::printf("%-16s %6lld %8.1f %5s %5s %6s %10s %10.2f %9s %6s %9s\n", tables[i].label.c_str(),
                static_cast<long long>(tables[i].valid), tables[i].best_gflops(), med("xgb").c_str(), med("ga").c_str(),
                med("random").c_str(), med("rand-model").c_str(), s.ratio, fixed3(q.held_out.pairwise).c_str(),
                fixed3(q.held_out.top8).c_str(), fixed3(q.transfer.pairwise).c_str());
    ratios.push_back(s.ratio);
    pairs.push_back(q.held_out.pairwise);
    all_xgb.insert(all_xgb.end(), s.trials.at("xgb").begin(), s.trials.at("xgb").end());
    all_random.insert(all_random.end(), s.trials.at("random").begin(), s.trials.at("random").end());
  }
  double median_ratio = middle(ratios);
  double pooled_ratio = median_of(all_xgb) / median_of(all_random);
  double median_pair = middle(pairs);
  double min_pair = *std::min_element(pairs.begin(), pairs.end());
  std::printf(
      "trials: median over workloads of median(xgb)/median(random) = %.2f; over all runs median xgb %s / "
      "median random %s = %.2f\n",
      median_ratio, trials_text(median_of(all_xgb), o.trials).c_str(),
      trials_text(median_of(all_random), o.trials).c_str(), pooled_ratio);
  std::printf("model: held-out pairwise accuracy median %.3f, lowest %.3f\n", median_pair, min_pair);
  std::printf("speed: features %.0f configs/s serial, %.0f/s batch, candidate_features alone %.0f/s; fit",
              sp.serial_per_s, sp.parallel_per_s, sp.features_only_per_s);
  for (const auto& [rows, seconds] : sp.fit_s) std::printf(" %d rows %.0f ms", rows, seconds * 1e3);
  std::printf("; predict 1000 rows %.1f ms\n", sp.predict_1000_s * 1e3);
  std::printf("table: %d configs measured in this run (%.0f s), %d reused from the log\n", measured, fill_s, reused);
  bool search_bar = median_ratio <= 0.5 && pooled_ratio <= 0.5;
  std::printf("BAR median xgb needs at most 0.5x random's trials: %.2f (per-workload median), %.2f (all runs) -> %s\n",
              median_ratio, pooled_ratio, search_bar ? "PASS" : "FAIL");
  std::printf(
      "BAR pairwise accuracy on held-out records at least 0.8: %.3f (median over workloads; lowest %.3f) -> %s\n",
      median_pair, min_pair, median_pair >= 0.8 ? "PASS" : "FAIL");
  std::fflush(stdout);
}

}  // namespace
}  // namespace temper::bench

int main(int argc, char** argv) {
  using namespace temper;
  bench::Options o;
  const char* usage =
      "usage: cost_model [--trials N] [--seeds N] [--table-db PATH] [--workloads mm512,conv64_28,... | "
      "'op:k=v,...;op:k=v,...'] [--quick]";
  try {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      bool has_value = i + 1 < argc;
      if (arg == "--trials" && has_value) {
        o.trials = std::max(1, std::atoi(argv[++i]));
      } else if (arg == "--seeds" && has_value) {
        o.seeds = std::max(1, std::atoi(argv[++i]));
      } else if (arg == "--table-db" && has_value) {
        o.table_db = argv[++i];
      } else if (arg == "--workloads" && has_value) {
        // Workload strings hold commas themselves: a list of them is separated by ';'.
        std::string list = argv[++i];
        o.workloads = bench::split_list(list, list.find(':') != std::string::npos ? ';' : ',');
      } else if (arg == "--quick") {
        o.quick = true;
      } else {
        throw UserError(str("unknown argument '", arg, "'; ", usage));
      }
    }
    if (o.seeds == 0) o.seeds = o.quick ? 2 : 9;
    bench::run_benchmark(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cost_model: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
