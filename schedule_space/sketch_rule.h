// Sketch rules (Ansor's derivation rules): each looks at one stage -- a block -- of a
// partly scheduled program and says whether it applies; applied, it returns the programs
// it makes of it (one, or several when it forks: fusion at two tile levels, rfactor with
// either loop). generate_sketches (sketch_generation.h) applies the rules to the stages
// from the last to the first.
//
// A rule's condition is one of
//   Skip          the rule does not apply to this stage;
//   Apply         the rule applies, and the rules after it are still tried on the stage
//                 as it was (the two results are alternative sketches);
//   ApplyAndStop  the rule applies, and no rule after it is tried on the stage.
// Each state a rule returns names the stage to visit next: the stage before this one
// (SketchState::advance), or the same stage again (a cache-write rule adds a stage and
// lets the tiling rules take the block it changed).
//
// Tile sizes are sampling instructions (sample_perfect_tile) whose decisions a sketch
// leaves open: random annotation draws them anew, mutation changes them.
//
// Adding a rule: derive from SketchRule and put it into the list given to
// generate_sketches, where its place in the list is its priority:
//
//   class InlineEverything : public SketchRule {
//     std::string name() const override { return "inline-everything"; }
//     Condition condition(const SketchState& s, const StageFacts& f, const SketchContext&) const override {
//       return f.is_reduction || f.writes_param ? Condition::Skip : Condition::ApplyAndStop;
//     }
//     std::vector<SketchState> apply(const SketchState& s, const StageFacts& f, const SketchContext&) const override {
//       SketchState next = s;
//       next.schedule.compute_inline(next.schedule.get_block(f.name));
//       next.advance(f.name);
//       return {next};
//     }
//   };
//   std::vector<std::shared_ptr<const SketchRule>> rules = default_sketch_rules(target);
//   rules.insert(rules.begin(), std::make_shared<InlineEverything>());
//
// A rule that throws ScheduleError from apply is taken as not applying to that state.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/schedule/schedule.h"
#include "compiler/target/target.h"
#include "schedule_space/stage_analysis.h"

namespace temper::schedule_space {

struct SketchContext {
  Target target;
  int num_cores = 1;             // threads a CPU schedule should keep busy
  int max_innermost_factor = 64;  // bound of the innermost tile of every tiled loop
  int64_t max_threads_per_block = 0;  // GPU targets: the device's (codegen/gpu/gpu_limits.h)
};

struct SketchState {
  Schedule schedule;
  std::string stage;             // the block the rules look at next; "" when every stage is done
  std::set<std::string> tiled;   // blocks whose loops a tiling rule laid out: annotation keeps their structure
  std::vector<std::string> steps;  // what the rules did, for the sketch's description
  // (rule name, block) for every rule application so far: a rule that leaves the stage
  // where it is checks this so as to apply once.
  std::set<std::pair<std::string, std::string>> applied;
  // Stages a rule added on purpose (a packing copy): never inlined back.
  std::set<std::string> keep;
  // Per stage, its packing copy: the tiling rule computes it per panel (AddCacheReadForPacking).
  std::map<std::string, std::string> panel_copy;
  // Per stage, the loop its register tile is vectorized along where a rule chose one
  // other than the innermost (StageFacts::vector_axes).
  std::map<std::string, int> vector_loop;

  // The vector axis chosen for `stage`: the innermost spatial one unless a rule chose
  // another; nullptr when the stage has none.
  const VectorAxis* vector_axis(const StageFacts& stage) const;

  // Moves on to the stage before `block` in program order ("" when it is the first).
  void advance(const std::string& block);
};

enum class Condition { Skip, Apply, ApplyAndStop };

class SketchRule {
 public:
  virtual ~SketchRule() = default;
  virtual std::string name() const = 0;
  virtual Condition condition(const SketchState& state, const StageFacts& stage, const SketchContext& ctx) const = 0;
  virtual std::vector<SketchState> apply(const SketchState& state, const StageFacts& stage,
                                         const SketchContext& ctx) const = 0;
};

using SketchRules = std::vector<std::shared_ptr<const SketchRule>>;

// The built-in rules for a target, in priority order. CPU: always-inline, the choice of
// another vector axis (a window stage), cache-read for packing (in the vector axis's
// layout), cache-write, multi-level tiling with fusion (after S0 or S1), multi-level tiling
// (SSRSRS), rfactor, skip. GPU: always-inline, multi-level tiling (SSSRRSRS) with
// shared-memory cache reads and a register tile, cross-thread reduction, skip.
SketchRules default_sketch_rules(const Target& target);

// The stage before `block` in s's program order, "" for the first.
std::string stage_before(const Schedule& s, const std::string& block);

}  // namespace temper::schedule_space
