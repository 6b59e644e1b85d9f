// The model-guided tuner on a planted space (features = the knob values, a known cost with
// one optimum), driven as the tune loop drives it; and its featurizer on a real task.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <set>

#include "compiler/ir/error.h"
#include "cost_model/features.h"
#include "search/featurize.h"
#include "search/model_tuner.h"
#include "search/tuners.h"

namespace temper::search {
namespace {

using schedule_space::Config;
using schedule_space::ConfigSpace;

std::vector<nlohmann::json> range(int n) {
  std::vector<nlohmann::json> v;
  for (int i = 0; i < n; ++i) v.emplace_back(i);
  return v;
}

// 12 x 12 x 14 = 2016 points, all valid.
ConfigSpace planted_space() {
  ConfigSpace space;
  space.define_knob("a", range(12));
  space.define_knob("b", range(12));
  space.define_knob("c", range(14));
  return space;
}

// 8 x 6 x 6 = 288 points, of which those with a + b > 10 are invalid: small enough to be
// scored whole.
ConfigSpace small_space() {
  ConfigSpace space;
  space.define_knob("a", range(8));
  space.define_knob("b", range(6));
  space.define_knob("c", range(6));
  space.add_constraint("a + b at most 10", [](const Config& c) { return c.knob_int("a") + c.knob_int("b") <= 10; });
  return space;
}

// One optimum, at a = 7, b = 3, c = 10 (cost 1): a smooth bowl, plus a step where
// (a * b + c) % 4 differs from the optimum's.
double planted_cost(const Config& c) {
  double a = c.knob_int("a"), b = c.knob_int("b"), k = c.knob_int("c");
  double bowl = ((a - 7) * (a - 7) + (b - 3) * (b - 3)) / 16 + std::abs(k - 10) / 4;
  double step = (c.knob_int("a") * c.knob_int("b") + c.knob_int("c")) % 4 != 3 ? 0.5 : 0;
  return 1e-3 * (1 + bowl + step);
}

std::vector<float> knob_values(const Config& c) {
  std::vector<float> f;
  for (int64_t choice : c.choices()) f.push_back(static_cast<float>(choice));
  return f;
}

std::unique_ptr<ModelTuner> planted_tuner(const ConfigSpace& space, uint64_t seed, Featurizer featurize = knob_values,
                                          const ModelTunerOptions& options = {}) {
  cost_model::ModelOptions model;
  model.num_features = static_cast<int>(space.knobs().size());
  model.seed = seed;
  model.threads = 1;  // a few hundred rows: threads would only wait on each other
  return std::make_unique<ModelTuner>(space, std::move(featurize), "planted", cost_model::make_cost_model("xgb", model),
                                      seed, options);
}

// Trials until the optimum is measured (budget + 1 if it never is), in batches of 8 as
// the tune loop asks, reporting each batch's costs back.
int trials_to_optimum(Tuner& tuner, int budget) {
  int trials = 0;
  while (trials < budget && tuner.has_next()) {
    std::vector<Config> batch = tuner.next_batch(8);
    if (batch.empty()) break;
    std::vector<double> costs;
    for (const Config& c : batch) {
      ++trials;
      costs.push_back(planted_cost(c));
      if (costs.back() == 1e-3) return trials;
    }
    tuner.update(batch, costs);
  }
  return budget + 1;
}

int median(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

TEST(ModelTuner, FindsThePlantedOptimumInAFractionOfRandomSearchsTrials) {
  ConfigSpace space = planted_space();
  std::vector<int> xgb, random;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    xgb.push_back(trials_to_optimum(*planted_tuner(space, seed), static_cast<int>(space.size())));
    RandomTuner r(space, seed);
    random.push_back(trials_to_optimum(r, static_cast<int>(space.size())));
  }
  int xgb_median = median(xgb), random_median = median(random);
  // Observed over 50 seeds: xgb medians 34-49 per ten seeds (no run above 58), random
  // 1178-1631.
  std::cout << "trials to the optimum of " << space.size() << ": median xgb " << xgb_median << ", random "
            << random_median << "\n";
  EXPECT_LE(xgb_median, random_median / 10);
}

// Every config proposed at most once, never one marked visited, all valid; a small
// space (scored whole) is drained to its last valid config.
TEST(ModelTuner, NeverProposesAConfigTwiceNorAVisitedOne) {
  for (bool small : {true, false}) {
    ConfigSpace space = small ? small_space() : planted_space();
    std::unique_ptr<ModelTuner> tuner = planted_tuner(space, 3);
    EXPECT_EQ(tuner->name(), "xgb");  // its model's kind, as its records name it
    std::set<int64_t> marked = {0, 5, 77, 140};
    for (int64_t i : marked) tuner->mark_visited(space.get(i));
    std::set<int64_t> seen;
    int batches = 0;
    const int max_batches = small ? 40 : 30;
    while (tuner->has_next() && batches < max_batches) {
      std::vector<Config> batch = tuner->next_batch(8);
      if (batch.empty()) break;
      ++batches;
      std::vector<double> costs;
      for (const Config& c : batch) {
        EXPECT_TRUE(space.is_valid(c));
        EXPECT_EQ(marked.count(c.index()), 0u) << "proposed a visited config";
        EXPECT_TRUE(seen.insert(c.index()).second) << "proposed " << c.to_string() << " twice";
        costs.push_back(planted_cost(c));
      }
      tuner->update(batch, costs);
    }
    EXPECT_TRUE(tuner->model().trained());
    if (small) {
      int valid = 0;
      for (int64_t i = 0; i < space.size(); ++i) valid += space.is_valid(space.get(i)) && !marked.count(i);
      EXPECT_EQ(static_cast<int>(seen.size()), valid) << "the small space was not drained";
      EXPECT_FALSE(tuner->has_next());
    } else {
      EXPECT_EQ(seen.size(), 240u);
    }
  }
}

TEST(ModelTuner, WithOnlyFailuresTheModelIsUntrainedAndBatchesAreRandom) {
  ConfigSpace space = planted_space();
  std::unique_ptr<ModelTuner> tuner = planted_tuner(space, 5);
  std::set<int64_t> seen;
  for (int b = 0; b < 5; ++b) {
    std::vector<Config> batch = tuner->next_batch(8);
    ASSERT_EQ(batch.size(), 8u);
    for (const Config& c : batch) EXPECT_TRUE(seen.insert(c.index()).second);
    tuner->update(batch, std::vector<double>(batch.size(), std::numeric_limits<double>::infinity()));
    EXPECT_FALSE(tuner->model().trained());
  }
  EXPECT_EQ(tuner->model().num_samples(), 40);
  // Random batches: spread over the space, not clustered near one config.
  std::set<int64_t> a_values;
  for (int64_t i : seen) a_values.insert(space.get(i).choices()[0]);
  EXPECT_GE(a_values.size(), 8u);
}

// A config the featurizer cannot apply (empty features) is never chosen by the model;
// with epsilon 0 every batch after the first (random) one comes from the model.
TEST(ModelTuner, NeverPicksAConfigWithoutFeatures) {
  ConfigSpace space = planted_space();
  Featurizer no_a0 = [](const Config& c) { return c.choices()[0] == 0 ? std::vector<float>{} : knob_values(c); };
  ModelTunerOptions options;
  options.epsilon = 0;
  std::unique_ptr<ModelTuner> tuner = planted_tuner(space, 9, no_a0, options);
  for (int b = 0; b < 8; ++b) {
    std::vector<Config> batch = tuner->next_batch(8);
    ASSERT_EQ(batch.size(), 8u);
    std::vector<double> costs;
    for (const Config& c : batch) {
      if (b > 0) {
        EXPECT_NE(c.choices()[0], 0) << "the model picked " << c.to_string() << ", which has no features";
      }
      costs.push_back(c.choices()[0] == 0 ? std::numeric_limits<double>::infinity() : planted_cost(c));
    }
    tuner->update(batch, costs);
  }
}

// Pairs of configs of the batch within one knob of each other.
int close_pairs(const std::vector<Config>& batch) {
  int close = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      int differ = 0;
      for (size_t k = 0; k < batch[i].choices().size(); ++k) differ += batch[i].choices()[k] != batch[j].choices()[k];
      close += differ <= 1;
    }
  }
  return close;
}

// The diversity filter: from the same model and annealing (same seed, same first batch),
// the filtered batch has fewer configs within one knob of each other than the plain
// best-scored list (diversity_distance 0 lets any two distinct configs through).
TEST(ModelTuner, TheDiversityFilterSpreadsABatch) {
  ConfigSpace space = planted_space();
  int close_filtered = 0, close_plain = 0;
  for (uint64_t seed = 20; seed < 25; ++seed) {
    int close[2];
    for (int distance : {0, 1}) {
      ModelTunerOptions options;
      options.epsilon = 0;
      options.diversity_distance = distance;
      std::unique_ptr<ModelTuner> tuner = planted_tuner(space, seed, knob_values, options);
      std::vector<Config> first = tuner->next_batch(8);
      std::vector<double> costs;
      for (const Config& c : first) costs.push_back(planted_cost(c));
      tuner->update(first, costs);
      close[distance] = close_pairs(tuner->next_batch(8));
    }
    close_filtered += close[1];
    close_plain += close[0];
  }
  std::cout << "pairs within one knob in 5 batches of 8: " << close_filtered << " filtered, " << close_plain
            << " plain\n";
  // Observed: 45 filtered, 89 plain (the filter is relaxed when the best-scored list
  // holds too few configs far enough apart).
  EXPECT_LT(close_filtered * 3, close_plain * 2);
}

TEST(ModelTuner, TheSameSeedAndResultsGiveTheSameBatches) {
  ConfigSpace space = planted_space();
  std::unique_ptr<ModelTuner> x = planted_tuner(space, 11), y = planted_tuner(space, 11);
  for (int b = 0; b < 4; ++b) {
    std::vector<Config> bx = x->next_batch(8), by = y->next_batch(8);
    ASSERT_EQ(bx, by) << "batch " << b;
    std::vector<double> costs;
    for (const Config& c : bx) costs.push_back(planted_cost(c));
    x->update(bx, costs);
    y->update(by, costs);
  }
}

TEST(ModelTuner, BadOptionsAreUserErrors) {
  ConfigSpace space = planted_space();
  ModelTunerOptions no_chains;
  no_chains.num_chains = 0;
  EXPECT_THROW(planted_tuner(space, 0, knob_values, no_chains), UserError);
  ModelTunerOptions bad_epsilon;
  bad_epsilon.epsilon = 1.5;
  EXPECT_THROW(planted_tuner(space, 0, knob_values, bad_epsilon), UserError);
}

const Target kTarget = Target::parse("llvm -mcpu=native");

// The conv2d template builds its packed re-expression with te::compute, which must work
// on OpenMP worker threads too (it once failed there and gave empty features).
TEST(Featurize, ParallelAndSerialFeaturesAgreeOnRealTasks) {
  for (const char* workload : {"matmul:M=64,N=64,K=64", "conv2d:N=1,C=16,H=14,W=14,K=16,R=3,S=3,stride=1,pad=1"}) {
    SCOPED_TRACE(workload);
    std::unique_ptr<schedule_space::Task> task = schedule_space::Task::create(ops::Workload::parse(workload), kTarget);
    std::mt19937_64 rng(1);
    std::vector<Config> configs;
    for (int i = 0; i < 32; ++i) configs.push_back(task->space().sample(rng));
    std::vector<std::vector<float>> parallel = config_features(*task, configs);
    ASSERT_EQ(parallel.size(), configs.size());
    std::set<std::vector<float>> distinct;
    for (size_t i = 0; i < configs.size(); ++i) {
      EXPECT_EQ(parallel[i], config_features(*task, configs[i])) << configs[i].to_string();
      EXPECT_EQ(parallel[i].size(), cost_model::feature_names().size());
      distinct.insert(parallel[i]);
    }
    EXPECT_GT(distinct.size(), 16u) << "features hardly tell the configs apart";
  }
}

TEST(Featurize, SampleGroupNamesTheWorkloadAndTarget) {
  std::unique_ptr<schedule_space::Task> task =
      schedule_space::Task::create(ops::Workload::parse("matmul:M=64,N=64,K=64"), kTarget);
  EXPECT_EQ(sample_group(*task), "matmul:M=64,N=64,K=64,transpose_a=0,transpose_b=0,dtype=float32 @ llvm -mcpu=native");
}

TEST(MakeTuner, XgbIsATunerNameAndBuildsAModelTunerForARealTask) {
  const std::vector<std::string>& names = tuner_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "xgb"), names.end());

  std::unique_ptr<schedule_space::Task> task =
      schedule_space::Task::create(ops::Workload::parse("matmul:M=64,N=64,K=64"), kTarget);
  std::unique_ptr<Tuner> tuner = make_tuner("xgb", *task, 2);
  auto* model_tuner = dynamic_cast<ModelTuner*>(tuner.get());
  ASSERT_NE(model_tuner, nullptr);
  EXPECT_EQ(model_tuner->model().kind(), "xgb");
  std::set<int64_t> seen;
  for (int b = 0; b < 3; ++b) {
    std::vector<Config> batch = tuner->next_batch(8);
    ASSERT_EQ(batch.size(), 8u);
    std::vector<double> costs;
    for (const Config& c : batch) {
      EXPECT_TRUE(seen.insert(c.index()).second);
      // A stand-in for measuring: bigger register tiles are faster.
      costs.push_back(1e-3 / (c.knob_int("mr") * c.knob_int("nr")));
    }
    tuner->update(batch, costs);
  }
  EXPECT_TRUE(model_tuner->model().trained());
  EXPECT_EQ(model_tuner->model().num_samples(), 24);
  EXPECT_GT(model_tuner->featurize_s(), 0);
  EXPECT_GT(model_tuner->fit_s(), 0);
}

TEST(MakeTuner, AnUnknownNameListsXgb) {
  std::unique_ptr<schedule_space::Task> task =
      schedule_space::Task::create(ops::Workload::parse("matmul:M=8,N=8,K=8"), kTarget);
  try {
    make_tuner("annealing", *task, 0);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown tuner 'annealing'; use random, grid, ga or xgb"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace temper::search
