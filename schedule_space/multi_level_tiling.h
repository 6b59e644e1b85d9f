// Multi-level tiling (Ansor's tile structures): a block's loops, each split into as many
// loops as its kind has letters in the structure and reordered level by level.
//
//   "SSRSRS" (CPU): every spatial loop in 4, every reduction loop in 2, ordered
//                   S0 S1 R0 S2 R1 S3 -- outer tiles for threads, a cache tile, a
//                   register tile innermost.
//   "SSSRRSRS" (GPU): spatial loops in 5, reduction loops in 3: blockIdx, vthread,
//                   threadIdx, then the cache and register levels.
//
// Each split takes its factors from a sample_perfect_tile instruction (innermost factor
// at most max_innermost_factor), so a search can change them. Loops of extent 1 are not
// split; they stay outermost. The block must be alone in a perfect nest of its own loops.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/schedule/schedule.h"

namespace temper::schedule_space {

struct TiledLoops {
  std::vector<LoopRV> unit;                 // loops of extent 1, outermost, untouched
  std::vector<std::vector<LoopRV>> levels;  // one entry per letter of the structure, outermost first
  size_t outer_first = 0;                   // loops of levels[0] that outer_first put first
};

// ScheduleError when the block's nest cannot be tiled (a non-constant extent, a loop that
// binds spatial and reduction axes at once). innermost_loop, an index into the block's
// loops, names the spatial loop whose part goes last in the innermost spatial level (the
// axis the register tile is vectorized along); by default the loops keep their order.
// outer_first, indices of the block's loops too, puts their parts first in the outermost
// level (the panel loops of a packed read, which then sits between them and the others).
TiledLoops multi_level_tile(Schedule& s, BlockRV block, const std::string& structure, int max_innermost_factor,
                            std::optional<int> innermost_loop = std::nullopt,
                            const std::vector<int>& outer_first = {});

// The innermost loop of levels[level], or of the nearest level above it that has loops
// (a level is empty when every loop of its kind has extent 1); nullopt when none has.
std::optional<LoopRV> last_loop_at_or_above(const TiledLoops& tiles, size_t level);

}  // namespace temper::schedule_space
