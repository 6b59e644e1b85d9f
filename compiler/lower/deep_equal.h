// Equality of IR by value, with variables and buffers compared by identity.
//
// structural_equal (ir/structural_equal.h) pairs variables up to renaming, so x + 1
// and y + 1 are equal there. Rewrite rules need the stricter question "is this the
// same value?": deep_equal(x + 1, y + 1) is false unless x and y are one Var.
#pragma once

#include "compiler/ir/ir.h"

namespace temper {

bool deep_equal(const Expr& a, const Expr& b);
bool deep_equal(const Stmt& a, const Stmt& b);

}  // namespace temper
