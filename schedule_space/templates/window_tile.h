// The schedule shared by the per-channel window templates (depthwise_conv2d, max_pool2d,
// avg_pool2d, all NCHW): each output plane is cut into tiles of tile_p rows x tile_q
// columns that accumulate in registers while the kernel window's loops (ry, rx) run
// outside the tile; the tile is vectorized over its columns and unrolled over its rows,
// and the (n, c, row-tile) loops are fused and parallel.
//
//   tile_p         output rows of the tile: a divisor of P, at most 4
//   tile_q         output columns of the tile: a divisor of Q, at most two vectors
//   pad            the padding stage (when there is one) computed per tile row, for the
//                  rows the tile reads ("tile"), kept as a parallel stage of its own
//                  ("root"), or inlined into the window's loads ("inline")
//   unroll_window  the kernel-column loop unrolled or not
//
// Valid configs keep the tile's accumulators, one input vector and a weight broadcast
// within the vector registers. The default: the widest column tile that is a whole
// number of vectors (else the widest divisor), or one column when the window strides
// over columns (vectors would be gathers), as many rows as the registers allow, up
// to 4, the padding computed per tile row (one parallel loop for the whole op: on this
// shared 2-core machine each extra parallel stage cost a scheduler time slice whenever
// another process held a core), no unrolling.
#pragma once

#include <string>

#include "compiler/schedule/schedule.h"
#include "compiler/target/target.h"
#include "schedule_space/config_space.h"

namespace temper::schedule_space {

// The blocks of one window op, by name: the padding stage ("" when there is none), the
// reduction over the window, and its elementwise consumer ("" when the reduction writes
// the output itself).
struct WindowBlocks {
  std::string pad;
  std::string reduce;
  std::string epilogue;
};

void define_window_tile(ConfigSpace& space, int64_t P, int64_t Q, const Target& target);
Config default_window_tile(const ConfigSpace& space, int64_t P, int64_t Q, int64_t column_stride, const Target& target);
// Schedules func, whose reduction block loops over (n, c, p, q, ry, rx).
Schedule apply_window_tile(const Config& config, const PrimFunc& func, const WindowBlocks& blocks,
                           const Target& target);

}  // namespace temper::schedule_space
