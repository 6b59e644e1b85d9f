// The evolutionary search's choice of a batch: a sketch that has not been measured gets a
// slot, and so does a register-tile shape, whatever the model thinks of those measured.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>

#include "cost_model/cost_model.h"
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

}  // namespace
}  // namespace temper::search
