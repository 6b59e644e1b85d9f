// The built-in CPU sketch rules (Ansor's), the rules every target shares, and
// default_sketch_rules.
#include "schedule_space/sketch_rules.h"

#include <algorithm>

#include "schedule_space/multi_level_tiling.h"

namespace temper::schedule_space {

// The stage before `block` in program order, "" for the first.
std::string stage_before(const Schedule& s, const std::string& block) {
  std::vector<std::string> names = stage_names(s);
  auto it = std::find(names.begin(), names.end(), block);
  TEMPER_CHECK(it != names.end(), "no block ", block);
  return it == names.begin() ? "" : *(it - 1);
}

void SketchState::advance(const std::string& block) {
  stage = stage_before(schedule, block);
}

std::optional<std::string> fusible_consumer(const Schedule& s, const StageFacts& stage) {
  if (stage.consumers.size() != 1) return std::nullopt;
  const std::string& consumer = stage.consumers[0];
  if (!is_elementwise_consumer(s, stage.name, consumer)) return std::nullopt;
  return consumer;
}

namespace {

constexpr const char* kCpuStructure = "SSRSRS";
// Where a fused consumer goes: after the last loop of S0 or of S1, outside the reduction
// loops (inside one, its copy would run on partial sums).
constexpr size_t kCpuFusionLevels[] = {0, 1};

class AlwaysInline : public SketchRule {
 public:
  std::string name() const override { return "always-inline"; }
  Condition condition(const SketchState& state, const StageFacts& stage, const SketchContext&) const override {
    return stage.strictly_inlinable && !state.keep.count(stage.name) ? Condition::ApplyAndStop : Condition::Skip;
  }
  std::vector<SketchState> apply(const SketchState& state, const StageFacts& stage,
                                 const SketchContext&) const override {
    SketchState next = state;
    next.advance(stage.name);
    next.schedule.compute_inline(next.schedule.get_block(stage.name));
    next.steps.push_back(str("inline ", stage.name));
    return {next};
  }
};

class AddCacheReadForPacking : public SketchRule {
 public:
  std::string name() const override { return "cache-read"; }
  Condition condition(const SketchState& state, const StageFacts& stage, const SketchContext&) const override {
    // Once, and before a cache-write (the other order is the same sketch).
    bool once = !state.applied.count({name(), stage.name}) && !state.applied.count({"cache-write", stage.name});
    return once && stage.has_data_reuse && stage.packable_read ? Condition::Apply : Condition::Skip;
  }
  std::vector<SketchState> apply(const SketchState& state, const StageFacts& stage,
                                 const SketchContext&) const override {
    // The stage stays, for the tiling rules; the copy's place is drawn by annotation.
    SketchState next = state;
    BlockRV copy = next.schedule.cache_read(next.schedule.get_block(stage.name), *stage.packable_read, "global");
    next.keep.insert(next.schedule.block_name(copy));
    next.steps.push_back(str("cache-read ", next.schedule.block_name(copy)));
    return {next};
  }
};

class AddCacheWrite : public SketchRule {
 public:
  std::string name() const override { return "cache-write"; }
  Condition condition(const SketchState& state, const StageFacts& stage, const SketchContext&) const override {
    return stage.has_data_reuse && !fusible_consumer(state.schedule, stage) ? Condition::Apply : Condition::Skip;
  }
  std::vector<SketchState> apply(const SketchState& state, const StageFacts& stage,
                                 const SketchContext&) const override {
    // The stage stays: it now has an elementwise consumer (the copy) to fuse.
    SketchState next = state;
    next.schedule.cache_write(next.schedule.get_block(stage.name), 0, "local");
    next.steps.push_back(str("cache-write ", stage.name));
    return {next};
  }
};

class MultiLevelTilingWithFusion : public SketchRule {
 public:
  std::string name() const override { return "multi-level-tiling-with-fusion"; }
  Condition condition(const SketchState& state, const StageFacts& stage, const SketchContext&) const override {
    return stage.has_data_reuse && fusible_consumer(state.schedule, stage) ? Condition::ApplyAndStop
                                                                            : Condition::Skip;
  }
  std::vector<SketchState> apply(const SketchState& state, const StageFacts& stage,
                                 const SketchContext& ctx) const override {
    std::string consumer = *fusible_consumer(state.schedule, stage);
    std::vector<SketchState> out;
    for (size_t level : kCpuFusionLevels) {
      SketchState next = state;
      next.advance(stage.name);
      Schedule& s = next.schedule;
      TiledLoops tiles = multi_level_tile(s, s.get_block(stage.name), kCpuStructure, ctx.max_innermost_factor);
      std::optional<LoopRV> at = last_loop_at_or_above(tiles, level);
      if (!at) continue;
      s.reverse_compute_at(s.get_block(consumer), *at);
      next.tiled.insert(stage.name);
      next.tiled.insert(consumer);
      next.steps.push_back(str("tile ", stage.name, " ", kCpuStructure, ", fuse ", consumer, " after S", level));
      out.push_back(std::move(next));
    }
    return out;
  }
};

class MultiLevelTiling : public SketchRule {
 public:
  std::string name() const override { return "multi-level-tiling"; }
  Condition condition(const SketchState&, const StageFacts& stage, const SketchContext&) const override {
    return stage.has_data_reuse ? Condition::ApplyAndStop : Condition::Skip;
  }
  std::vector<SketchState> apply(const SketchState& state, const StageFacts& stage,
                                 const SketchContext& ctx) const override {
    SketchState next = state;
    next.advance(stage.name);
    multi_level_tile(next.schedule, next.schedule.get_block(stage.name), kCpuStructure, ctx.max_innermost_factor);
    next.tiled.insert(stage.name);
    next.steps.push_back(str("tile ", stage.name, " ", kCpuStructure));
    return {next};
  }
};

// A reduction with little spatial parallelism (a row sum of few long rows): its
// reduction loops fused and split in two, one part becomes a spatial axis of partial
// results. Forks on which part.
class AddRfactor : public SketchRule {
 public:
  std::string name() const override { return "rfactor"; }
  Condition condition(const SketchState&, const StageFacts& stage, const SketchContext&) const override {
    bool little_parallelism = stage.spatial_size < stage.reduce_size;
    return stage.is_reduction && !stage.has_data_reuse && stage.reduce_size > 1 && little_parallelism
               ? Condition::Apply
               : Condition::Skip;
  }
  std::vector<SketchState> apply(const SketchState& state, const StageFacts& stage,
                                 const SketchContext& ctx) const override {
    std::vector<SketchState> out;
    for (int part : {1, 0}) {
      SketchState next = state;
      Schedule& s = next.schedule;
      BlockRV block = s.get_block(stage.name);
      std::vector<LoopRV> loops = s.get_loops(block);
      std::vector<LoopRV> reduce;
      for (size_t l = 0; l < loops.size(); ++l) {
        if (stage.loop_is_reduce[l]) reduce.push_back(loops[l]);
      }
      LoopRV fused = reduce.size() == 1 ? reduce[0] : s.fuse(reduce);
      std::vector<ExprRV> factors = s.sample_perfect_tile(fused, 2, ctx.max_innermost_factor);
      std::vector<LoopRV> halves = s.split(fused, std::vector<SplitFactor>(factors.begin(), factors.end()), false);
      BlockRV rf = s.rfactor(halves[part], 0);
      next.advance(s.block_name(rf));
      next.steps.push_back(str("rfactor ", stage.name, " over the ", part == 1 ? "inner" : "outer", " part"));
      out.push_back(std::move(next));
    }
    return out;
  }
};

class SkipStage : public SketchRule {
 public:
  std::string name() const override { return "skip"; }
  Condition condition(const SketchState&, const StageFacts&, const SketchContext&) const override {
    return Condition::Apply;
  }
  std::vector<SketchState> apply(const SketchState& state, const StageFacts& stage,
                                 const SketchContext&) const override {
    SketchState next = state;
    next.advance(stage.name);
    return {next};
  }
};

}  // namespace

std::shared_ptr<const SketchRule> always_inline_rule() {
  return std::make_shared<AlwaysInline>();
}

std::shared_ptr<const SketchRule> skip_stage_rule() {
  return std::make_shared<SkipStage>();
}

SketchRules default_sketch_rules(const Target& target) {
  if (target.is_gpu()) return gpu_sketch_rules();
  return {always_inline_rule(),
          std::make_shared<AddCacheReadForPacking>(),
          std::make_shared<AddCacheWrite>(),
          std::make_shared<MultiLevelTilingWithFusion>(),
          std::make_shared<MultiLevelTiling>(),
          std::make_shared<AddRfactor>(),
          skip_stage_rule()};
}

}  // namespace temper::schedule_space
