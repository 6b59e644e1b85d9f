// remove_no_op: statements that do nothing disappear.
//
// Expects any block-free IR. Removes evaluations of expressions without side effects
// (anything but calls of external functions and intrinsics), stores of a value loaded
// from the same place, loops, lets and allocations whose bodies do nothing, `if`s
// whose branches do nothing (the condition is pure), and allocations of buffers that
// are never accessed (keeping their bodies). An `if` with an empty then-branch becomes
// `if (!cond)` of its else-branch.
// Guarantees: the same stores happen in the same order; an empty function body is a
// single no-op Evaluate(0).
#pragma once

#include "compiler/ir/ir.h"

namespace temper {

PrimFunc remove_no_op(const PrimFunc& f);

}  // namespace temper
