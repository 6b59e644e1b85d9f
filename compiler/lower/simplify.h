// simplify: the arithmetic simplifier (simplifier.h) over a whole function.
//
// Expects any IR. Simplifies every expression in the context of the loops, lets and
// branch conditions around it (Analyzer::simplify on the body); symbolic dimensions
// of the parameters are known to be positive. Removes branches whose conditions are
// decided, loops of extent 0, and replaces loops of extent 1 (other than thread
// bindings and annotated loops) by their bodies.
// Guarantees: the same values are computed; nothing is added.
#pragma once

#include "compiler/ir/ir.h"

namespace temper {

PrimFunc simplify(const PrimFunc& f);

}  // namespace temper
