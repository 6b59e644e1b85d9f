// lower_cross_thread_reduction(): a reduction whose loop is bound to threadIdx.* (TVM's
// LowerCrossThreadReduction, with a shared-memory tree in place of tvm_thread_allreduce).
//
// A block reducing  X[idx] = combine(X[idx], rhs)  under loops that bind its reduction
// variables, one of them bound to a thread axis with extent T, becomes
//
//   partial[0] = identity                      (per thread, "local")
//   <the reduction loops>  partial[0] = combine(partial[0], rhs)
//   for t in threadIdx(T): threads[t] = partial[0]          ("shared", T elements)
//   for each halving step (n -> ceil(n/2)):
//     for t in threadIdx(T): if t < n/2: threads[t] = combine(threads[t], threads[t + ceil(n/2)])
//   X[idx] = threads[0]                        (every thread stores the same value)
//
// insert_barriers (split_host_device) puts the barriers between the steps. Each step's
// writers and readers are disjoint, so a step needs no barrier of its own.
//
// The block must have its reduction form (compiler/ir/reduction_form.h) with its init in
// place, the loops from its outermost reduction loop down must bind only its reduction
// variables and hold nothing but it, exactly one of them may be thread-bound (with a
// constant extent), and no loop around them may be bound to threadIdx.*: each thread
// block then makes one reduction at a time. Anything else is a UserError naming the
// block and the loop. Runs before lower_blocks: it reads the block's form.
#pragma once

#include "compiler/ir/ir.h"

namespace temper {

PrimFunc lower_cross_thread_reduction(const PrimFunc& f);

}  // namespace temper
