// Small questions about IR nodes that several passes ask.
#pragma once

#include <utility>
#include <vector>

#include "compiler/ir/ir.h"

namespace temper {

// The operands of a binary node (Add ... Or); both undefined for other nodes.
std::pair<Expr, Expr> binary_operands(const Expr& e);
// a && b && c as {a, b, c}; any other expression as itself.
std::vector<Expr> split_conjuncts(const Expr& e);
// A scalar constant (integer or float), or a broadcast of one, with value v.
bool is_const_value(const Expr& e, int64_t v);
// The statement that does nothing, and the test for it (an Evaluate of a constant).
Stmt no_op();
bool is_no_op(const Stmt& s);

}  // namespace temper
