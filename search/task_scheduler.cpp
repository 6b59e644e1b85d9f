#include "search/task_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "compiler/ir/error.h"

namespace temper::search {

namespace {

constexpr double kNoBest = std::numeric_limits<double>::infinity();

// Uniform in [0, 1) from the generator's raw bits: std::uniform_real_distribution is not
// specified bit for bit, and a seed must give the same tasks with every standard library.
double uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

}  // namespace

TaskScheduler::TaskScheduler(std::vector<double> weights, TaskSchedulerOptions options)
    : TaskScheduler(WeightsByWay{{std::move(weights)}}, options) {}

TaskScheduler::TaskScheduler(WeightsByWay ways, TaskSchedulerOptions options)
    : weights_(std::move(ways.weights)), options_(options), rng_(options.seed) {
  if (weights_.empty() || weights_[0].empty()) {
    throw UserError("the task scheduler needs at least one task; it was given no weights");
  }
  size_t num_tasks = weights_[0].size();
  for (size_t w = 0; w < weights_.size(); ++w) {
    if (weights_[w].size() != num_tasks) {
      throw UserError(str("way ", w, " of the model weighs ", weights_[w].size(), " tasks and way 0 ", num_tasks,
                          "; every way gives a weight (0 when it does not run it) to every task"));
    }
  }
  for (size_t i = 0; i < num_tasks; ++i) {
    bool run = false;
    for (size_t w = 0; w < weights_.size(); ++w) {
      double weight = weights_[w][i];
      bool bad = !std::isfinite(weight) || weight < 0 || (weights_.size() == 1 && weight == 0);
      if (bad) {
        throw UserError(str("task ", i, " has weight ", weight,
                            "; a task's weight is how often the model runs it, a positive finite number"));
      }
      run = run || weight > 0;
    }
    if (!run) throw UserError(str("task ", i, " has weight 0 in every way of building the model; no way runs it"));
  }
  if (options.backward_window < 1) {
    throw UserError(
        str("the task scheduler's backward window is ", options.backward_window, " turns; it must be at least 1"));
  }
  if (!(options.alpha >= 0 && options.alpha <= 1)) {
    throw UserError(str("the task scheduler's alpha is ", options.alpha, "; it must be in [0, 1]"));
  }
  if (!(options.epsilon >= 0 && options.epsilon <= 1)) {
    throw UserError(str("the task scheduler's epsilon is ", options.epsilon, "; it must be in [0, 1]"));
  }
  if (options.early_stopping < 0) {
    throw UserError(str("the task scheduler's early stopping is ", options.early_stopping,
                        " trials; it must be at least 0 (0: never)"));
  }
  tasks_.resize(num_tasks);
}

int TaskScheduler::next_task() {
  if (!proposed_) proposed_ = choose();
  return *proposed_;
}

int TaskScheduler::choose() {
  bool any_unfinished =
      std::any_of(tasks_.begin(), tasks_.end(), [](const TaskState& t) { return t.finished_because.empty(); });
  if (!any_unfinished) return -1;
  if (options_.strategy == TaskSchedulerStrategy::RoundRobin) return choose_round_robin();
  return choose_by_gradient();
}

int TaskScheduler::choose_round_robin() const {
  // choose() has checked that some task is unfinished, so this ends.
  int i = last_reported_;
  do {
    i = (i + 1) % num_tasks();
  } while (!tasks_[i].finished_because.empty());
  return i;
}

int TaskScheduler::choose_by_gradient() {
  std::vector<int> unfinished;
  for (int i = 0; i < num_tasks(); ++i) {
    if (tasks_[i].finished_because.empty()) unfinished.push_back(i);
  }
  // The warm-up: the gradient needs at least one trial of each task.
  for (int i : unfinished) {
    if (tasks_[i].trials == 0) return i;
  }
  if (options_.epsilon > 0 && uniform01(rng_) < options_.epsilon) {
    return unfinished[rng_() % unfinished.size()];
  }
  double fastest_best = kNoBest;
  for (const TaskState& t : tasks_) fastest_best = std::min(fastest_best, t.best);
  double unknown_best_stand_in = std::isfinite(fastest_best) ? fastest_best : 1.0;
  int way = followed_way(unknown_best_stand_in);
  int chosen = unfinished.front();
  double chosen_gradient = gradient(chosen, way, unknown_best_stand_in);
  for (int i : unfinished) {
    double g = gradient(i, way, unknown_best_stand_in);
    if (g < chosen_gradient) {
      chosen = i;
      chosen_gradient = g;
    }
  }
  return chosen;
}

int TaskScheduler::followed_way(double unknown_best_stand_in) const {
  int followed = -1;
  double followed_latency = kNoBest;
  for (int w = 0; w < num_ways(); ++w) {
    double latency = 0;
    bool open = false;
    for (int i = 0; i < num_tasks(); ++i) {
      if (weights_[w][i] == 0) continue;
      open = open || tasks_[i].finished_because.empty();
      latency += weights_[w][i] * (std::isfinite(tasks_[i].best) ? tasks_[i].best : unknown_best_stand_in);
    }
    if (open && (followed < 0 || latency < followed_latency)) {
      followed = w;
      followed_latency = latency;
    }
  }
  TEMPER_CHECK(followed >= 0, "followed_way: no way has an unfinished task, though a task is unfinished");
  return followed;
}

double TaskScheduler::gradient(int task, int way, double unknown_best_stand_in) const {
  const TaskState& t = tasks_[task];
  TEMPER_CHECK(t.trials > 0, "the gradient of task ", task, " is asked before its warm-up turn");
  double best = std::isfinite(t.best) ? t.best : unknown_best_stand_in;
  double forward = -best / t.trials;
  double backward = 0;
  int window = options_.backward_window;
  if (static_cast<int>(t.turns.size()) > window) {
    const Turn& now = t.turns.back();
    const Turn& then = t.turns[t.turns.size() - 1 - window];
    int trials_between = now.trials_after - then.trials_after;
    // Bests only decrease, so a finite older best makes the newer one finite too.
    if (trials_between > 0 && std::isfinite(then.best_after)) {
      backward = (now.best_after - then.best_after) / trials_between;
    }
  }
  return weights_[way][task] * (options_.alpha * backward + (1 - options_.alpha) * forward);
}

void TaskScheduler::report(int task, int trials, double best_s, const std::string& finished_because) {
  check_task(task, "report()");
  TaskState& t = tasks_[task];
  if (!t.finished_because.empty()) {
    throw UserError(str("report(): task ", task, " is finished (", t.finished_because, ") and takes no more turns"));
  }
  if (trials < 0) {
    throw UserError(str("report(): task ", task, " spent ", trials, " trials; trials cannot be negative"));
  }
  if (std::isnan(best_s) || best_s <= 0) {
    throw UserError(str("report(): task ", task, "'s best time is ", best_s,
                        " s; give a positive number of seconds, or +inf while it has none"));
  }
  if (best_s > t.best) {
    throw UserError(str("report(): task ", task, "'s best time ", best_s, " s is worse than its earlier best ", t.best,
                        " s; report the best so far over all its turns"));
  }
  if (best_s < t.best) {
    t.best = best_s;
    t.trials_since_better = 0;
  } else {
    t.trials_since_better += trials;
  }
  t.trials += trials;
  t.turns.push_back(Turn{.trials_after = t.trials, .best_after = t.best});
  if (!finished_because.empty()) {
    t.finished_because = finished_because;
  } else if (options_.early_stopping > 0 && t.trials_since_better >= options_.early_stopping) {
    t.finished_because = str("early stopping: no better time in ", options_.early_stopping, " trials");
  }
  last_reported_ = task;
  proposed_.reset();
}

std::optional<double> TaskScheduler::estimated_latency() const {
  std::optional<double> least;
  for (int w = 0; w < num_ways(); ++w) {
    std::optional<double> latency = estimated_latency(w);
    if (latency && (!least || *latency < *least)) least = latency;
  }
  return least;
}

std::optional<double> TaskScheduler::estimated_latency(int way) const {
  if (way < 0 || way >= num_ways()) {
    throw UserError(str("estimated_latency(): there is no way ", way, "; the scheduler has ways 0 to ", num_ways() - 1));
  }
  double latency = 0;
  for (int i = 0; i < num_tasks(); ++i) {
    if (weights_[way][i] == 0) continue;
    if (!std::isfinite(tasks_[i].best)) return std::nullopt;
    latency += weights_[way][i] * tasks_[i].best;
  }
  return latency;
}

int TaskScheduler::trials_of(int task) const {
  check_task(task, "trials_of()");
  return tasks_[task].trials;
}

double TaskScheduler::best_of(int task) const {
  check_task(task, "best_of()");
  return tasks_[task].best;
}

bool TaskScheduler::finished(int task) const {
  check_task(task, "finished()");
  return !tasks_[task].finished_because.empty();
}

std::string TaskScheduler::why_finished(int task) const {
  check_task(task, "why_finished()");
  return tasks_[task].finished_because;
}

void TaskScheduler::check_task(int task, const char* caller) const {
  if (task < 0 || task >= num_tasks()) {
    throw UserError(str(caller, ": there is no task ", task, "; the scheduler has tasks 0 to ", num_tasks() - 1));
  }
}

}  // namespace temper::search
