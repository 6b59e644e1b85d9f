// plan_allocations: each Allocate moves to the lowest common ancestor of its uses.
//
// Expects block-free IR (after lower_blocks). An allocation is placed at the top of the
// body of the innermost loop that encloses every load and store of its buffer, or at
// the top of the function when no loop does (TVM's PlanAndUpdateBufferAllocationLocation).
// A buffer allocated inside a loop is private to an iteration: a parallel loop gets a
// copy per thread, which is what a register tile or a local accumulator needs.
// Vectorized and unrolled loops are never chosen (their iterations share the storage),
// nor, for "shared" buffers, loops bound to threadIdx (all threads of a GPU block share it).
// Guarantees: every Allocate encloses all uses of its buffer; allocations of unused
// buffers are removed; allocation order at one place follows the original order.
#pragma once

#include "compiler/ir/ir.h"

namespace temper {

PrimFunc plan_allocations(const PrimFunc& f);

}  // namespace temper
