#include "compiler/ops/gpu_schedules.h"

#include <algorithm>

#include "compiler/ops/block_info.h"

namespace temper::ops {
namespace {

constexpr int64_t kMaxThreads = 256;

// Threads per block for a fused extent: the largest power of two up to kMaxThreads that
// divides it, unless that leaves blocks of fewer than 32 threads; then kMaxThreads with a tail.
int64_t threads_for(int64_t extent) {
  int64_t t = kMaxThreads;
  while (t > 1 && extent % t != 0) t /= 2;
  return t >= 32 || extent <= t ? t : std::min(kMaxThreads, extent);
}

}  // namespace

Schedule schedule_gpu_default(const OpInstance& op) {
  Schedule s(op.func);
  std::vector<BlockInfo> blocks = collect_blocks(s.func());
  for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) {
    if (!b->is_reduction && !b->writes_param) try_step([&] { s.compute_inline(s.get_block(b->name)); });
  }
  for (const BlockInfo& b : collect_blocks(s.func())) {
    BlockRV block = s.get_block(b.name);
    std::vector<LoopRV> loops = s.get_loops(block);
    std::vector<LoopRV> spatial;
    for (size_t l = 0; l < loops.size() && !b.loop_is_reduce[l]; ++l) spatial.push_back(loops[l]);
    if (spatial.empty()) {
      throw UserError(str(op.func.name, ": block ", b.name,
                          " has no spatial loop to spread over GPU threads; no GPU schedule serves it yet"));
    }
    LoopRV fused = spatial.size() > 1 ? s.fuse(spatial) : spatial[0];
    const int64_t* extent = as_const_int(s.loop(fused)->extent);
    if (!extent) throw UserError(str(op.func.name, ": block ", b.name, " has loops of no constant extent"));
    std::vector<LoopRV> split = s.split(fused, {std::nullopt, threads_for(*extent)});
    s.bind(split[0], "blockIdx.x");
    s.bind(split[1], "threadIdx.x");
  }
  return s;
}

}  // namespace temper::ops
