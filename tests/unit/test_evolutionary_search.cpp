// The evolutionary search's choice of a batch: a sketch that has not been measured gets a
// slot, and so does a register-tile shape, whatever the model thinks of those measured.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <utility>

#include "cost_model/cost_model.h"
#include "cost_model/features.h"
#include "search/evolutionary_search.h"

namespace temper::search {
namespace {

TEST(EvolutionarySearch, TheSketchMeasuredLeastGetsASlotInEachBatch) {
  schedule_space::AutoSpace space(ops::Workload::parse("matmul:M=64,N=64,K=64"), Target::parse("llvm -mcpu=native"));
  const int sketches = static_cast<int>(space.sketches().size());
  ASSERT_GE(sketches, 3);
  const int unmeasured = sketches - 1;
  EvolutionOptions options;
  options.population = 48;
  options.generations = 1;
  options.epsilon = 0;  // no random share: the one slot is the model's or the rule's
  for (uint64_t seed : {1, 2, 3}) {
    EvolutionarySearch search(space, cost_model::make_cost_model("xgb"), "g", seed, options);
    // Every sketch but the last measured, the first ones fastest.
    std::vector<schedule_space::AutoCandidate> measured;
    std::vector<double> costs;
    for (int k = 0; k < unmeasured; ++k) {
      for (uint64_t draw = 0; draw < 4; ++draw) {
        try {
          measured.push_back(space.instantiate(k, {}, seed * 100 + draw));
          costs.push_back(1e-3 * (1 + k + 0.1 * static_cast<double>(draw)));
        } catch (const ScheduleError&) {
          // an illegal draw: none measured
        }
      }
    }
    search.add_measured(measured, costs);
    std::vector<schedule_space::AutoCandidate> batch = search.next_batch(1);
    ASSERT_EQ(batch.size(), 1u);
    EXPECT_EQ(batch[0].sketch, unmeasured) << "seed " << seed;
  }
}

TEST(EvolutionarySearch, TheRegisterTileShapeMeasuredLeastGetsASlotInEachBatch) {
  schedule_space::AutoSpace space(ops::Workload::parse("matmul:M=64,N=64,K=64"), Target::parse("llvm -mcpu=native"));
  const CandidateLimits limits = candidate_limits(space.target());
  auto shape = [](const schedule_space::AutoCandidate& c) {
    RegisterTile t = largest_register_tile(c.schedule.func());
    return std::pair{t.elements, t.innermost};
  };
  EvolutionOptions options;
  options.population = 48;
  options.generations = 1;
  options.epsilon = 0;
  for (uint64_t seed : {1, 2, 3}) {
    // Random draws of every sketch; the most common shape that fills the registers is
    // left unmeasured, every other draw is measured (the faster the smaller its tile).
    std::vector<schedule_space::AutoCandidate> draws;
    std::map<std::pair<int64_t, int64_t>, int> frequency;
    for (int k = 0; k < static_cast<int>(space.sketches().size()); ++k) {
      for (uint64_t draw = 0; draw < 24; ++draw) {
        try {
          draws.push_back(space.instantiate(k, {}, seed * 1000 + draw));
        } catch (const ScheduleError&) {
          continue;  // an illegal draw
        }
        if (fills_registers(draws.back().schedule.func(), limits)) ++frequency[shape(draws.back())];
      }
    }
    ASSERT_GE(frequency.size(), 2u);
    auto left_out = std::max_element(frequency.begin(), frequency.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; })
                        ->first;
    std::vector<schedule_space::AutoCandidate> measured;
    std::vector<double> costs;
    std::set<std::pair<int64_t, int64_t>> measured_shapes;
    for (const schedule_space::AutoCandidate& c : draws) {
      if (shape(c) == left_out) continue;
      measured.push_back(c);
      costs.push_back(1e-3 * static_cast<double>(shape(c).first));
      measured_shapes.insert(shape(c));
    }
    EvolutionarySearch search(space, cost_model::make_cost_model("xgb"), "g", seed, options);
    search.add_measured(measured, costs);
    // The first slot goes to the sketch measured least, the second to the shape.
    std::vector<schedule_space::AutoCandidate> batch = search.next_batch(2);
    ASSERT_EQ(batch.size(), 2u);
    EXPECT_TRUE(fills_registers(batch[1].schedule.func(), limits)) << "seed " << seed;
    EXPECT_FALSE(measured_shapes.count(shape(batch[1])))
        << "seed " << seed << ": a " << shape(batch[1]).first << "-element tile was measured before";
  }
}

// A planted problem: the "cost model" knows the objective exactly (a fixed random linear
// score of a candidate's features), and the search must find candidates that score
// better than as many random draws do. A search that ignored its model, or picked its
// batch against the scores, would not.
class PlantedModel : public cost_model::CostModel {
 public:
  explicit PlantedModel(size_t width) {
    std::mt19937_64 rng(42);
    std::normal_distribution<double> normal;
    for (size_t i = 0; i < width; ++i) weights_.push_back(normal(rng));
  }
  double objective(const std::vector<float>& row) const {
    double score = 0;
    for (size_t i = 0; i < row.size(); ++i) score += weights_[i] * std::log1p(std::abs(row[i]));
    return score;
  }
  std::string kind() const override { return "planted"; }
  void update(const std::vector<cost_model::Sample>&) override {}
  std::vector<double> predict(const std::vector<std::vector<float>>& rows) const override {
    std::vector<double> scores;
    for (const std::vector<float>& row : rows) scores.push_back(objective(row));
    return scores;
  }
  bool trained() const override { return true; }
  int64_t num_samples() const override { return 0; }
  void save(const std::string&) const override {}

 private:
  std::vector<double> weights_;
};

TEST(EvolutionarySearch, FindsBetterCandidatesThanRandomSamplingOnAPlantedProblem) {
  schedule_space::AutoSpace space(ops::Workload::parse("matmul:M=64,N=64,K=64"), Target::parse("llvm -mcpu=native"));
  const CandidateLimits limits = candidate_limits(space.target());
  const int batch_size = 8;
  EvolutionOptions options;
  options.population = 64;
  options.generations = 3;
  options.epsilon = 0;
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    auto model = std::make_unique<PlantedModel>(cost_model::feature_names().size());
    const PlantedModel& planted = *model;
    // The objective of each candidate that lowers, by its lowered program's features.
    auto objectives = [&](const std::vector<schedule_space::AutoCandidate>& candidates) {
      std::vector<double> found;
      for (const schedule_space::AutoCandidate& c : candidates) {
        if (std::optional<ScoredCandidate> e = evaluate(c, limits)) found.push_back(planted.objective(e->features));
      }
      std::sort(found.begin(), found.end());
      return found;
    };
    auto mean = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); };
    EvolutionarySearch search(space, std::move(model), "g", seed, options);
    std::vector<double> guided = objectives(search.next_batch(batch_size));
    // The same search before its model has learned anything: a random batch, drawn under
    // the same register-tile prior and limits.
    EvolutionarySearch unguided(space, cost_model::make_cost_model("xgb"), "g", seed, options);
    std::vector<double> random_batch = objectives(unguided.next_batch(batch_size));
    // Plain random sampling of the space, 25 times the batch.
    std::mt19937_64 rng(seed);
    std::vector<double> pool = objectives(space.sample(25 * batch_size, rng, [](const auto&) { return true; }));
    ASSERT_EQ(guided.size(), static_cast<size_t>(batch_size));
    ASSERT_FALSE(random_batch.empty());
    ASSERT_GE(pool.size(), static_cast<size_t>(10 * batch_size));
    double pool_p90 = pool[pool.size() * 9 / 10];
    SCOPED_TRACE(str("seed ", seed, ": the guided batch's best ", guided.back(), ", mean ", mean(guided),
                     "; the unguided batch's best ", random_batch.back(), ", mean ", mean(random_batch),
                     "; 90th percentile of ", pool.size(), " random draws ", pool_p90));
    EXPECT_GT(mean(guided), mean(random_batch));
    EXPECT_GE(guided.back(), random_batch.back());
    EXPECT_GT(guided.back(), pool_p90);
  }
}

}  // namespace
}  // namespace temper::search
