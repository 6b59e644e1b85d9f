#include "schedule_space/sketch_generation.h"

namespace temper::schedule_space {
namespace {

std::string join(const std::vector<std::string>& steps) {
  std::string out;
  for (const std::string& s : steps) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "no rule applied" : out;
}

bool same_instruction(const Instruction& a, const Instruction& b) {
  return a.kind == b.kind && a.inputs == b.inputs && a.attrs == b.attrs && a.outputs == b.outputs;
}

}  // namespace

bool same_structure(const Trace& a, const Trace& b) {
  const std::vector<Instruction>& x = a.instructions();
  const std::vector<Instruction>& y = b.instructions();
  if (y.size() < x.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!same_instruction(x[i], y[i])) return false;
  }
  return true;
}

std::vector<Sketch> generate_sketches(const PrimFunc& func, const SketchContext& ctx, const SketchRules& rules,
                                      int max_sketches) {
  SketchState first{Schedule(func), "", {}, {}, {}, {}, {}};
  std::vector<std::string> names = stage_names(first.schedule);
  TEMPER_CHECK(!names.empty(), "function ", func.name, " has no block to schedule");
  first.stage = names.back();

  std::vector<SketchState> pending = {first};
  std::vector<Sketch> sketches;
  while (!pending.empty()) {
    SketchState state = std::move(pending.back());
    pending.pop_back();
    if (state.stage.empty()) {
      Sketch sketch{state.schedule.trace(), state.tiled, join(state.steps), 0};
      bool seen = false;
      for (const Sketch& s : sketches) {
        seen |= s.trace.instructions().size() == sketch.trace.instructions().size() &&
                same_structure(s.trace, sketch.trace);
      }
      if (seen) continue;
      for (const Instruction& inst : sketch.trace.instructions()) {
        sketch.num_decisions += inst.decision.has_value() ? 1 : 0;
      }
      sketches.push_back(std::move(sketch));
      if (static_cast<int>(sketches.size()) > max_sketches) {
        throw UserError(str("the sketch rules made more than ", max_sketches, " sketches of ", func.name,
                            "; a rule that forks on every stage needs a smaller rule set"));
      }
      continue;
    }
    StageFacts facts = stage_facts(state.schedule, state.stage);
    // Rules push in priority order; the stack pops the last first, so collect, then push reversed.
    std::vector<SketchState> made;
    for (const std::shared_ptr<const SketchRule>& rule : rules) {
      Condition c = rule->condition(state, facts, ctx);
      if (c == Condition::Skip) continue;
      std::vector<SketchState> results;
      try {
        results = rule->apply(state, facts, ctx);
      } catch (const ScheduleError&) {
        continue;  // the rule does not apply to this state after all
      }
      for (SketchState& r : results) {
        r.applied.insert({rule->name(), state.stage});
        made.push_back(std::move(r));
      }
      if (c == Condition::ApplyAndStop) break;
    }
    for (auto it = made.rbegin(); it != made.rend(); ++it) pending.push_back(std::move(*it));
  }
  return sketches;
}

}  // namespace temper::schedule_space
