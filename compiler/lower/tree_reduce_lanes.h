// tree_reduce_lanes: the serial tail of a vectorized reduction becomes a tree of vector
// operations.
//
// rfactor leaves one partial result per vector lane in a buffer and reduces them in a
// serial loop,
//   for (v, 0, L) { [if (v == 0) acc[i] = init]  acc[i] = op(acc[i], part[b + v]) }
// whose L dependent scalar operations (L = 16: 16 x 3 cycles of float adds on x86) cost a
// softmax or layer-norm row about as much as its vector work. With op +, max or min, L a
// power of two in [4, 64], and acc[i], b and init independent of v, the loop becomes
//   [acc[i] = init]
//   tree[0:L/2] = op(part[b : b+L/2], part[b+L/2 : b+L]); tree[0:L/4] = op(tree[0:L/4], tree[L/4:L/2]) ...
//   acc[i] = op(acc[i], op(tree[0], tree[1]))
// in a local buffer that LLVM keeps in registers: log2(L) steps instead of L. A float sum
// is reassociated, as rfactor already did with the row's elements.
//
// Expects flattened IR after vectorize_loops and simplify (one index per access).
#pragma once

#include "compiler/ir/ir.h"

namespace temper {

PrimFunc tree_reduce_lanes(const PrimFunc& f);

}  // namespace temper
