// The tuners on synthetic spaces: what they propose, never twice, reproducibly.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "compiler/ir/error.h"
#include "search/tuner.h"

namespace temper::search {
namespace {

using schedule_space::Config;
using schedule_space::ConfigSpace;

schedule_space::SplitOptions two_way(schedule_space::SplitPolicy policy) {
  schedule_space::SplitOptions o;
  o.policy = policy;
  o.num_outputs = 2;
  return o;
}

// 6 x 6 x 4 = 144 points, of which those with x * y > 64 are invalid.
ConfigSpace small_space() {
  ConfigSpace space;
  space.define_split("x", 12, two_way(schedule_space::SplitPolicy::Factors));
  space.define_split("y", 32, two_way(schedule_space::SplitPolicy::Factors));
  space.define_knob("u", {0, 1, 2, 3});
  space.add_constraint("inner x times inner y at most 64",
                       [](const Config& c) { return c.split("x")[1] * c.split("y")[1] <= 64; });
  return space;
}

int count_valid(const ConfigSpace& space) {
  int n = 0;
  for (int64_t i = 0; i < space.size(); ++i) n += space.is_valid(space.get(i));
  return n;
}

// A cost with one best point: inner x = 4, inner y = 8, u = 2.
double synthetic_cost(const Config& c) {
  return 1.0 + std::abs(std::log2(double(c.split("x")[1]) / 4)) + std::abs(std::log2(double(c.split("y")[1]) / 8)) +
         std::abs(c.knob_int("u") - 2);
}

std::vector<int64_t> drain(Tuner& tuner, int batch, bool feed_costs) {
  std::vector<int64_t> seen;
  while (tuner.has_next()) {
    std::vector<Config> b = tuner.next_batch(batch);
    if (b.empty()) break;
    std::vector<double> costs;
    for (const Config& c : b) {
      seen.push_back(c.index());
      costs.push_back(synthetic_cost(c));
    }
    if (feed_costs) tuner.update(b, costs);
  }
  return seen;
}

class EveryTuner : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryTuner, ProposesEachValidConfigAtMostOnceAndOnlyValidOnes) {
  ConfigSpace space = small_space();
  std::unique_ptr<Tuner> tuner = make_space_tuner(GetParam(), space, 7);
  std::vector<int64_t> seen = drain(*tuner, 5, true);
  std::set<int64_t> unique(seen.begin(), seen.end());
  EXPECT_EQ(unique.size(), seen.size()) << "a config was proposed twice";
  for (int64_t i : seen) EXPECT_TRUE(space.is_valid(space.get(i)));
  // random and grid enumerate the space; the genetic tuner may stop before.
  if (GetParam() != "ga") {
    EXPECT_EQ(static_cast<int>(seen.size()), count_valid(space));
  }
  EXPECT_GT(seen.size(), 20u);
}

TEST_P(EveryTuner, NeverProposesVisitedConfigs) {
  ConfigSpace space = small_space();
  std::unique_ptr<Tuner> tuner = make_space_tuner(GetParam(), space, 3);
  std::set<int64_t> marked;
  for (int64_t i = 0; i < space.size(); i += 3) {
    Config c = space.get(i);
    if (!space.is_valid(c)) continue;
    tuner->mark_visited(c);
    marked.insert(i);
  }
  for (int64_t i : drain(*tuner, 4, true)) EXPECT_EQ(marked.count(i), 0u) << "proposed visited config " << i;
}

TEST_P(EveryTuner, IsNamedAsMakeTunerTakesIt) {
  ConfigSpace space = small_space();
  EXPECT_EQ(make_space_tuner(GetParam(), space, 1)->name(), GetParam());
}

TEST_P(EveryTuner, SameSeedSameProposals) {
  ConfigSpace space = small_space();
  std::unique_ptr<Tuner> a = make_space_tuner(GetParam(), space, 11);
  std::unique_ptr<Tuner> b = make_space_tuner(GetParam(), space, 11);
  EXPECT_EQ(drain(*a, 6, true), drain(*b, 6, true));
}

INSTANTIATE_TEST_SUITE_P(Tuners, EveryTuner, ::testing::Values("random", "grid", "ga"));

TEST(GridTuner, WalksTheSpaceInIndexOrder) {
  ConfigSpace space = small_space();
  std::vector<int64_t> seen = drain(*make_space_tuner("grid", space, 0), 7, false);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
}

TEST(RandomTuner, DifferentSeedsDifferentOrders) {
  ConfigSpace space = small_space();
  std::vector<int64_t> a = drain(*make_space_tuner("random", space, 1), 8, false);
  std::vector<int64_t> b = drain(*make_space_tuner("random", space, 2), 8, false);
  EXPECT_NE(a, b);
  EXPECT_FALSE(std::is_sorted(a.begin(), a.end()));
}

TEST(RandomTuner, SamplesSpacesTooLargeToEnumerate) {
  ConfigSpace space;
  for (const char* name : {"a", "b", "c", "d", "e", "f"}) {
    space.define_split(name, 720, two_way(schedule_space::SplitPolicy::Factors));
  }
  ASSERT_GT(space.size(), int64_t{1} << 20);
  std::unique_ptr<Tuner> tuner = make_space_tuner("random", space, 5);
  std::set<int64_t> seen;
  for (int i = 0; i < 10; ++i) {
    for (const Config& c : tuner->next_batch(10)) EXPECT_TRUE(seen.insert(c.index()).second);
  }
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_TRUE(tuner->has_next());
}

TEST(GATuner, FindsTheOptimumOfASmoothCostFasterThanItsFirstGeneration) {
  // On a larger space the genetic tuner's later generations beat its random first one.
  ConfigSpace space;
  space.define_split("x", 1024, two_way(schedule_space::SplitPolicy::PowerOfTwo));
  space.define_split("y", 1024, two_way(schedule_space::SplitPolicy::PowerOfTwo));
  space.define_knob("u", {0, 1, 2, 3, 4, 5, 6, 7});
  std::unique_ptr<Tuner> tuner = make_space_tuner("ga", space, 42);
  double first_best = std::numeric_limits<double>::infinity();
  double best = first_best;
  for (int batch = 0; batch < 12; ++batch) {
    std::vector<Config> b = tuner->next_batch(16);
    std::vector<double> costs;
    for (const Config& c : b) {
      costs.push_back(synthetic_cost(c));
      best = std::min(best, costs.back());
      if (batch < 2) first_best = best;
    }
    tuner->update(b, costs);
  }
  EXPECT_LT(best, first_best);
  EXPECT_DOUBLE_EQ(best, 1.0) << "the genetic tuner should reach the optimum in 192 of " << space.size() << " trials";
}

TEST(Tuners, UnknownNameIsAUserErrorListingTheKnownOnes) {
  ConfigSpace space = small_space();
  try {
    make_space_tuner("annealing", space, 0);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown tuner 'annealing'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("random, grid or ga"), std::string::npos);
  }
}

}  // namespace
}  // namespace temper::search
