// Structural equality and hashing of IR.
//
// Two programs are structurally equal when they have the same nodes, types, constants,
// names of blocks and calls, and annotations, up to a consistent renaming of variables
// and buffers: the first time a variable (or buffer) of one side meets one of the other,
// they are paired, and every later occurrence must agree. The hash is consistent with
// this: variables and buffers hash by their order of first appearance.
//
// With map_vars false nothing is renamed: variables and buffers must be the very same
// objects on both sides, so x + 1 and y + 1 differ unless x and y are one Var. That is
// the question rewrite rules ask ("is this the same value?").
#pragma once

#include <cstddef>

#include "compiler/ir/ir.h"

namespace temper {

bool structural_equal(const Expr& a, const Expr& b, bool map_vars = true);
bool structural_equal(const Stmt& a, const Stmt& b, bool map_vars = true);
bool structural_equal(const PrimFunc& a, const PrimFunc& b);

size_t structural_hash(const Expr& e);
size_t structural_hash(const Stmt& s);
size_t structural_hash(const PrimFunc& f);

}  // namespace temper
