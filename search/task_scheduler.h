// The task scheduler: which task of a model gets the next turn of tuning, when the tasks
// share one trial budget and one time budget (Ansor, OSDI 2020, section 6; TVM's
// auto_scheduler/task_scheduler.py). It is a policy only: the caller runs each turn
// (a batch of trials through search::tune), reports its outcome, and owns the budgets.
//
// The objective is the model's end-to-end latency, estimated as sum_i weight_i * best_i,
// where weight_i is how often the model runs task i and best_i its best time so far.
// A model that a build may lay out in several ways (the blocked layout's block sizes) has
// one weight vector per way, over the tasks of all of them (0 where a way does not run a
// task), and the objective is the least of the ways' latencies (Ansor's objective over
// several networks, with min for sum): the gradient turns follow the way estimated
// fastest so far, taking its weights, and a task only other ways run gets the random
// epsilon turns alone. A way whose every task is finished is no longer followed.
//
//   RoundRobin  tasks in index order, cyclically after the last reported one, skipping
//               finished ones.
//   Gradient    first every task without trials gets a turn, in index order (the warm-up;
//               tasks already reported with resumed trials skip it). Then the task with
//               the most negative gradient of the objective, ties to the lower index:
//                 grad_i = weight_i * (alpha * backward_i + (1 - alpha) * forward_i)
//                 backward_i = (best_i now - best_i `backward_window` turns ago)
//                              / (trials of task i in those turns)
//                 forward_i  = -best_i / trials_i
//               backward_i is the observed slope of the task's best per trial (0 until it
//               has window + 1 turns, when the turns had no trials, or when the older best
//               is unknown). forward_i is Ansor's optimistic guess, the slope of a best
//               that keeps falling as 1 / trials; this is Ansor's forward term without its
//               similar-task bound (Temper has no task similarity). It does not see a
//               plateau: a heavy task that stopped improving keeps its share of turns
//               until early stopping ends it. With probability `epsilon` a uniformly
//               random unfinished task is picked instead, from a generator seeded by `seed`.
//
// A task whose best is unknown (+inf: every trial failed so far) counts in the gradient
// as if it were as fast as the fastest task with a best (1 s when no task has one) and had
// stopped improving: it is retried, as often as such a task would be, never starved and
// never given every turn. Early stopping ends it like any other task that stops improving.
//
// Early stopping (both strategies): a task whose best did not improve in its last
// `early_stopping` trials is finished, why_finished() saying "early stopping: no better
// time in N trials". Trials are reported per turn, so an improvement counts as made on
// the turn's last trial.
//
// next_task() is deterministic: the same options, weights and reports give the same
// tasks, and calling it again before the next report() returns the same task.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace temper::search {

enum class TaskSchedulerStrategy { Gradient, RoundRobin };

// How often each way of building the model runs each task: weights[way][task].
struct WeightsByWay {
  std::vector<std::vector<double>> weights;
};

struct TaskSchedulerOptions {
  TaskSchedulerStrategy strategy = TaskSchedulerStrategy::Gradient;
  int backward_window = 3;  // turns of a task the backward gradient looks back over (at least 1)
  double alpha = 0.2;       // weight of the backward (observed) gradient against the forward guess, in [0, 1]
  int early_stopping = 0;   // a task with no better time in this many of its trials is finished (0: never)
  double epsilon = 0.05;    // share of gradient turns given to a random unfinished task, in [0, 1]
  uint64_t seed = 0;        // of those random picks
};

class TaskScheduler {
 public:
  // weights[i]: how often the model runs task i (its node count), positive and finite.
  // UserError for no tasks, a bad weight or a bad option.
  explicit TaskScheduler(std::vector<double> weights, TaskSchedulerOptions options = {});
  // ways.weights[w][i]: how often the model built the w-th way runs task i, finite and at
  // least 0, every task run by some way. UserError for no ways, ways of different task
  // counts, or as above.
  explicit TaskScheduler(WeightsByWay ways, TaskSchedulerOptions options = {});

  // The task to give the next turn to, or -1 when every task is finished.
  int next_task();

  // The outcome of a turn of `task` (not necessarily the one next_task() proposed; resumed
  // trials may be reported as a turn before tuning starts): the trials it spent, the task's
  // best time so far in seconds (+inf while it has none), and why the task can take no more
  // turns ("" while it can; e.g. "the tuner has no configs left"). A turn that spent no
  // trials tells nothing: a task that still has no trials is proposed again by the warm-up.
  // UserError for a task out of range or already finished, negative trials, a best that is
  // not a positive time or is worse than the task's earlier best.
  void report(int task, int trials, double best_s, const std::string& finished_because = "");

  // sum_i weight_i * best_i in seconds, the least over the ways whose every task has a
  // best; nullopt while none has (a task without one has an unknown share of the latency).
  std::optional<double> estimated_latency() const;
  // The same for one way.
  std::optional<double> estimated_latency(int way) const;
  int num_ways() const { return static_cast<int>(weights_.size()); }

  int num_tasks() const { return static_cast<int>(tasks_.size()); }
  int trials_of(int task) const;
  double best_of(int task) const;  // +inf while the task has no best
  bool finished(int task) const;
  std::string why_finished(int task) const;  // "" while the task is not finished

 private:
  struct Turn {
    int trials_after;   // the task's trials after this turn
    double best_after;  // and its best
  };
  struct TaskState {
    int trials = 0;
    double best = std::numeric_limits<double>::infinity();
    int trials_since_better = 0;
    std::vector<Turn> turns;
    std::string finished_because;
  };

  int choose();
  int choose_round_robin() const;
  int choose_by_gradient();
  // The way the gradient follows: the least latency (unknown bests as the stand-in) among
  // the ways with an unfinished task.
  int followed_way(double unknown_best_stand_in) const;
  double gradient(int task, int way, double unknown_best_stand_in) const;
  void check_task(int task, const char* caller) const;  // UserError naming the caller

  std::vector<TaskState> tasks_;
  std::vector<std::vector<double>> weights_;  // [way][task]
  TaskSchedulerOptions options_;
  std::mt19937_64 rng_;
  int last_reported_ = -1;
  std::optional<int> proposed_;  // next_task()'s answer until the next report
};

}  // namespace temper::search
