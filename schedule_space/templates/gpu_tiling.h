// What the GPU templates (gpu_templates.h) share: the knobs every one of them has, the
// constraints that keep a config within the target's limits, and the cooperative fetch
// of a shared-memory tile.
//
// Knob choices depend on the workload and the target kind only, never on a device, so a
// tuning log stays readable on another machine; the device's limits (gpu_limits) enter
// as constraints, which filter configs without changing the space's indices. A config
// that passes them can still break a limit the space does not model (the grid's extents,
// a staged tile larger than the templates' estimate): the build's legality check
// (check_gpu_limits) rejects it with a GpuLimitError, which the measurer records.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "compiler/schedule/schedule.h"
#include "compiler/target/target.h"
#include "schedule_space/config_space.h"
#include "schedule_space/templates/register_budget.h"

namespace temper::schedule_space {

// The widths the templates vectorize loads and stores by: CUDA's float2/float4 (1, 2, 4);
// OpenCL's vector types up to 16 lanes (1, 2, 4, 8, 16; not 3, whose vectors are padded
// to 4 in memory).
std::vector<int64_t> gpu_vector_widths(const Target& target);

// The widths of gpu_vector_widths that divide every extent given, as knob values.
std::vector<nlohmann::json> vector_widths_dividing(const Target& target, const std::vector<int64_t>& extents);

// "auto_unroll_max_step", TVM's knob of its GPU templates: each serial loop of a kernel
// whose iterations, nested loops included, run at most this many steps is unrolled (0:
// none). The value annotates the kernel's outermost loop as "pragma_auto_unroll_max_step",
// which lower/unroll_loops.h applies to every loop inside it by copying loop bodies (the
// printed kernel has the copies, not a #pragma unroll).
inline constexpr const char* kAutoUnrollKnob = "auto_unroll_max_step";
void define_auto_unroll(ConfigSpace& space);
void apply_auto_unroll(Schedule& s, LoopRV kernel_outermost, const Config& c);

// "threads": the threads of a one-dimensional block (the pooling and injective
// templates), powers of two from 32 to 1024; kDefaultThreads fits every kind's default
// limit.
inline constexpr const char* kThreadsKnob = "threads";
inline constexpr int64_t kDefaultThreads = 256;
void define_threads(ConfigSpace& space);

// Threads per block by axis: x, y, z.
using ThreadExtents = std::array<int64_t, 3>;

// What a config asks of one thread block, for the limit constraints.
struct BlockUsage {
  std::function<ThreadExtents(const Config&)> threads;
  std::function<int64_t(const Config&)> shared_bytes;  // nullptr: the block stages nothing
  std::function<int64_t(const Config&)> local_bytes;   // one thread's register arrays
};

// Constraints that each config keeps the target's limits (gpu_limits(target)): threads
// per block and per axis, shared memory, and a thread's register arrays.
void add_limit_constraints(ConfigSpace& space, const Target& target, const BlockUsage& usage);

// Binds the loops of a block staged into shared memory by compute_at under the loop at
// depth `attach_depth` (the stage's loops below it, which cover the block's whole tile)
// to the block's threads: the loops fused into one, its innermost `vector` elements
// vectorized, the rest spread over threadIdx.z, .y, .x (the axes of extent above 1) with
// the outermost part left as each thread's serial loop. vector must divide the tile's
// innermost extent (checked by the templates' constraints), so a vector never straddles
// two rows of the tile.
void cooperative_fetch(Schedule& s, BlockRV stage, size_t attach_depth, const ThreadExtents& threads, int64_t vector);

// A four-part split [block, vthread, thread, inner] of extent, outermost first, for a
// default config: inner the largest of `inner` dividing the extent, threads the largest
// divisor of the rest up to `threads`, no virtual threads, the blocks the rest.
std::vector<int64_t> default_four_way(int64_t extent, int64_t inner, int64_t threads);

}  // namespace temper::schedule_space
