// vectorize_loops: vectorized loops become vector IR.
//
// Expects flattened, simplified IR, after partition_loops has taken tail guards out of
// the main parts of loops. A ForKind::Vectorized loop over v in [min, min + n), n a
// constant, is replaced by its body with v as ramp(min, 1, n): operations on values
// that depend on v become n-lane operations (scalars beside them are broadcast), loads
// and stores at indices that depend on v become vector loads and stores, and lets
// become vector lets. Loops inside the body stay loops with vector bodies (their bounds
// must not depend on v); `if`s stay if their conditions do not depend on v.
// What cannot be vectorized turns the loop into a serial loop, with a warning that says
// why: a non-constant extent, a condition that depends on v (masked stores are not
// supported), a store at an index independent of v (a reduction across lanes), a load
// and a store of one buffer at different indices (lanes would see each other's
// writes in another order), an allocation or a nested vector in the body, a call to an
// external function with vector arguments.
// Guarantees: no ForKind::Vectorized loop remains.
#pragma once

#include "compiler/ir/ir.h"

namespace temper {

PrimFunc vectorize_loops(const PrimFunc& f);

}  // namespace temper
