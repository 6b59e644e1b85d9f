// Hand-written CPU schedules for the operator library: what `temper run --schedule
// default` applies, what the tuning stack's templates will start from, and the
// structures the correctness tests check every op under.
//
//   schedule_cpu_default  the op's best known schedule: the expert GEMM (B packed into
//                         NR-wide panels, an MR x NR register tile, k innermost, parallel
//                         over panels) for matmul, batch_matmul and dense; for every other
//                         op the "tiled" rule below plus inlining of padding stages.
//   schedule_cpu_tiled    every block: leading spatial loops fused and parallel, the
//                         innermost spatial loop moved inside the reductions, split by
//                         the vector width and vectorized.
//   schedule_cpu_staged   producers computed at their consumer's outer loop, and reduction
//                         outputs accumulated in a local buffer (cache_write) written back
//                         per outer iteration.
//
// Each rule only takes steps the schedule accepts: a step that does not apply to a
// block (a ScheduleError) is skipped, so the result is always a valid program.
#pragma once

#include "compiler/ops/workload.h"
#include "compiler/schedule/schedule.h"

namespace temper::ops {

Schedule schedule_cpu_default(const OpInstance& op);
Schedule schedule_cpu_tiled(const OpInstance& op);
Schedule schedule_cpu_staged(const OpInstance& op);

// The expert GEMM on one reduction block whose last three loops are (i, j, k) over
// C[.., i, j] += A[.., i, k] * B[.., k, j] (B's read is the block's read region
// b_read_index). epilogue, if given, is an elementwise consumer fused into the tile
// instead of a local accumulator.
struct GemmTiling {
  int mr = 8;   // rows of the register tile
  int nr = 32;  // columns of the register tile: two AVX-512 vectors
};
void schedule_gemm_cpu(Schedule& s, BlockRV gemm, int b_read_index, const BlockRV* epilogue, const GemmTiling& t);

}  // namespace temper::ops
