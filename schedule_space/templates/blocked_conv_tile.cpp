#include "schedule_space/templates/blocked_conv_tile.h"

#include "schedule_space/templates/data_stage.h"

namespace temper::schedule_space {

LoopRV tile_blocked_conv(Schedule& s, const std::string& block, int64_t tile_kb, int64_t tile_q,
                         BlockedConvOuter outer, bool unroll_rx, bool unroll_ci) {
  BlockRV conv = s.get_block(block);
  BlockRV write_back = s.cache_write(conv, 0, "local");
  std::vector<LoopRV> loops = s.get_loops(conv);  // n, ko, p, q, ki, rco, ry, rx[, rci]
  LoopRV n = loops[0], p = loops[2], ki = loops[4];
  std::vector<LoopRV> reductions(loops.begin() + 5, loops.end());
  std::vector<LoopRV> ko = s.split(loops[1], {std::nullopt, tile_kb});
  std::vector<LoopRV> q = s.split(loops[3], {std::nullopt, tile_q});
  std::vector<LoopRV> fused = outer == BlockedConvOuter::ChannelTilesFirst ? std::vector<LoopRV>{n, ko[0], p}
                              : outer == BlockedConvOuter::RowsFirst       ? std::vector<LoopRV>{n, p, ko[0]}
                                                                           : std::vector<LoopRV>{n, p};
  std::vector<LoopRV> order = fused;
  if (outer == BlockedConvOuter::RowsOnly) order.push_back(ko[0]);
  order.push_back(q[0]);
  order.insert(order.end(), reductions.begin(), reductions.end());
  order.insert(order.end(), {q[1], ko[1], ki});
  s.reorder(order);
  LoopRV tiles = s.fuse(fused);
  s.parallel(tiles);
  s.reverse_compute_at(write_back, q[0]);
  BlockRV init = s.decompose_reduction(conv, reductions[0]);
  for (LoopRV l : {q[1], ko[1]}) {
    if (loop_extent(s, l) > 1) s.unroll(l);
  }
  if (unroll_rx && loop_extent(s, reductions[2]) > 1) s.unroll(reductions[2]);
  if (unroll_ci && reductions.size() == 4 && loop_extent(s, reductions[3]) > 1) s.unroll(reductions[3]);
  if (loop_extent(s, ki) > 1) {
    s.vectorize(ki);
    for (BlockRV b : {init, write_back}) s.vectorize(s.get_loops(b).back());
  }
  return tiles;
}

}  // namespace temper::schedule_space
