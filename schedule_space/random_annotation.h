// Random annotation (Ansor): what a sketch leaves open, drawn at random, each draw a
// sampling instruction of the trace so that a search can mutate it later.
//
//   compute location  every stage no rule laid out (not tiled, not writing a parameter,
//                     alone in its loop nest, read by someone): at the root, inlined (if
//                     it is no reduction), or under one of its consumers' loops that
//                     enclose every consumer, outside their reduction loops;
//   parallel          per loop nest at the root: its leading loops that are spatial for
//                     every block in it and form a perfect nest are fused -- how many is
//                     drawn among the counts that give at least num_cores iterations --
//                     and the fused loop runs in parallel;
//   vectorize         every block's innermost loop, when it is serial, spatial and of
//                     constant extent 2..64 (not drawn);
//   unroll            per loop nest at the root, a pragma_auto_unroll_max_step from
//                     {0, 16, 64, 512} on its outermost loop;
//   reduction init    every reduction's init taken out of its reduction loops
//                     (decompose_reduction at the outermost one; not drawn).
//
// On GPU targets, instead of parallel and vectorize:
//   thread binding    per loop nest at the root that no rule bound: its leading spatial
//                     loops fused and split into blockIdx.x and threadIdx.x, the threads
//                     drawn from 32..1024 (within the device's limit);
//   cooperative fetch every shared-memory copy's own loops fused and spread over the
//                     threadIdx.x of the nest it is in (not drawn).
//
// The decisions of those draws are taken from `decisions` (as Trace::replay_with takes
// them) where given and valid, so that re-annotating with a candidate's own decisions
// rebuilds the candidate, and with one decision changed, its mutation.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/schedule/schedule.h"
#include "schedule_space/sketch_rule.h"

namespace temper::schedule_space {

// What a sampling instruction of an auto-scheduled trace decides (mutation picks by kind).
enum class DecisionKind { TileSize, ComputeLocation, Parallel, Unroll, ThreadExtent };

using Decisions = std::vector<std::optional<std::vector<int64_t>>>;

// The values the unroll draw chooses among.
inline const std::vector<int64_t>& auto_unroll_steps() {
  static const std::vector<int64_t> steps = {0, 16, 64, 512};
  return steps;
}

// Annotates s (an instantiated sketch whose laid-out blocks are `tiled`); the k-th draw
// takes decisions[first + k]. Returns the kind of each draw, in trace order. Steps the
// program refuses are left out (the trace then shows the draw without its step).
std::vector<DecisionKind> annotate_randomly(Schedule& s, const std::set<std::string>& tiled, const SketchContext& ctx,
                                            const Decisions& decisions, size_t first);

}  // namespace temper::schedule_space
