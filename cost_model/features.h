// Features of a candidate program for the learned cost model, after TVM Ansor's
// per-store features (simplified).
//
// Input: a PrimFunc as lower() leaves it (no blocks, flattened 1-D indices, vectorized
// loops turned into Ramp/Broadcast vector IR, unrolled loops expanded, Serial and
// Parallel loops). Features are read from the IR alone, so they serve template and
// auto-scheduler candidates alike; nothing is compiled or run.
//
// One row per BufferStore statement (extract_store_features), in program order:
// - arithmetic, counted per element (a 16-lane vector add is 16 adds) and weighted by
//   the product of the enclosing loop extents, i.e. operations per call of the function:
//   float add/sub, float mul, float multiply-adds (a + b*c, counted once, not as an add
//   and a mul), float div, compares and selects, pure math calls (exp, tanh, ...), and
//   integer arithmetic (index computation included). Only the store's own value and
//   indices count, not enclosing conditions.
// - loop structure: the number of enclosing loops, the product of their extents, the
//   innermost extent (loops of non-constant extent count as extent 1).
// - annotations: parallel loops enclosing the store (count, product of extents), the
//   store's vector lanes (a vectorized loop became these lanes), and the largest
//   "pragma_auto_unroll_max_step" on an enclosing loop. Unrolled loops are expanded by
//   lowering and show only as more store statements.
// - the buffers the statement accesses (the stored buffer and each loaded one, merged
//   per buffer), heaviest first by bytes touched: bytes touched per call of the
//   function, unique bytes (footprint: the extents of the loops the index depends on,
//   times the lanes, at most the buffer's size), the stride in elements of the
//   innermost varying dimension (the Ramp stride for a vector access, otherwise the
//   coefficient of the innermost enclosing loop variable in the index; 0 when the index
//   does not depend on it linearly, e.g. only through x // 8), and reuse = touched / unique.
// Enclosing if-conditions are ignored: a store under `if (k == 0)` counts as if it ran on
// every iteration.
//
// candidate_features() combines the rows into one fixed-length vector; feature_names()
// names its entries in order. Layout (kFeatureLayoutVersion 1), every count and size
// scaled by log2(1 + x) as in TVM (strides keep their sign: sign(x) * log2(1 + |x|)):
//   [0..9]   totals over all stores: float_add_sub, float_mul, float_fma, float_div,
//            float_cmp_select, float_math, int_arith, bytes_touched, unique_bytes,
//            num_stores
//   then kTopStores = 2 slots "store<s>." for the heaviest stores (by operations plus
//   bytes touched, ties in program order), each of 14 + kBufferSlots*4 entries:
//            float_add_sub, float_mul, float_fma, float_div, float_cmp_select,
//            float_math, int_arith, num_loops, loop_product, innermost_extent,
//            parallel_loops, parallel_extent, vector_lanes, unroll_max_step,
//            then kBufferSlots = 3 slots "buf<b>.": bytes, unique_bytes, stride, reuse.
// Absent stores and buffers are all zeros. A change of this layout must bump
// kFeatureLayoutVersion: saved models check it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace temper::cost_model {

inline constexpr int kFeatureLayoutVersion = 1;
inline constexpr int kTopStores = 2;
inline constexpr int kBufferSlots = 3;

struct BufferAccessFeatures {
  std::string buffer;
  double bytes = 0;         // touched per call of the function
  double unique_bytes = 0;  // footprint
  int64_t stride = 0;       // elements, innermost varying dimension
  double reuse = 0;         // bytes / unique_bytes
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
  int vector_lanes = 1;
  int64_t unroll_max_step = 0;
  std::vector<BufferAccessFeatures> accesses;  // heaviest first

  double total_ops() const;
};

// One row per BufferStore of a lowered function, in program order.
std::vector<StoreFeatures> extract_store_features(const PrimFunc& lowered);

// The fixed-length vector described above; its size is feature_names().size().
std::vector<float> candidate_features(const PrimFunc& lowered);

const std::vector<std::string>& feature_names();

}  // namespace temper::cost_model
