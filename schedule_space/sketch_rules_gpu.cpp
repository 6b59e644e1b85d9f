// The built-in GPU sketch rules (Ansor's GPU sketch): always-inline, multi-level tiling
// with shared-memory cache reads and a register tile, cross-thread reduction, skip.
#include <algorithm>

#include "schedule_space/multi_level_tiling.h"
#include "schedule_space/sketch_rules.h"

namespace temper::schedule_space {
namespace {

// S0 blockIdx, S1 vthread, S2 threadIdx, R0 R1 (the shared tiles' k extent), S3, R2, S4.
constexpr const char* kGpuStructure = "SSSRRSRS";
constexpr size_t kLastReduceOuter = 3;  // the level whose loop the shared copies go under
const char* const kLevelTags[] = {"blockIdx.x", "vthread", "threadIdx.x"};
constexpr int64_t kWarp = 32;

// A stage with data reuse (a matmul, a conv): every read it reuses copied into shared
// memory per tile of the outermost reduction level, the output accumulated in registers
// (cache_write "local", or the elementwise consumer reading the register tile), the loops
// tiled SSSRRSRS with the first three spatial levels each fused into one loop bound to
// blockIdx.x, vthread and threadIdx.x. The shared copies' cooperative fetch -- their loops
// spread over the block's threads -- depends on the tile sizes, so random annotation does it.
class MultiLevelTilingGpu : public SketchRule {
 public:
  std::string name() const override { return "multi-level-tiling-gpu"; }
  Condition condition(const SketchState&, const StageFacts& stage, const SketchContext&) const override {
    return stage.has_data_reuse ? Condition::ApplyAndStop : Condition::Skip;
  }
  std::vector<SketchState> apply(const SketchState& state, const StageFacts& stage,
                                 const SketchContext& ctx) const override {
    SketchState next = state;
    next.advance(stage.name);
    Schedule& s = next.schedule;
    BlockRV block = s.get_block(stage.name);
    std::optional<std::string> consumer = fusible_consumer(s, stage);

    // Reads 1.. (0 is the accumulator) into shared memory.
    std::vector<BlockRV> shared;
    for (int r = 1; r < stage.num_reads; ++r) shared.push_back(s.cache_read(block, r, "shared"));
    BlockRV writer = s.cache_write(block, 0, "local");
    std::string writer_name = s.block_name(writer);
    if (consumer) {
      // The consumer reads the register tile: the product never reaches global memory.
      s.compute_inline(writer);
      writer_name = *consumer;
    }

    TiledLoops tiles = multi_level_tile(s, block, kGpuStructure, ctx.max_innermost_factor);
    std::optional<LoopRV> thread_loop;
    for (size_t level = 0; level < 3; ++level) {
      std::vector<LoopRV> loops = tiles.levels[level];
      if (level == 0) loops.insert(loops.begin(), tiles.unit.begin(), tiles.unit.end());
      if (loops.empty()) continue;
      LoopRV fused = loops.size() == 1 ? loops[0] : s.fuse(loops);
      s.bind(fused, kLevelTags[level]);
      if (level == 2) thread_loop = fused;
    }
    if (!thread_loop) throw ScheduleError(str("multi-level-tiling-gpu: ", stage.name, " has no spatial loop to thread"));
    s.reverse_compute_at(s.get_block(writer_name), *thread_loop);
    std::optional<LoopRV> copy_at = tiles.levels[kLastReduceOuter].empty()
                                        ? thread_loop
                                        : std::optional<LoopRV>(tiles.levels[kLastReduceOuter].back());
    for (BlockRV copy : shared) s.compute_at(copy, *copy_at);

    next.tiled.insert(stage.name);
    next.tiled.insert(writer_name);
    std::string steps = str("tile ", stage.name, " ", kGpuStructure, " with ", shared.size(),
                            " shared-memory reads, the output through registers");
    for (BlockRV copy : shared) next.tiled.insert(s.block_name(copy));
    if (consumer) steps += str(" into ", *consumer);
    next.steps.push_back(steps);
    return {next};
  }
};

// Threads a row is shared among: the divisors of its length from a warp up to the block
// limit, or where it has none, the powers of two up to the limit that the row fills.
std::vector<int64_t> row_thread_counts(int64_t row, int64_t max_threads) {
  std::vector<int64_t> counts;
  for (int64_t t = kWarp; t <= std::min(row, max_threads); ++t) {
    if (row % t == 0) counts.push_back(t);
  }
  for (int64_t t = kWarp; counts.empty() && t <= max_threads && t <= row; t *= 2) counts.push_back(t);
  return counts;
}

// A reduction without data reuse over rows longer than a warp (softmax's max and sum,
// layer norm's moments, pooling): its reduction loops fused and split, the inner part
// bound to threadIdx.x, so that a block's threads share a row and combine their partials
// in shared memory (lower_cross_thread_reduction); the spatial loops fused into
// blockIdx.x. The thread count is drawn (row_thread_counts). Apply, not stop: the sketch
// with one thread per row stays (skip, then annotation), for rows too short to share.
class CrossThreadReduction : public SketchRule {
 public:
  std::string name() const override { return "cross-thread-reduction"; }
  Condition condition(const SketchState&, const StageFacts& stage, const SketchContext&) const override {
    return stage.is_reduction && !stage.has_data_reuse && stage.reduce_size > kWarp ? Condition::Apply
                                                                                    : Condition::Skip;
  }
  std::vector<SketchState> apply(const SketchState& state, const StageFacts& stage,
                                 const SketchContext& ctx) const override {
    SketchState next = state;
    next.advance(stage.name);
    Schedule& s = next.schedule;
    BlockRV block = s.get_block(stage.name);
    std::vector<LoopRV> loops = s.get_loops(block);
    std::vector<LoopRV> spatial;
    std::vector<LoopRV> reduce;
    for (size_t i = 0; i < loops.size(); ++i) (stage.loop_is_reduce.at(i) ? reduce : spatial).push_back(loops[i]);
    if (!std::is_sorted(stage.loop_is_reduce.begin(), stage.loop_is_reduce.end())) {
      std::vector<LoopRV> order = spatial;
      order.insert(order.end(), reduce.begin(), reduce.end());
      s.reorder(order);
    }
    std::vector<int64_t> counts = row_thread_counts(stage.reduce_size, ctx.max_threads_per_block);
    ExprRV threads = s.sample_categorical(counts, std::vector<double>(counts.size(), 1.0));
    std::vector<LoopRV> parts = s.split(reduce.size() == 1 ? reduce[0] : s.fuse(reduce), {std::nullopt, threads});
    s.bind(parts[1], "threadIdx.x");
    if (!spatial.empty()) s.bind(spatial.size() == 1 ? spatial[0] : s.fuse(spatial), "blockIdx.x");
    next.tiled.insert(stage.name);
    next.steps.push_back(str("reduce ", stage.name, " across threads"));
    return {next};
  }
};

}  // namespace

SketchRules gpu_sketch_rules() {
  return {always_inline_rule(), std::make_shared<MultiLevelTilingGpu>(), std::make_shared<CrossThreadReduction>(),
          skip_stage_rule()};
}

}  // namespace temper::schedule_space
