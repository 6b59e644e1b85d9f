// The IR verifier: checks the invariants every pass must keep, so that a pass that
// breaks the IR is named at once instead of a later pass failing obscurely.
//
// verify() checks that
// - every variable used is bound where it is used (by a loop, a let, a block), or is
//   a free variable of the function's signature (a symbolic dimension of a parameter);
//   no variable is bound again inside its own scope;
// - every buffer used is a parameter, or allocated (Allocate, Block alloc_buffers) in
//   an enclosing scope, and is not allocated again inside that scope;
// - every access has as many indices as its buffer has dimensions, or one (flat);
//   indices are integers; a load has its buffer's element type with the index's lanes;
//   a stored value has the buffer's element type and the index's lanes;
// - operands of binary operations have one type, and the result has the right type;
//   conditions are bool; ramps, broadcasts, selects and casts agree on lanes;
// - loop bounds are scalar integers of the loop variable's type; a BlockRealize has a
//   binding for each block variable; no Reduce is left in a function.
// verify_lowered() also checks the form codegen expects from lower(): no blocks, one
// index per access, only serial, parallel and thread-bound loops, 1-D allocations.
//
// A violation throws InternalError naming the pass after which it was found.
#pragma once

#include <string>

#include "compiler/ir/ir.h"

namespace temper {

void verify(const PrimFunc& f, const std::string& after_pass);
void verify_lowered(const PrimFunc& f, const std::string& after_pass);

}  // namespace temper
