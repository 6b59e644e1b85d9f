// The ranking metrics of cost models on hand-made scores and costs: exact values, ties,
// failures, groups kept apart, and NaN when there is nothing to judge.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/ir/error.h"
#include "cost_model/metrics.h"

namespace temper::cost_model {
namespace {

const std::vector<std::string> kOneGroup = {"g", "g", "g", "g"};
const std::vector<double> kCosts = {1.0, 2.0, 3.0, 4.0};

TEST(PairwiseAccuracy, PerfectReversedAndTiedScores) {
  EXPECT_DOUBLE_EQ(pairwise_accuracy({4, 3, 2, 1}, kCosts, kOneGroup), 1.0);
  EXPECT_DOUBLE_EQ(pairwise_accuracy({1, 2, 3, 4}, kCosts, kOneGroup), 0.0);
  EXPECT_DOUBLE_EQ(pairwise_accuracy({7, 7, 7, 7}, kCosts, kOneGroup), 0.5);
  // One pair of six swapped: (cost 1, cost 2) scored 3 < 4.
  EXPECT_DOUBLE_EQ(pairwise_accuracy({3, 4, 2, 1}, kCosts, kOneGroup), 5.0 / 6.0);
}

TEST(PairwiseAccuracy, PairsStayWithinTheirGroup) {
  // Within each group the order is right; across groups it would be all wrong.
  std::vector<double> scores = {2, 1, 20, 10};
  std::vector<double> costs = {1, 2, 0.001, 0.002};
  EXPECT_DOUBLE_EQ(pairwise_accuracy(scores, costs, {"a", "a", "b", "b"}), 1.0);
}

TEST(PairwiseAccuracy, FailuresAreSlowerThanEverySuccess) {
  const double inf = INFINITY;
  // Counted pairs: (1, inf) right, (1, 0) wrong, (1, NaN) right; the failure pairs
  // (inf, 0), (inf, NaN), (0, NaN) are not counted.
  std::vector<double> scores = {5, 1, 9, 2};
  std::vector<double> costs = {1.0, inf, 0.0, NAN};
  EXPECT_DOUBLE_EQ(pairwise_accuracy(scores, costs, kOneGroup), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(pairwise_accuracy({5, 9}, {1.0, -3.0}, {"g", "g"}), 0.0);
}

TEST(PairwiseAccuracy, NaNWhenNoPairCounts) {
  EXPECT_TRUE(std::isnan(pairwise_accuracy({}, {}, {})));
  EXPECT_TRUE(std::isnan(pairwise_accuracy({1, 2}, {1.0, 2.0}, {"a", "b"})));
  EXPECT_TRUE(std::isnan(pairwise_accuracy({1, 2}, {2.0, 2.0}, {"a", "a"})));
  EXPECT_TRUE(std::isnan(pairwise_accuracy({1, 2}, {INFINITY, NAN}, {"a", "a"})));
}

TEST(PairwiseAccuracy, MismatchedListsAreRefused) {
  try {
    pairwise_accuracy({1, 2}, {1.0}, {"a", "a"});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("2 scores, 1 costs and 2 groups"), std::string::npos) << e.what();
  }
}

TEST(TopKRecall, FoundShareOfTheTrulyFastest) {
  EXPECT_DOUBLE_EQ(top_k_recall({4, 3, 2, 1}, kCosts, kOneGroup, 1), 1.0);
  EXPECT_DOUBLE_EQ(top_k_recall({1, 2, 3, 4}, kCosts, kOneGroup, 1), 0.0);
  // Fastest two are candidates 0 and 1; the two best scored are 0 and 3.
  EXPECT_DOUBLE_EQ(top_k_recall({9, 1, 2, 8}, kCosts, kOneGroup, 2), 0.5);
  EXPECT_DOUBLE_EQ(top_k_recall({1, 2, 3, 4}, kCosts, kOneGroup, 4), 1.0);
}

TEST(TopKRecall, AveragesGroupsAndSkipsAllFailedOnes) {
  std::vector<std::string> groups = {"a", "a", "b", "b", "c", "c"};
  std::vector<double> costs = {1, 2, 1, 2, INFINITY, 0};
  std::vector<double> scores = {2, 1, 1, 2, 5, 6};
  EXPECT_DOUBLE_EQ(top_k_recall(scores, costs, groups, 1), 0.5);
}

TEST(TopKRecall, FewerSuccessesThanK) {
  // The one success must be among the three best scored: it is, despite two failures.
  std::vector<double> costs = {INFINITY, 3.0, NAN, -1};
  EXPECT_DOUBLE_EQ(top_k_recall({4, 3, 2, 1}, costs, kOneGroup, 3), 1.0);
  EXPECT_DOUBLE_EQ(top_k_recall({4, 1, 3, 2}, costs, kOneGroup, 3), 0.0);
}

TEST(TopKRecall, NaNWithoutSuccessAndBadKRefused) {
  EXPECT_TRUE(std::isnan(top_k_recall({1, 2}, {INFINITY, 0.0}, {"a", "a"}, 1)));
  EXPECT_TRUE(std::isnan(top_k_recall({}, {}, {}, 1)));
  EXPECT_THROW(top_k_recall({1}, {1.0}, {"a"}, 0), UserError);
}

}  // namespace
}  // namespace temper::cost_model
