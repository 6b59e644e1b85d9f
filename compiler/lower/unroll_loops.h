// unroll_loops: loops marked for unrolling are replaced by copies of their bodies.
//
// Expects flattened IR after vectorize_loops. A loop is unrolled when
// - it is ForKind::Unrolled, or
// - it is a serial loop with a constant extent inside (or carrying) a loop annotated
//   "pragma_auto_unroll_max_step" = N, and its total step count is at most N: the
//   number of times its innermost statements run, the product of the constant extents
//   of it and the loops inside it (summed over statements in sequence); TVM's
//   auto_unroll_max_step. The innermost annotation applies.
// Copy k of the body has the loop variable replaced by min + k; inner loops are
// unrolled first. An Unrolled loop whose extent is not a constant becomes serial, with
// a warning. The annotation is consumed.
// Guarantees: no ForKind::Unrolled loop and no "pragma_auto_unroll_max_step" remains. An
// Allocate in an unrolled body is copied with it (one per copy, each enclosing its uses).
#pragma once

#include "compiler/ir/ir.h"

namespace temper {

// The annotation key, and the one place its name is written.
inline constexpr const char* kAutoUnrollMaxStep = "pragma_auto_unroll_max_step";

PrimFunc unroll_loops(const PrimFunc& f);

}  // namespace temper
