// The register tile of a convolution over the blocked layout (ops/nchwc.h), shared by the
// conv2d_nchwc template and the 1x1 half of depthwise_pointwise_nchwc: tile_q output
// columns x tile_kb output-channel blocks accumulate in registers (a local write-back
// under the column-tile loop) while the reductions (rco, ry, rx[, rci]) run outside them;
// each step broadcasts one input value against the tile's weight vectors, the tile's
// loops unrolled and the block's lanes vectorized.
#pragma once

#include <string>
#include <vector>

#include "compiler/schedule/schedule.h"

namespace temper::schedule_space {

// Which loops the parallel loop fuses, outermost first.
enum class BlockedConvOuter {
  ChannelTilesFirst,  // (n, channel-block tiles, rows): conv2d_nchwc's "k_p"
  RowsFirst,          // (n, rows, channel-block tiles): "p_k"
  RowsOnly,           // (n, rows), the channel-block tiles serial inside each row
};

// Tiles the block `block` (loops n, ko, p, q, ki, rco, ry, rx[, rci]) and returns its
// parallel loop. unroll_rx unrolls the window's columns, unroll_ci an input block's lanes.
LoopRV tile_blocked_conv(Schedule& s, const std::string& block, int64_t tile_kb, int64_t tile_q,
                         BlockedConvOuter outer, bool unroll_rx, bool unroll_ci);

}  // namespace temper::schedule_space
