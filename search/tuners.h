// The tuners make_tuner builds (tuner.h says what each does).
#pragma once

#include <random>
#include <vector>

#include "search/tuner.h"

namespace temper::search {

class RandomTuner : public Tuner {
 public:
  RandomTuner(const schedule_space::ConfigSpace& space, uint64_t seed);
  std::string name() const override { return "random"; }
  bool has_next() const override { return !exhausted_; }
  std::vector<schedule_space::Config> next_batch(int n) override;

 private:
  std::mt19937_64 rng_;
  bool exhausted_ = false;
  // Small spaces are walked in a shuffled order, so the last configs are found too.
  std::vector<int64_t> order_;
  size_t next_ = 0;
};

class GridTuner : public Tuner {
 public:
  explicit GridTuner(const schedule_space::ConfigSpace& space) : Tuner(space) {}
  std::string name() const override { return "grid"; }
  bool has_next() const override { return next_ < space_.size(); }
  std::vector<schedule_space::Config> next_batch(int n) override;

 private:
  int64_t next_ = 0;
};

class GATuner : public Tuner {
 public:
  GATuner(const schedule_space::ConfigSpace& space, uint64_t seed, int population = 32, int elites = 4,
          double mutation_prob = 0.1);
  std::string name() const override { return "ga"; }
  bool has_next() const override { return !exhausted_; }
  std::vector<schedule_space::Config> next_batch(int n) override;
  void update(const std::vector<schedule_space::Config>& configs, const std::vector<double>& costs) override;

 private:
  std::mt19937_64 rng_;
  int population_;
  int elites_;
  double mutation_prob_;
  bool exhausted_ = false;
  // Every measured config with its fitness (1 / seconds; 0 for a failure).
  std::vector<std::pair<std::vector<int64_t>, double>> scored_;
  std::vector<schedule_space::Config> pending_;  // the current generation, not yet proposed

  void breed();
  std::vector<int64_t> child(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
};

}  // namespace temper::search
