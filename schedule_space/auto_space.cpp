#include "schedule_space/auto_space.h"

#include <algorithm>
#include <thread>

#include "compiler/codegen/gpu/gpu_limits.h"

namespace temper::schedule_space {

Decisions AutoCandidate::decisions() const {
  Decisions out;
  for (const Instruction& inst : schedule.trace().instructions()) {
    if (inst.decision) out.push_back(inst.decision);
  }
  return out;
}

AutoSpace::AutoSpace(const ops::Workload& workload, const Target& target, SketchRules rules)
    : workload_(workload), op_(ops::instantiate(workload)) {
  if (rules.empty()) rules = default_sketch_rules(target);
  ctx_.target = target;
  ctx_.num_cores = target.num_cores > 0 ? target.num_cores : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (target.is_gpu()) ctx_.max_threads_per_block = gpu_limits(target).max_threads_per_block;
  sketches_ = generate_sketches(op_.func, ctx_, rules);
}

AutoCandidate AutoSpace::instantiate(int sketch, const Decisions& decisions, uint64_t seed) const {
  TEMPER_CHECK(sketch >= 0 && sketch < static_cast<int>(sketches_.size()), "no sketch ", sketch);
  const Sketch& sk = sketches_[sketch];
  Decisions tiles(decisions.begin(), decisions.begin() + std::min<size_t>(decisions.size(), sk.num_decisions));
  // Decisions not given are drawn: an empty optional for each.
  tiles.resize(sk.num_decisions);
  AutoCandidate c{sketch, sk.trace.replay_with(op_.func, tiles, seed), {}};
  c.kinds.assign(sk.num_decisions, DecisionKind::TileSize);
  std::vector<DecisionKind> more = annotate_randomly(c.schedule, sk.tiled, ctx_, decisions, sk.num_decisions);
  c.kinds.insert(c.kinds.end(), more.begin(), more.end());
  return c;
}

std::vector<AutoCandidate> AutoSpace::sample(int count, std::mt19937_64& rng,
                                             const std::function<bool(const AutoCandidate&)>& valid) const {
  std::vector<AutoCandidate> out;
  const int max_draws = std::max(64, 16 * count);
  int draws = 0;
  std::string last_reason = "every candidate was rejected";
  std::uniform_int_distribution<int> pick(0, static_cast<int>(sketches_.size()) - 1);
  while (static_cast<int>(out.size()) < count && draws < max_draws) {
    ++draws;
    try {
      AutoCandidate c = instantiate(pick(rng), {}, rng());
      if (valid(c)) {
        out.push_back(std::move(c));
      } else {
        last_reason = "the candidate did not lower";
      }
    } catch (const ScheduleError& e) {
      last_reason = e.what();
    }
  }
  if (out.empty()) {
    throw UserError(str("the auto-scheduler found no valid candidate for ", workload_.to_string(), " on ",
                        ctx_.target.to_string(), " in ", draws, " random draws from ", sketches_.size(),
                        " sketches (last: ", last_reason, "); tune it with --space template if it has a template"));
  }
  return out;
}

std::optional<AutoCandidate> AutoSpace::from_trace(const Trace& trace) const {
  Decisions decisions;
  for (const Instruction& inst : trace.instructions()) {
    if (inst.decision) decisions.push_back(inst.decision);
  }
  for (size_t k = 0; k < sketches_.size(); ++k) {
    if (!same_structure(sketches_[k].trace, trace)) continue;
    try {
      return instantiate(static_cast<int>(k), decisions, 0);
    } catch (const ScheduleError&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace temper::schedule_space
