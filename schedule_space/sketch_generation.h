// Sketch generation (Ansor): the sketch rules (sketch_rule.h) applied to the stages of a
// compute definition from the last to the first. Every state that reaches the first
// stage is a sketch: a schedule structure whose tile sizes are still open.
//
//   SketchContext ctx{target, num_cores};
//   std::vector<Sketch> sketches = generate_sketches(op.func, ctx, default_sketch_rules(target));
//   // matmul on CPU: three -- tiled SSRSRS; cache-write + tiled with the copy fused at S1; at S2
//
// A sketch is kept as the trace of the schedule the rules built; its sampling
// instructions hold placeholder decisions, which random annotation (random_annotation.h)
// replaces. Sketches with the same instructions (decisions aside) are one sketch.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "compiler/schedule/trace.h"
#include "schedule_space/sketch_rule.h"

namespace temper::schedule_space {

struct Sketch {
  Trace trace;
  std::set<std::string> tiled;  // blocks whose loops a tiling rule laid out
  std::string description;      // the rules' steps: "tile matmul SSRSRS, fuse relu at S2"
  int num_decisions = 0;        // sampling instructions in trace
};

// At most max_sketches sketches (UserError beyond: a rule set that forks without end).
std::vector<Sketch> generate_sketches(const PrimFunc& func, const SketchContext& ctx, const SketchRules& rules,
                                      int max_sketches = 64);

// Whether `b` starts with the instructions of `a`, decisions aside: a candidate's trace
// starts with its sketch's.
bool same_structure(const Trace& a, const Trace& b);

}  // namespace temper::schedule_space
