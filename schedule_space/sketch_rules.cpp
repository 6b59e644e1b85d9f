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

const VectorAxis* SketchState::vector_axis(const StageFacts& stage) const {
  if (stage.vector_axes.empty()) return nullptr;
  auto chosen = vector_loop.find(stage.name);
  if (chosen == vector_loop.end()) return &stage.vector_axes[0];
  for (const VectorAxis& axis : stage.vector_axes) {
    if (axis.loop == chosen->second) return &axis;
  }
  return nullptr;
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

// The loop multi_level_tile puts innermost: the one a rule chose, else none (the order
// of the loops).
std::optional<int> chosen_vector_loop(const SketchState& state, const StageFacts& stage) {
  auto chosen = state.vector_loop.find(stage.name);
  return chosen == state.vector_loop.end() ? std::nullopt : std::optional<int>(chosen->second);
}

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

// A window stage (conv) vectorized along another axis than the innermost: forks one
// sketch per alternative (StageFacts::vector_axes); the stage as it was goes on too.
class ChooseVectorAxis : public SketchRule {
 public:
  std::string name() const override { return "vector-axis"; }
  Condition condition(const SketchState& state, const StageFacts& stage, const SketchContext&) const override {
    bool once = !state.vector_loop.count(stage.name) && !state.applied.count({"cache-read", stage.name}) &&
                !state.applied.count({"cache-write", stage.name});
    return once && stage.has_data_reuse && stage.vector_axes.size() > 1 ? Condition::Apply : Condition::Skip;
  }
  std::vector<SketchState> apply(const SketchState& state, const StageFacts& stage,
                                 const SketchContext&) const override {
    std::vector<SketchState> out;
    for (size_t k = 1; k < stage.vector_axes.size(); ++k) {
      SketchState next = state;
      int loop = stage.vector_axes[k].loop;
      next.vector_loop[stage.name] = loop;
      std::vector<LoopRV> loops = next.schedule.get_loops(next.schedule.get_block(stage.name));
      next.steps.push_back(str("vectorize ", stage.name, " along ", next.schedule.loop_var(loops[loop]).name()));
      out.push_back(std::move(next));
    }
    return out;
  }
};

// The read that misses a spatial axis (matmul's B, which no row index reaches) copied
// contiguously per panel: the tiling rule puts the outermost tiles of the loops that
// index it first, computes the copy under them, and leaves the others (the rows) inside,
// so that each panel is copied once and read by every row tile -- the expert GEMM's
// packing. Read in place instead, a panel whose rows lie pages apart falls into few
// cache sets and misses however it is tiled.
class AddCacheReadForPacking : public SketchRule {
 public:
  std::string name() const override { return "cache-read"; }
  Condition condition(const SketchState& state, const StageFacts& stage, const SketchContext&) const override {
    // Once, and before a cache-write (the other order is the same sketch).
    bool once = !state.applied.count({name(), stage.name}) && !state.applied.count({"cache-write", stage.name});
    const VectorAxis* axis = state.vector_axis(stage);
    return once && stage.has_data_reuse && axis && axis->packed_read ? Condition::Apply : Condition::Skip;
  }
  std::vector<SketchState> apply(const SketchState& state, const StageFacts& stage,
                                 const SketchContext&) const override {
    // The stage stays, for the tiling rules, which place the copy.
    SketchState next = state;
    const VectorAxis& axis = *state.vector_axis(stage);
    BlockRV copy =
        next.schedule.cache_read(next.schedule.get_block(stage.name), *axis.packed_read, "global", axis.packed_layout);
    next.keep.insert(next.schedule.block_name(copy));
    next.panel_copy[stage.name] = next.schedule.block_name(copy);
    next.steps.push_back(str("cache-read ", next.schedule.block_name(copy), " per panel"));
    return {next};
  }
};

class AddCacheWrite : public SketchRule {
 public:
  std::string name() const override { return "cache-write"; }
  Condition condition(const SketchState& state, const StageFacts& stage, const SketchContext&) const override {
    bool once = !state.applied.count({name(), stage.name});
    return once && stage.has_data_reuse && !fusible_consumer(state.schedule, stage) ? Condition::Apply
                                                                                    : Condition::Skip;
  }
  std::vector<SketchState> apply(const SketchState& state, const StageFacts& stage,
                                 const SketchContext&) const override {
    // The stage stays: it now has an elementwise consumer (the copy) to fuse. Its
    // local buffer is laid out with the vector axis last.
    SketchState next = state;
    const VectorAxis* axis = state.vector_axis(stage);
    next.schedule.cache_write(next.schedule.get_block(stage.name), 0, "local",
                              axis ? axis->output_layout : std::vector<int>{});
    next.steps.push_back(str("cache-write ", stage.name));
    return {next};
  }
};

// multi_level_tile with the CPU structure; a stage with a packing copy gets its panel
// loops first and the copy computed under the last of them (AddCacheReadForPacking).
TiledLoops tile_cpu(SketchState& state, const StageFacts& stage, const SketchContext& ctx,
                    std::optional<int> vector_loop) {
  Schedule& s = state.schedule;
  auto copy = state.panel_copy.find(stage.name);
  const VectorAxis* axis = state.vector_axis(stage);
  std::vector<int> panel_loops;
  if (copy != state.panel_copy.end() && axis) panel_loops = axis->packed_read_loops;
  TiledLoops tiles =
      multi_level_tile(s, s.get_block(stage.name), kCpuStructure, ctx.max_innermost_factor, vector_loop, panel_loops);
  if (copy != state.panel_copy.end()) {
    std::optional<LoopRV> panel;
    if (tiles.outer_first > 0) {
      panel = tiles.levels[0][tiles.outer_first - 1];
    } else if (!tiles.unit.empty()) {
      panel = tiles.unit.back();
    }
    // Without a panel loop (every loop that indexes the read has extent 1) the copy
    // stays whole at the root.
    if (panel) s.compute_at(s.get_block(copy->second), *panel);
  }
  return tiles;
}

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
      TiledLoops tiles = tile_cpu(next, stage, ctx, chosen_vector_loop(state, stage));
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
    tile_cpu(next, stage, ctx, chosen_vector_loop(state, stage));
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
          std::make_shared<ChooseVectorAxis>(),
          std::make_shared<AddCacheReadForPacking>(),
          std::make_shared<AddCacheWrite>(),
          std::make_shared<MultiLevelTilingWithFusion>(),
          std::make_shared<MultiLevelTiling>(),
          std::make_shared<AddRfactor>(),
          skip_stage_rule()};
}

}  // namespace temper::schedule_space
