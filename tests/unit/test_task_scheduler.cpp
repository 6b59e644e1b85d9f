// The task scheduler on simulated tasks (known best-time-versus-trials curves): where the
// gradient strategy sends a shared trial budget, round-robin, early stopping, the
// estimated latency, bad input, and reproducibility.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "compiler/ir/error.h"
#include "search/task_scheduler.h"

namespace temper::search {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A simulated task: its best time in seconds after `trials` trials.
using Curve = std::function<double(int trials)>;

// 1 ms at the start, towards 0.1 ms: half of the way down after 64 trials, still improving at 500.
double improving(int trials) {
  return 1e-3 * (0.1 + 0.9 * 64.0 / (64.0 + trials));
}
// 0.1 ms from the first trial on, never better.
double plateau(int) {
  return 1e-4;
}
// Every trial fails.
double failing(int) {
  return kInf;
}

struct Simulation {
  std::vector<int> order;  // the task of each turn
  std::vector<int> trials;
  double latency = 0;  // sum of weight * best at the end
};

// Drives the scheduler for `budget` trials in turns of `per_turn`, as the tune loop will.
Simulation simulate(TaskScheduler& scheduler, const std::vector<Curve>& curves, const std::vector<double>& weights,
                    int budget, int per_turn = 8) {
  Simulation run;
  int spent = 0;
  while (spent < budget) {
    int task = scheduler.next_task();
    if (task < 0) break;
    int trials = std::min(per_turn, budget - spent);
    scheduler.report(task, trials, curves[task](scheduler.trials_of(task) + trials));
    spent += trials;
    run.order.push_back(task);
  }
  for (int i = 0; i < scheduler.num_tasks(); ++i) {
    run.trials.push_back(scheduler.trials_of(i));
    run.latency += weights[i] * curves[i](run.trials.back());
  }
  return run;
}

Simulation simulate_with(TaskSchedulerOptions options, const std::vector<Curve>& curves,
                         const std::vector<double>& weights, int budget) {
  TaskScheduler scheduler(weights, options);
  return simulate(scheduler, curves, weights, budget);
}

TaskSchedulerOptions round_robin() {
  TaskSchedulerOptions o;
  o.strategy = TaskSchedulerStrategy::RoundRobin;
  return o;
}

// The planted problem: task 0 is heavy and keeps improving, task 1 is light and plateaus
// after its first turn. The gradient gives task 0 the budget, and the model ends faster
// than with round-robin.
TEST(TaskScheduler, GradientSpendsTheBudgetOnTheTaskThatKeepsImproving) {
  std::vector<Curve> curves = {improving, plateau};
  std::vector<double> weights = {2, 1};
  Simulation gradient = simulate_with({}, curves, weights, 512);
  Simulation rr = simulate_with(round_robin(), curves, weights, 512);
  EXPECT_EQ(gradient.trials[0] + gradient.trials[1], 512);
  EXPECT_GT(gradient.trials[0], 3 * gradient.trials[1]);
  EXPECT_EQ(rr.trials[0], 256);
  EXPECT_LT(gradient.latency, 0.9 * rr.latency);
  // The warm-up: each task once, in order.
  EXPECT_EQ(gradient.order[0], 0);
  EXPECT_EQ(gradient.order[1], 1);
}

// The mirror: the plateaued task runs 20 times per model run, so its share of the latency
// (2 ms) is larger than the improving task's (1 ms at best) and it gets the turns.
TEST(TaskScheduler, GradientFollowsTheWeights) {
  std::vector<Curve> curves = {improving, plateau};
  std::vector<double> weights = {1, 20};
  Simulation gradient = simulate_with({}, curves, weights, 512);
  EXPECT_GT(gradient.trials[1], 3 * gradient.trials[0]);
}

// The forward term alone keeps giving that heavy plateaued task turns; early stopping ends
// it, and the budget goes to the task that still improves.
TEST(TaskScheduler, EarlyStoppingHandsAPlateauedTasksTurnsToTheOthers) {
  std::vector<Curve> curves = {improving, plateau};
  std::vector<double> weights = {1, 20};
  TaskSchedulerOptions options;
  options.early_stopping = 32;
  TaskScheduler scheduler(weights, options);
  Simulation run = simulate(scheduler, curves, weights, 512);
  EXPECT_EQ(run.trials[1], 40);  // its first turn found the plateau, 32 more found nothing better
  EXPECT_EQ(run.trials[0], 512 - 40);
  EXPECT_EQ(scheduler.why_finished(1), "early stopping: no better time in 32 trials");
  EXPECT_FALSE(scheduler.finished(0));
}

// Task 0 is slower and flat, task 1 faster and improved on its second turn only: the
// forward guess (best over trials) prefers task 0, the backward slope task 1 while the
// window reaches back to that improvement.
TEST(TaskScheduler, BackwardGradientIsTheObservedSlopeOverTheWindow) {
  auto pick = [](double alpha, int window) {
    TaskSchedulerOptions options;
    options.alpha = alpha;
    options.backward_window = window;
    options.epsilon = 0;
    TaskScheduler s({1, 1}, options);
    for (int turn = 0; turn < 4; ++turn) s.report(0, 8, 3e-3);
    for (double best : {2e-3, 1.8e-3, 1.8e-3, 1.8e-3}) s.report(1, 8, best);
    return s.next_task();
  };
  EXPECT_EQ(pick(0, 3), 0);
  EXPECT_EQ(pick(1, 3), 1);
  // No slope in either window, the tie goes to the lower index: the last 2 turns are
  // flat, and a window of 4 turns needs 5.
  EXPECT_EQ(pick(1, 2), 0);
  EXPECT_EQ(pick(1, 4), 0);
}

TEST(TaskScheduler, EarlyStoppingCountsTrialsSinceTheLastImprovement) {
  TaskSchedulerOptions options;
  options.strategy = TaskSchedulerStrategy::RoundRobin;
  options.early_stopping = 16;
  TaskScheduler s({1, 1}, options);
  s.report(0, 8, 2e-3);
  s.report(0, 8, 1e-3);  // better: counting starts again
  s.report(0, 8, 1e-3);
  EXPECT_FALSE(s.finished(0));
  s.report(0, 8, 1e-3);
  EXPECT_TRUE(s.finished(0));
  EXPECT_EQ(s.why_finished(0), "early stopping: no better time in 16 trials");
  EXPECT_EQ(s.why_finished(1), "");
}

TEST(TaskScheduler, RoundRobinAlternatesAndSkipsFinishedTasks) {
  TaskScheduler s({1, 5, 1}, round_robin());
  std::vector<int> order;
  for (int turn = 0; turn < 4; ++turn) {
    int task = s.next_task();
    order.push_back(task);
    s.report(task, 8, 1e-3, task == 1 && turn == 1 ? "the tuner has no configs left" : "");
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 0}));
  EXPECT_TRUE(s.finished(1));
  EXPECT_EQ(s.why_finished(1), "the tuner has no configs left");
  EXPECT_EQ(s.next_task(), 2);
  s.report(2, 8, 1e-3, "done");
  EXPECT_EQ(s.next_task(), 0);
  s.report(0, 3, 1e-3, "done");
  EXPECT_EQ(s.next_task(), -1);
  EXPECT_EQ(s.trials_of(0), 19);
}

TEST(TaskScheduler, GradientSkipsFinishedTasksAndEndsWhenAllAre) {
  TaskScheduler s({1, 1});
  s.report(0, 8, 1e-3, "the tuner has no configs left");
  for (int turn = 0; turn < 5; ++turn) {
    ASSERT_EQ(s.next_task(), 1);
    s.report(1, 8, 1e-3);
  }
  s.report(1, 8, 1e-3, "stopped");
  EXPECT_EQ(s.next_task(), -1);
}

// Resumed trials reported before tuning starts: that task skips the warm-up.
TEST(TaskScheduler, WarmUpGivesATurnToEachTaskWithoutTrials) {
  TaskScheduler s({1, 1, 1});
  s.report(1, 40, 1e-3);
  EXPECT_EQ(s.next_task(), 0);
  s.report(0, 8, 1e-3);
  EXPECT_EQ(s.next_task(), 2);
  // Asking again before a report gives the same answer.
  EXPECT_EQ(s.next_task(), 2);
}

// A task whose every trial fails is retried like the fastest task that stopped improving:
// neither starved nor given the budget. With early stopping it ends.
TEST(TaskScheduler, TaskWithoutABestIsRetriedLikeTheFastestPlateauedTask) {
  std::vector<Curve> curves = {failing, improving, plateau};
  std::vector<double> weights = {1, 1, 1};
  TaskSchedulerOptions options;
  options.epsilon = 0;
  Simulation run = simulate_with(options, curves, weights, 512);
  EXPECT_GT(run.trials[0], 8);
  EXPECT_EQ(run.trials[0], run.trials[2]);
  EXPECT_GT(run.trials[1], 2 * run.trials[0]);

  options.early_stopping = 24;
  TaskScheduler s(weights, options);
  simulate(s, curves, weights, 512);
  EXPECT_EQ(s.trials_of(0), 24);
  EXPECT_EQ(s.why_finished(0), "early stopping: no better time in 24 trials");
}

// With no best anywhere the gradient is still defined: turns go by weight over trials.
TEST(TaskScheduler, EveryTaskFailingStillGivesTurnsByWeight) {
  std::vector<Curve> curves = {failing, failing};
  std::vector<double> weights = {1, 3};
  TaskSchedulerOptions options;
  options.epsilon = 0;
  Simulation run = simulate_with(options, curves, weights, 320);
  EXPECT_EQ(run.trials[0], 80);
  EXPECT_EQ(run.trials[1], 240);
}

TEST(TaskScheduler, EstimatedLatencyNeedsEveryTasksBest) {
  TaskScheduler s({2, 3});
  EXPECT_EQ(s.estimated_latency(), std::nullopt);
  s.report(0, 8, 1e-3);
  EXPECT_EQ(s.estimated_latency(), std::nullopt);
  s.report(1, 8, kInf);
  EXPECT_EQ(s.estimated_latency(), std::nullopt);
  s.report(1, 8, 2e-3);
  ASSERT_TRUE(s.estimated_latency().has_value());
  EXPECT_DOUBLE_EQ(*s.estimated_latency(), 2 * 1e-3 + 3 * 2e-3);
  EXPECT_DOUBLE_EQ(s.best_of(1), 2e-3);
}

TEST(TaskScheduler, SameSeedSameTasks) {
  std::vector<Curve> curves = {improving, plateau, improving};
  std::vector<double> weights = {1, 4, 2};
  TaskSchedulerOptions options;
  options.epsilon = 0.3;
  options.seed = 7;
  Simulation first = simulate_with(options, curves, weights, 400);
  Simulation again = simulate_with(options, curves, weights, 400);
  EXPECT_EQ(first.order, again.order);
  options.seed = 8;
  Simulation other_seed = simulate_with(options, curves, weights, 400);
  EXPECT_NE(first.order, other_seed.order);
}

// epsilon = 1: every turn after the warm-up goes to a random unfinished task.
TEST(TaskScheduler, EpsilonPicksRandomUnfinishedTasks) {
  TaskSchedulerOptions options;
  options.epsilon = 1;
  options.seed = 3;
  TaskScheduler s({1, 1000, 1}, options);
  s.report(2, 8, 1e-3, "done");
  std::vector<int> turns(3, 0);
  for (int turn = 0; turn < 200; ++turn) {
    int task = s.next_task();
    ASSERT_NE(task, 2);
    ++turns[task];
    s.report(task, 8, 1e-3);
  }
  // The gradient alone would give task 1 (weight 1000) nearly every turn.
  EXPECT_GT(turns[0], 70);
  EXPECT_GT(turns[1], 70);
}

void expect_user_error(const std::function<void()>& f, const std::string& key) {
  try {
    f();
    ADD_FAILURE() << "no UserError; expected one mentioning '" << key << "'";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
  }
}

// A model with two ways of building it (task 0 in both, task 1 in way 0 only, task 2 in
// way 1 only): after the warm-up the turns follow the way estimated fastest, and the
// estimate is the least of the two ways'; once that way's tasks are finished, the other's.
TEST(TaskScheduler, TwoWaysTheTurnsFollowTheFasterWay) {
  TaskSchedulerOptions options;
  options.epsilon = 0;
  options.early_stopping = 64;
  WeightsByWay ways{{{1, 2, 0}, {1, 0, 2}}};
  TaskScheduler s(ways, options);
  EXPECT_EQ(s.num_ways(), 2);
  auto slow = [](int) { return 5e-3; };
  Simulation run = simulate(s, {improving, plateau, slow}, {1, 2, 2}, 160);
  EXPECT_EQ(run.order[0], 0);
  EXPECT_EQ(run.order[1], 1);
  EXPECT_EQ(run.order[2], 2);
  // Task 1 plateaus at 0.1 ms, task 2 at 5 ms: way 0 is the fastest, and task 2 gets the
  // warm-up turn alone.
  EXPECT_EQ(s.trials_of(2), 8);
  EXPECT_GT(s.trials_of(0), s.trials_of(1));
  ASSERT_TRUE(s.estimated_latency(0) && s.estimated_latency(1));
  EXPECT_DOUBLE_EQ(*s.estimated_latency(), *s.estimated_latency(0));
  EXPECT_LT(*s.estimated_latency(0), *s.estimated_latency(1));
  // The fastest way (task 0) finished: the gradient follows way 1 (tasks 1 and 2) and
  // picks its slower task, not the lower index.
  TaskScheduler finished(WeightsByWay{{{1, 0, 0}, {0, 1, 1}}}, options);
  finished.report(0, 8, 1e-5, "done");
  finished.report(1, 8, 1e-4);
  finished.report(2, 8, 5e-3);
  EXPECT_EQ(finished.next_task(), 2);
}

TEST(TaskScheduler, BadInputIsAUserError) {
  expect_user_error([] { TaskScheduler(std::vector<double>{}); }, "no weights");
  expect_user_error([] { TaskScheduler(WeightsByWay{{}}); }, "no weights");
  expect_user_error([] { TaskScheduler(WeightsByWay{{{1, 0}, {1}}}); }, "way 1 of the model weighs 1 tasks");
  expect_user_error([] { TaskScheduler(WeightsByWay{{{1, 0}, {1, 0}}}); },
                    "task 1 has weight 0 in every way");
  expect_user_error([] { TaskScheduler(WeightsByWay{{{1, -1}, {1, 1}}}); }, "positive finite");
  expect_user_error([] { TaskScheduler({1, 0}); }, "task 1 has weight 0");
  expect_user_error([] { TaskScheduler({-2}); }, "positive finite");
  expect_user_error([] { TaskScheduler({kInf}); }, "positive finite");
  expect_user_error([] { TaskScheduler({std::nan("")}); }, "positive finite");
  auto with = [](auto set) {
    TaskSchedulerOptions o;
    set(o);
    return o;
  };
  expect_user_error([&] { TaskScheduler({1}, with([](auto& o) { o.backward_window = 0; })); }, "backward window");
  expect_user_error([&] { TaskScheduler({1}, with([](auto& o) { o.alpha = 1.5; })); }, "alpha is 1.5");
  expect_user_error([&] { TaskScheduler({1}, with([](auto& o) { o.alpha = -0.1; })); }, "alpha");
  expect_user_error([&] { TaskScheduler({1}, with([](auto& o) { o.epsilon = 2; })); }, "epsilon");
  expect_user_error([&] { TaskScheduler({1}, with([](auto& o) { o.early_stopping = -1; })); }, "early stopping");

  TaskScheduler s({1, 1});
  expect_user_error([&] { s.report(2, 8, 1e-3); }, "no task 2");
  expect_user_error([&] { s.report(-1, 8, 1e-3); }, "no task -1");
  expect_user_error([&] { s.trials_of(5); }, "trials_of(): there is no task 5; the scheduler has tasks 0 to 1");
  expect_user_error([&] { s.report(0, -8, 1e-3); }, "cannot be negative");
  expect_user_error([&] { s.report(0, 8, 0); }, "positive number of seconds");
  expect_user_error([&] { s.report(0, 8, std::nan("")); }, "positive number of seconds");
  s.report(0, 8, 1e-3);
  expect_user_error([&] { s.report(0, 8, 2e-3); }, "worse than its earlier best");
  s.report(1, 8, 1e-3, "done");
  expect_user_error([&] { s.report(1, 8, 1e-3); }, "task 1 is finished (done)");
}

}  // namespace
}  // namespace temper::search
