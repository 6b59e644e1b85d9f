// Evolutionary search over an AutoSpace under the cost model (Ansor's, scaled to a
// small machine). For each batch:
//
//   1. an initial population: the best measured candidates so far (at most
//      seeds_from_measured) and random candidates of random sketches;
//   2. `generations` rounds: the population is scored by the cost model; parents are drawn
//      with probability growing with their score; each child is a parent with one
//      decision mutated (mutation.h: tile sizes, compute location, parallel granularity,
//      unroll, chosen by weight); the best few of a round survive into the next;
//   3. the batch: an epsilon-greedy share of the random candidates, the best-scored
//      candidate of the sketch measured least so far, the best-scored candidate of the
//      register-tile shape measured least so far, then the best-scored candidates met
//      on the way, at most half of the batch from one sketch while others have
//      candidates, so that a wrong model cannot keep a region unexplored.
//
// Random candidates of a tiled sketch are held to a register-tile prior on CPU
// (candidate_limits.h: most draws whose tile is under 4 vectors are dropped), and every
// candidate to the target's limits (a register tile over the vector registers, a GPU
// kernel over the device's).
//
// Every candidate is lowered to be scored (its features are those of its lowered program,
// cost_model/features.h), and a candidate that does not lower is dropped. Candidates are
// told apart by a structural hash of the lowered program: nothing measured or proposed
// before is proposed again, however its trace was reached. Until the model has fitted on a
// successful measurement every score is equal and the batch is random.
//
// Lowering and featurizing run in parallel (OpenMP); random draws are serial, so the same
// seed, space, model and results give the same batches.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "search/candidate_limits.h"
#include "cost_model/cost_model.h"
#include "schedule_space/auto_space.h"
#include "search/mutation.h"

namespace temper::search {

struct EvolutionOptions {
  int population = 256;
  int generations = 4;
  int seeds_from_measured = 16;
  double survivors = 0.1;  // share of a round's best kept into the next
  double epsilon = 0.05;   // share of each batch drawn from the random candidates
  MutationWeights mutation;
};

// A candidate with what the search knows of it.
struct ScoredCandidate {
  schedule_space::AutoCandidate candidate;
  uint64_t hash = 0;            // of the lowered program
  std::vector<float> features;  // of the lowered program
  double score = 0;
};

// The structural hash and features of a candidate's lowered program; nullopt when it does
// not lower or breaks the limits (a GPU kernel with too many threads or too much shared
// memory, a CPU register tile larger than the registers). Safe to call from several threads.
std::optional<ScoredCandidate> evaluate(schedule_space::AutoCandidate candidate, const CandidateLimits& limits = {});

class EvolutionarySearch {
 public:
  // group: the cost_model::Sample group of this job's measurements (search::sample_group).
  EvolutionarySearch(const schedule_space::AutoSpace& space, std::unique_ptr<cost_model::CostModel> model,
                     std::string group, uint64_t seed, EvolutionOptions options = {});

  // Measured candidates -- this job's, or the log's on resume: never proposed again,
  // seeds of later populations, and samples the model re-fits on (once per call). costs
  // in seconds, +infinity for a failure.
  void add_measured(const std::vector<schedule_space::AutoCandidate>& candidates, const std::vector<double>& costs);
  // Marks a lowered program as measured (the default schedule, which is no candidate).
  void mark_measured(uint64_t hash) { seen_.insert(hash); }

  // At most n candidates never measured nor proposed. Empty when the search finds nothing
  // new. UserError when no random candidate of the space lowers (a bounded number of draws).
  std::vector<schedule_space::AutoCandidate> next_batch(int n);

  const cost_model::CostModel& model() const { return *model_; }

 private:
  const schedule_space::AutoSpace& space_;
  std::unique_ptr<cost_model::CostModel> model_;
  std::string group_;
  EvolutionOptions options_;
  std::mt19937_64 rng_;
  CandidateLimits limits_;
  std::unordered_set<uint64_t> seen_;                               // measured or proposed
  std::vector<std::pair<double, schedule_space::AutoCandidate>> measured_;  // valid ones, best first
  std::map<int, int> measured_per_sketch_;                                  // failures included
  std::map<std::pair<int64_t, int64_t>, int> measured_per_tile_;            // by register-tile shape

  // What to instantiate: a sketch with decisions, the missing ones drawn from seed.
  struct Spec {
    int sketch;
    schedule_space::Decisions decisions;
    uint64_t seed;
  };
  // A lowered program's hash and features, by its sketch and decisions.
  struct Evaluation {
    bool lowers = false;
    uint64_t hash = 0;
    std::vector<float> features;
  };
  std::unordered_map<std::string, Evaluation> memo_;

  // The specs instantiated and evaluated (in parallel); the ones that fail are left out.
  // random_draws: specs without decisions, held to the register-tile prior.
  std::vector<ScoredCandidate> evaluate_all(const std::vector<Spec>& specs, bool random_draws = false);
  std::vector<ScoredCandidate> initial_population(std::vector<ScoredCandidate>& random);
  std::vector<ScoredCandidate> evolve(const std::vector<ScoredCandidate>& population);
  void score(std::vector<ScoredCandidate>& candidates) const;
};

}  // namespace temper::search
