#include "compiler/lower/lower.h"

#include <iostream>

#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/lower/compact_buffers.h"
#include "compiler/lower/flatten_buffers.h"
#include "compiler/lower/guard_padded_taps.h"
#include "compiler/lower/hoist_guards.h"
#include "compiler/lower/lower_blocks.h"
#include "compiler/lower/lower_cross_thread_reduction.h"
#include "compiler/lower/partition_loops.h"
#include "compiler/lower/plan_allocations.h"
#include "compiler/lower/remove_no_op.h"
#include "compiler/lower/simplify.h"
#include "compiler/lower/storage_rewrite.h"
#include "compiler/lower/tree_reduce_lanes.h"
#include "compiler/lower/unroll_loops.h"
#include "compiler/lower/vectorize_loops.h"

namespace temper {

bool verify_ir_by_default() {
#if !defined(NDEBUG) || defined(TEMPER_VERIFY_IR)
  return true;
#else
  return false;
#endif
}

PrimFunc lower(const PrimFunc& input, const LowerOptions& opts) {
  std::ostream& out = opts.log ? *opts.log : std::cerr;
  auto log = [&](const char* pass, const PrimFunc& f) {
    if (opts.log_passes) out << "// after " << pass << "\n" << f << "\n";
    if (opts.verify) verify(f, pass);
  };
  PrimFunc f = input;
  log("input", f);

  // It reads a reduction block's form, which lower_blocks dissolves.
  f = lower_cross_thread_reduction(f);
  log("lower_cross_thread_reduction", f);
  // Blocks first: every later pass works on plain loops.
  f = lower_blocks(f);
  log("lower_blocks", f);
  // Allocations move to where they are used before their sizes are inferred: the
  // region to keep is the one accessed under the allocation's new place.
  f = plan_allocations(f);
  log("plan_allocations", f);
  // Per dimension, so before flattening mixes the dimensions into one index.
  f = compact_buffers(f);
  log("compact_buffers", f);
  f = flatten_buffers(f);
  log("flatten_buffers", f);
  // Partitioning reads guards in simplified, linear form. Its copies of a loop body (and
  // unroll_loops' below) allocate the body's buffers again, one Allocate per copy: the
  // passes after it rewrite each allocation within its own scope.
  f = simplify(f);
  log("simplify", f);
  // A padded tap's guard, lifted above the loops it does not depend on (the vectorized
  // lanes among them), is one partition_loops can split the window's loops by.
  f = guard_padded_taps(f);
  log("guard_padded_taps", f);
  f = hoist_guards(f);
  log("hoist_guards", f);
  f = partition_loops(f);
  log("partition_loops", f);
  // Remainder loops of one iteration collapse and their guards are decided, leaving
  // empty loops for remove_no_op.
  f = simplify(f);
  log("simplify", f);
  f = remove_no_op(f);
  log("remove_no_op", f);
  // After partitioning, so that main parts are free of guards and vectorize.
  f = vectorize_loops(f);
  log("vectorize_loops", f);
  // Before unrolling, which would dissolve the lanes' serial reduction loops it matches.
  f = tree_reduce_lanes(f);
  log("tree_reduce_lanes", f);
  // After vectorizing: unrolled copies then repeat vector statements.
  f = unroll_loops(f);
  log("unroll_loops", f);
  // Ramps and broadcasts of vectorization fold, and the constants of unrolled copies.
  f = simplify(f);
  log("simplify", f);
  // The unrolled copies' guards of one condition (a conv's window row) become one.
  f = hoist_guards(f);
  log("hoist_guards", f);
  // Sizes are constants now that buffers are compacted and simplified.
  f = storage_rewrite(f);
  log("storage_rewrite", f);
  f = remove_no_op(f);
  log("remove_no_op", f);

  if (opts.verify) verify_lowered(f, "lower");
  return f;
}

}  // namespace temper
