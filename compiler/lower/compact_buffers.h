// compact_buffers: bound inference for allocations.
//
// Expects block-free IR whose Allocates sit where plan_allocations put them, with
// multi-dimensional accesses. For each allocation, the region of its buffer accessed
// under it is found by interval analysis: in each dimension, the index expressions are
// split into a part that depends only on variables bound outside the allocation (the
// same symbolic offset for every access, e.g. io*4) and a part over the loops inside
// it, whose constant bounds give the extent. The buffer shrinks to that region (a new
// Buffer with the same name, dtype and scope) and every access subtracts the offset.
// A dimension keeps its full extent when its accesses are unbounded or the region is
// not smaller; a dimension with differing offsets falls back to constant bounds over
// all variables. Conditions around accesses are not used (the region may be larger
// than what a guarded access touches, never smaller). A buffer whose element address is
// taken (the address_of intrinsic: a tensorized micro-kernel's operand) keeps its shape:
// the callee reaches a region the IR does not show, with leading dimensions that the
// schedule computed from that shape.
// A "shared" buffer is shared by the threads of a GPU block, so the threadIdx loops
// around its allocation count as inside it: the region covers every thread's accesses.
// Guarantees: every access of a compacted buffer is within its new shape whenever it
// was within the old one; parameters are untouched.
#pragma once

#include "compiler/ir/ir.h"

namespace temper {

PrimFunc compact_buffers(const PrimFunc& f);

}  // namespace temper
