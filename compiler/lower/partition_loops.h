// partition_loops: a loop guarded by a tail predicate splits into a guard-free main
// part and guarded remainders.
//
// Expects block-free, simplified IR. For a loop with constant bounds over v, a
// condition of an `if` in its body (a conjunct of it) of the form `a*v + r OP c`, where
// r is bounded by constants over the loops inside (and variables outside that have a
// single value), holds for every inner iteration when v is in some range [lo, hi]:
//   for (io, 0, 13) { for (ii, 0, 8) { if (io*8 + ii < 100) S } }
// becomes
//   for (io, 0, 12) { for (ii, 0, 8) { S } }
//   for (io_1, 12, 1) { for (ii, 0, 8) { if (io_1*8 + ii < 100) S } }
// The remainders (before lo, after hi) keep the guard and are partitioned again, so the
// inner loop of the tail above splits at ii = 4 in turn. A range of v where the condition
// holds for no inner iteration is split off too, its `if` replaced by its else case:
//   for (jo, 0, 2) { for (ji, 0, 16) { if (jo*16 + ji < 8) S } }
// keeps jo = 0 (whose ji loop then splits at 8) and drops S for jo = 1. Loops with non-constant bounds,
// thread-bound loops, and conditions that are not linear in v are left alone (the
// predicate stays). A parallel loop is partitioned only where its guard holds from its
// first iteration on (a tail): a head would run on one thread.
// Guarantees: the same statements run for the same iterations, in the same order. An
// Allocate inside the loop is copied into each part, so one buffer may then be allocated
// at several places, each enclosing the uses in its part.
#pragma once

#include "compiler/ir/ir.h"

namespace temper {

PrimFunc partition_loops(const PrimFunc& f);

}  // namespace temper
