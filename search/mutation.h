// Mutations of an auto-scheduled candidate (Ansor / MetaSchedule): one decision of its
// trace changed, the kind of decision chosen by weight.
//
//   tile size         one factor of a perfect tile moves to another level of the same
//                     loop (a prime factor divides one level and multiplies another), the
//                     innermost staying within its bound: the product, and so the loop, is kept
//   compute location  another of the candidate places of a stage
//   parallel          another count of fused outer loops
//   unroll            another auto-unroll limit
//   thread extent     (GPU) another count of threads per block of a nest no rule bound
//
// The result is the candidate's decisions with one changed; AutoSpace::instantiate turns
// them into the neighbour (decisions the change made unfitting are drawn anew).
#pragma once

#include <optional>
#include <random>

#include "schedule_space/auto_space.h"

namespace temper::search {

struct MutationWeights {
  double tile_size = 0.90;
  double compute_location = 0.05;
  double parallel = 0.03;
  double unroll = 0.02;
  double thread_extent = 0.03;
};

// nullopt when the candidate has no decision a mutation can change.
std::optional<schedule_space::Decisions> mutate(const schedule_space::AutoCandidate& candidate,
                                                const MutationWeights& weights, std::mt19937_64& rng);

}  // namespace temper::search
