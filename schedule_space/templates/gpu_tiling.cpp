#include "schedule_space/templates/gpu_tiling.h"

#include <algorithm>

#include "compiler/codegen/gpu/gpu_limits.h"

namespace temper::schedule_space {

std::vector<int64_t> gpu_vector_widths(const Target& target) {
  TEMPER_CHECK(target.is_gpu(), "gpu_vector_widths of the CPU target ", target.to_string());
  if (target.kind == Target::Kind::CUDA) return {1, 2, 4};
  return {1, 2, 4, 8, 16};
}

std::vector<nlohmann::json> vector_widths_dividing(const Target& target, const std::vector<int64_t>& extents) {
  std::vector<nlohmann::json> widths;
  for (int64_t v : gpu_vector_widths(target)) {
    if (std::all_of(extents.begin(), extents.end(), [v](int64_t e) { return e % v == 0; })) widths.emplace_back(v);
  }
  return widths;
}

void define_auto_unroll(ConfigSpace& space) {
  space.define_knob(kAutoUnrollKnob, {0, 16, 64, 512});
}

void apply_auto_unroll(Schedule& s, LoopRV kernel_outermost, const Config& c) {
  int64_t steps = c.knob_int(kAutoUnrollKnob);
  if (steps > 0) s.annotate(kernel_outermost, "pragma_auto_unroll_max_step", steps);
}

void define_threads(ConfigSpace& space) {
  space.define_knob(kThreadsKnob, {32, 64, 128, 256, 512, 1024});
}

void add_limit_constraints(ConfigSpace& space, const Target& target, const BlockUsage& usage) {
  GpuLimits limits = gpu_limits(target);
  std::string of = " (the limit of " + limits.source + ")";
  space.add_constraint(str("at most ", limits.max_threads_per_block, " threads per block", of),
                       [threads = usage.threads, limit = limits.max_threads_per_block](const Config& c) {
                         ThreadExtents t = threads(c);
                         return t[0] * t[1] * t[2] <= limit;
                       });
  space.add_constraint(str("threadIdx.x, .y, .z at most ", limits.max_block_dims[0], ", ", limits.max_block_dims[1],
                           ", ", limits.max_block_dims[2], of),
                       [threads = usage.threads, dims = limits.max_block_dims](const Config& c) {
                         ThreadExtents t = threads(c);
                         return t[0] <= dims[0] && t[1] <= dims[1] && t[2] <= dims[2];
                       });
  if (usage.shared_bytes) {
    space.add_constraint(str("at most ", limits.max_shared_memory_per_block, " bytes of shared memory per block", of),
                         [bytes = usage.shared_bytes, limit = limits.max_shared_memory_per_block](const Config& c) {
                           return bytes(c) <= limit;
                         });
  }
  space.add_constraint(str("at most ", limits.max_local_bytes_per_thread, " bytes of register arrays per thread", of),
                       [bytes = usage.local_bytes, limit = limits.max_local_bytes_per_thread](const Config& c) {
                         return bytes(c) <= limit;
                       });
}

void cooperative_fetch(Schedule& s, BlockRV stage, size_t attach_depth, const ThreadExtents& threads, int64_t vector) {
  std::vector<LoopRV> loops = s.get_loops(stage);
  // A one-element tile has no loops of its own: every thread copies that element.
  if (loops.size() <= attach_depth) return;
  std::vector<LoopRV> tile(loops.begin() + static_cast<std::ptrdiff_t>(attach_depth), loops.end());
  if (vector > 1) {
    // The vector is split off the innermost loop before the fusion, so that its lanes'
    // index stays a ramp (a split of the fused loop would divide by the row length).
    std::vector<LoopRV> v = s.split(tile.back(), {std::nullopt, vector});
    s.vectorize(v[1]);
    tile.back() = v[0];
  }
  LoopRV fused = tile.size() == 1 ? tile[0] : s.fuse(tile);
  // The threads split what is outside the vector, so that a tail's guard is the same for
  // every lane.
  std::vector<SplitFactor> factors = {std::nullopt};
  std::vector<const char*> tags;
  const char* kTags[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z"};
  for (int axis = 2; axis >= 0; --axis) {
    if (threads[axis] > 1) {
      factors.emplace_back(threads[axis]);
      tags.push_back(kTags[axis]);
    }
  }
  if (tags.empty()) return;
  std::vector<LoopRV> parts = s.split(fused, factors);
  for (size_t t = 0; t < tags.size(); ++t) s.bind(parts[t + 1], tags[t]);
}

std::vector<int64_t> default_four_way(int64_t extent, int64_t inner, int64_t threads) {
  int64_t i = largest_divisor_up_to(extent, inner);
  int64_t t = largest_divisor_up_to(extent / i, threads);
  return {extent / i / t, 1, t, i};
}

}  // namespace temper::schedule_space
