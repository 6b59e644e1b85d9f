// The auto-scheduler's space for one workload and target (Ansor): the sketches the rules
// derive from the op's compute definition, and the candidates random annotation makes
// of them. Unlike a template (template.h), nothing is written per op: any workload has
// an AutoSpace, and its candidates schedule op.func itself, so a log record of one is
// replayed with Trace::replay.
//
//   AutoSpace space(ops::Workload::parse("softmax:shape=128x768,axis=1"), Target::parse("llvm"));
//   std::mt19937_64 rng(0);
//   std::vector<AutoCandidate> initial = space.sample(64, rng, [](const AutoCandidate&) { return true; });
//   AutoCandidate c = space.instantiate(initial[0].sketch, changed_decisions, seed);   // a mutation
//
// A candidate's decisions are those of its trace's sampling instructions, in order: the
// sketch's tile sizes first, then the annotation's draws. Instantiating a sketch with a
// candidate's decisions rebuilds the candidate; with some changed, a neighbour, where
// decisions that no longer fit are drawn anew.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <vector>

#include "compiler/ops/workload.h"
#include "compiler/schedule/schedule.h"
#include "compiler/target/target.h"
#include "schedule_space/random_annotation.h"
#include "schedule_space/sketch_generation.h"

namespace temper::schedule_space {

struct AutoCandidate {
  int sketch = -1;
  Schedule schedule;
  std::vector<DecisionKind> kinds;  // what each sampling instruction of schedule.trace() decides

  Decisions decisions() const;
};

class AutoSpace {
 public:
  // rules empty: default_sketch_rules(target).
  AutoSpace(const ops::Workload& workload, const Target& target, SketchRules rules = {});

  const ops::Workload& workload() const { return workload_; }
  const ops::OpInstance& op() const { return op_; }
  const Target& target() const { return ctx_.target; }
  const SketchContext& context() const { return ctx_; }
  const std::vector<Sketch>& sketches() const { return sketches_; }

  // Sketch `sketch` with the given decisions (missing or unfitting ones drawn from seed).
  // ScheduleError when the result is not a legal schedule.
  AutoCandidate instantiate(int sketch, const Decisions& decisions, uint64_t seed) const;

  // `count` candidates drawn at random (a random sketch, random decisions) that pass
  // `valid`, trying at most max(64, 16 * count) draws. UserError, saying how many draws
  // failed and the last reason, when none passed; fewer than count is not an error.
  std::vector<AutoCandidate> sample(int count, std::mt19937_64& rng,
                                    const std::function<bool(const AutoCandidate&)>& valid) const;

  // The candidate a logged trace stands for -- the sketch it starts with, instantiated
  // with its decisions -- or nullopt when it comes from no sketch of this space (a
  // template's trace, or another version's rules).
  std::optional<AutoCandidate> from_trace(const Trace& trace) const;

 private:
  ops::Workload workload_;
  ops::OpInstance op_;
  SketchContext ctx_;
  std::vector<Sketch> sketches_;
};

}  // namespace temper::schedule_space
