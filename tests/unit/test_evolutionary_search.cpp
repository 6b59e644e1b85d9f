// The evolutionary search's choice of a batch: a sketch that has not been measured gets a
// slot, whatever the model thinks of the sketches measured so far.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace temper::search
