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
#include "compiler/target/target.h"

namespace temper::ops {

// Register tiles and vector widths follow target.vector_bits(); without a target, the
// host CPU's ("llvm -mcpu=native").
Schedule schedule_cpu_default(const OpInstance& op, const Target& target);
Schedule schedule_cpu_default(const OpInstance& op);
Schedule schedule_cpu_tiled(const OpInstance& op);
Schedule schedule_cpu_staged(const OpInstance& op);

// Vectorizes the block's innermost spatial loop: moved inside any reduction loops below
// it, split by the widest of 16, 8, 4 lanes that divides it. A step the schedule refuses
// is skipped.
void vectorize_innermost_spatial(Schedule& s, BlockRV block);

// The expert GEMM on one reduction block whose last three loops are (i, j, k) over
// C[.., i, j] += A[.., i, k] * B[.., k, j] (B's read is the block's read region
// b_read_index). epilogue, if given, is an elementwise consumer fused into the tile
// instead of a local accumulator. b_packing, if given, is the op's own stage writing the
// B the block reads (a re-expression of the op that transposes a stored [N, K] B into
// [K, N]): it takes the place of the copy cache_read makes, computed per K x NR panel
// under pack_b, else whole, as a parallel stage of its own, before the GEMM.
struct GemmTiling {
  int mr = 6;   // rows of the register tile
  int nr = 16;  // columns of the register tile, a multiple of the vector width
  // Choices a tuner explores (schedule_space/templates/gemm.cpp); the defaults are the
  // expert schedule's.
  int k_unroll = 1;      // k split by this (a factor of K) and the inner part unrolled; 1 leaves k whole
  bool pack_b = true;    // copy each K x NR panel of B contiguously before the row tiles read it
  bool parallel = true;  // run the panels (and batches) on all threads
  // The tile for a target: mr x nr accumulators that fit its vector registers with room
  // for the B vectors and the A broadcast (AVX-512: 8 x 32 in 16 of 32 zmm; AVX2:
  // 6 x 16 in 12 of 16 ymm; SSE: 6 x 8 in 12 of 16 xmm), narrowed for small M or N.
  static GemmTiling for_target(const Target& target, int64_t m, int64_t n);
};
void schedule_gemm_cpu(Schedule& s, BlockRV gemm, int b_read_index, const BlockRV* epilogue, const GemmTiling& t,
                       const BlockRV* b_packing = nullptr);
// The expert GEMM applied to a matmul, batch_matmul or dense instance (dense's bias and
// activation fused into the tile): schedule_cpu_default is this with
// GemmTiling::for_target. UserError for any other op.
Schedule schedule_gemm_op_cpu(const OpInstance& op, const GemmTiling& t);

}  // namespace temper::ops
