// hoist_guards: guards that do not change inside a loop move outside it, and neighbouring
// guards of one condition become one.
//
// Expects block-free IR. For an `if` without else whose condition reads no buffer (so
// no statement can change it):
//   if (c) A; if (c) B                       ->  if (c) { A; B }
//   for (v, ...) { if (c) S }   (c without v) ->  if (c) for (v, ...) { S }
// Thread-bound loops keep their bodies. guard_padded_taps' guards of a conv's rows (which
// depend on the parallel loop and the window row, not on the channels and columns inside
// them) so become one branch per window row instead of one per multiply-add, and the
// vectorized loops inside them vectorize.
// Guarantees: the same statements run for the same iterations, in the same order.
#pragma once

#include "compiler/ir/ir.h"

namespace temper {

PrimFunc hoist_guards(const PrimFunc& f);

}  // namespace temper
