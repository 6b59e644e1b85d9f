// Features of a candidate program for the learned cost model, after TVM Ansor's
// per-store features (simplified).
//
// Input: a PrimFunc as lower() leaves it (no blocks, flattened 1-D indices, vectorized
// loops turned into Ramp/Broadcast vector IR, unrolled loops expanded, Serial and
// Parallel loops). Features are read from the IR alone, so they serve template and
// auto-scheduler candidates alike; nothing is compiled or run. Extraction keeps no
// shared mutable state: any number of threads may extract features at once.
//
// One row per BufferStore statement (extract_store_features), in program order:
// - arithmetic, counted per element (a 16-lane vector add is 16 adds) and weighted by
//   the product of the enclosing loop extents, i.e. operations per call of the function:
//   float add/sub, float mul, float multiply-adds (a + b*c, counted once, not as an add
//   and a mul), float div, compares and selects, pure math calls (exp, tanh, ...), and
//   integer arithmetic (index computation included). Only the store's own value and
//   indices count, not enclosing conditions. Flops count a multiply-add as two.
// - loop structure: the number of enclosing loops, the product of their extents, the
//   innermost extent (loops of non-constant extent count as extent 1).
// - annotations: parallel loops enclosing the store (count, product of extents, and the
//   position of the outermost one: 1 + the number of loops around it, 0 when none), the
//   store's vector lanes (a vectorized loop became these lanes), and the largest
//   "pragma_auto_unroll_max_step" on an enclosing loop. Unrolled loops are expanded by
//   lowering and show as copies: the stores of the same buffer directly in the same
//   innermost loop (or at top level) with the same float operations and number of
//   accesses, this one included.
// - the buffers the statement accesses (the stored buffer and each loaded one, merged
//   per buffer), heaviest first by bytes touched. "Touched" counts every access of one
//   call of the function; "unique" is the footprint (each element or line once):
//   * bytes touched, unique bytes. The footprint merges the index's dimensions by
//     coefficient, so contiguous and overlapping ones (a sliding window i + r) are
//     counted once; it is at most the buffer's size.
//   * cache lines touched (64-byte lines), following the loops in program order: the
//     innermost dimension the index moves with (a vector Ramp, else the innermost loop it
//     depends on), joined with the enclosing loops that continue it contiguously, is one
//     run; a run of stride * element_bytes < 64 touches run_bytes / 64 lines (rounded
//     up), a wider stride one line per element; loops inside the run that the index does
//     not depend on re-touch the same line, loops outside it repeat the run. Unique lines
//     are the footprint's lines (at most the buffer's lines, at most its elements).
//   * stride, in elements, of the innermost varying dimension (the Ramp stride for a
//     vector access, otherwise the coefficient of the innermost enclosing loop variable
//     in the index; 0 when the index does not depend on it linearly, e.g. x // 8).
//   * reuse, as in Ansor. Kind Loop: some enclosing loop (of extent > 1) does not move
//     the index; the innermost such loop carries the reuse. Its distance is the number
//     of iterations of the loops inside the carrier (how many statement instances lie
//     between two uses of an element) and the bytes all stores under the carrier touch
//     in one of its iterations; the count is the product of the extents of all the loops
//     the index does not depend on (uses of each element per call). Kind Serial: no such
//     loop, but the same location (same buffer, same index) is accessed more than once in
//     one iteration of the innermost loop, by this store or others directly in that loop;
//     distance 0 iterations, the bytes of one iteration of the innermost loop (of the
//     whole function at top level), count = those accesses. Kind None: count 1, distance 0.
//     Loops around the Allocate of a buffer carry no reuse of it: each of their
//     iterations works on a fresh buffer.
// Enclosing if-conditions are ignored: a store under `if (k == 0)` counts as if it ran on
// every iteration.
//
// Program-level features (extract_program_features):
// - allocations: the Allocate statements of the function (each counted once, wherever it
//   sits): count, total bytes, biggest, and bytes in a non-global scope (registers/stack).
// - annotation summary: parallel loops in the function, the largest product of parallel
//   extents over stores, the outermost parallel position over stores, the largest vector
//   lanes and unroll step, and the share of the work (operations + bytes touched) done by
//   stores under a parallel loop and by vector stores.
// - the arithmetic-intensity curve (Ansor's idea): for the heaviest store group, at each
//   enclosing loop from the innermost outwards, then the whole function, the flops of all
//   stores under that loop in one execution of the loop divided by the unique bytes they
//   touch in it (accesses with the same buffer and index counted once, per buffer at most
//   its size). Point p is the p-th loop from the innermost; points past the outermost
//   loop repeat the whole-function value.
// - the inner body (InnerBodyFeatures): one iteration of the innermost loop around the
//   heaviest store, i.e. what unrolling and vectorization leave for the registers. Over
//   the stores directly in that loop: flops; distinct stored elements (the accumulators:
//   a Ramp location counts its lanes); distinct loaded elements other than those stored
//   (a Broadcast counts one); the share of stored elements whose index the loop does not
//   move (they stay in registers from one iteration to the next); and flops per element
//   moved between registers and memory (loaded, plus stored and not carried).
//
// candidate_features() writes those into one fixed-length vector; feature_names() names
// its entries in order. Layout (kFeatureLayoutVersion 3), every count, size, distance and
// intensity scaled by log2(1 + x) as in TVM (strides keep their sign: sign(x) *
// log2(1 + |x|)); the three *_share entries and the reuse kind flags stay in [0, 1]:
//   total.*    (12) float_add_sub, float_mul, float_fma, float_div, float_cmp_select,
//              float_math, int_arith, bytes_touched, unique_bytes, lines_touched,
//              unique_lines, num_stores (sums over all stores)
//   annot.*    (7)  parallel_loops, parallel_extent, parallel_position, parallel_share,
//              vector_lanes, vector_share, unroll_max_step
//   alloc.*    (4)  count, total_bytes, max_bytes, local_bytes
//   intensity.<p> (kCurvePoints = 10), p = 0 innermost loop
//   inner.*    (5)  flops, stored_elements, loaded_elements, carried_share (in [0, 1]),
//              flops_per_element
//   then kTopStores = 2 slots "store<s>." for the heaviest groups of copies (by operations
//   plus bytes touched, summed over the copies; ties in program order), each describing
//   the group's heaviest store (the first of equals) in 16 + kBufferSlots * 10 entries:
//              float_add_sub, float_mul, float_fma, float_div, float_cmp_select,
//              float_math, int_arith, num_loops, loop_product, innermost_extent,
//              parallel_loops, parallel_extent, parallel_position, vector_lanes,
//              unroll_max_step, copies,
//              then kBufferSlots = 3 slots "buf<b>.": bytes, unique_bytes, lines,
//              unique_lines, stride, reuse_loop, reuse_serial, reuse_distance_iters,
//              reuse_distance_bytes, reuse_count.
// 12 + 7 + 4 + 10 + 5 + 2 * (16 + 3 * 10) = 130 entries. Absent stores and buffers are all
// zeros. A change of this layout must bump kFeatureLayoutVersion: saved models check it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace temper::cost_model {

inline constexpr int kFeatureLayoutVersion = 3;
inline constexpr int kTopStores = 2;
inline constexpr int kBufferSlots = 3;
inline constexpr int kCurvePoints = 10;
inline constexpr int kCacheLineBytes = 64;

enum class ReuseKind : uint8_t { None, Loop, Serial };

struct BufferAccessFeatures {
  std::string buffer;
  double bytes = 0;         // touched per call of the function
  double unique_bytes = 0;  // footprint
  double lines = 0;         // cache lines touched per call
  double unique_lines = 0;  // cache lines of the footprint
  int64_t stride = 0;       // elements, innermost varying dimension
  ReuseKind reuse_kind = ReuseKind::None;
  double reuse_distance_iters = 0;  // statement instances between two uses of an element
  double reuse_distance_bytes = 0;  // bytes touched between two uses
  double reuse_count = 1;           // uses of each element per call
};

struct StoreFeatures {
  std::string buffer;  // the stored buffer
  // Operations per call of the function (per element, weighted by loop extents).
  double float_add_sub = 0;
  double float_mul = 0;
  double float_fma = 0;
  double float_div = 0;
  double float_cmp_select = 0;
  double float_math = 0;
  double int_arith = 0;
  int num_loops = 0;
  double loop_product = 1;
  int64_t innermost_extent = 1;
  int parallel_loops = 0;
  double parallel_extent = 1;  // product of the parallel loops' extents
  int parallel_position = 0;   // 1 + loops around the outermost parallel one; 0 when none
  int vector_lanes = 1;
  int64_t unroll_max_step = 0;
  // This store and its unrolled copies (see above).
  int copies = 1;
  std::vector<BufferAccessFeatures> accesses;  // heaviest first

  double total_ops() const;
  double float_ops() const;  // a multiply-add counts as two
  double bytes_touched() const;
};

struct AllocationFeatures {
  int count = 0;
  double total_bytes = 0;
  double max_bytes = 0;
  double local_bytes = 0;  // in a scope other than "global"
};

struct AnnotationFeatures {
  int parallel_loops = 0;      // parallel loops in the function
  double parallel_extent = 1;  // largest product of parallel extents around a store
  int parallel_position = 0;   // smallest non-zero StoreFeatures::parallel_position
  double parallel_share = 0;   // share of the work done under a parallel loop
  int vector_lanes = 1;        // largest over stores
  double vector_share = 0;     // share of the work done by vector stores
  int64_t unroll_max_step = 0;
};

// Per iteration of the heaviest store's innermost loop; "the inner body" above.
struct InnerBodyFeatures {
  double flops = 0;
  double stored_elements = 0;
  double loaded_elements = 0;
  double carried_share = 0;
  double flops_per_element = 0;  // flops / (loaded + stored and not carried)
};

struct ProgramFeatures {
  std::vector<StoreFeatures> stores;  // program order
  // The heaviest store of each group of copies, heaviest group first.
  std::vector<int> heaviest_stores;
  AllocationFeatures allocations;
  AnnotationFeatures annotations;
  std::array<double, kCurvePoints> intensity_curve{};  // flops per unique byte
  InnerBodyFeatures inner;
};

ProgramFeatures extract_program_features(const PrimFunc& lowered);

// One row per BufferStore of a lowered function, in program order.
std::vector<StoreFeatures> extract_store_features(const PrimFunc& lowered);

// The fixed-length vector described above; its size is feature_names().size().
std::vector<float> candidate_features(const PrimFunc& lowered);

const std::vector<std::string>& feature_names();

}  // namespace temper::cost_model
