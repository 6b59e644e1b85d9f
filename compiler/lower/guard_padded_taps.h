// guard_padded_taps: an accumulation of a padded input's tap runs only where the tap is
// inside the input, instead of adding a product with the padding's zero.
//
// Expects block-free, simplified scalar IR (before vectorize_loops). A store
//   B[i] = B[i] + select(c, x, 0) * w      (either operand order, or without the * w)
// becomes
//   if (c) B[i] = B[i] + x * w
// when c is a scalar condition that reads no buffer and no variable of an enclosing
// vectorized loop (a condition per lane stays a select), outside thread-bound (GPU)
// loops. A conv's or pool's inlined padding has this form: partition_loops then splits
// the window's loops where the guard is decided, and the taps that fall in the padding
// disappear from the unrolled code -- on a 7x7 map with a 3x3 window, 18% of the
// multiply-adds, which oneDNN's and onnxruntime's kernels skip as well.
// Guarantees: the same stores happen for the taps inside the input; a tap in the
// padding, which added +-0 (or NaN for a non-finite weight), adds nothing. hoist_guards
// lifts the new guards out of the loops they do not depend on.
#pragma once

#include "compiler/ir/ir.h"

namespace temper {

PrimFunc guard_padded_taps(const PrimFunc& f);

}  // namespace temper
