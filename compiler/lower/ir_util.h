// Small questions about IR nodes, and small rewrites, that several passes share.
#pragma once

#include <utility>
#include <vector>

#include "compiler/ir/functor.h"
#include "compiler/ir/ir.h"

namespace temper {

// The operands of a binary node (Add ... Or); both undefined for other nodes.
std::pair<Expr, Expr> binary_operands(const Expr& e);
// a && b && c as {a, b, c}; any other expression as itself.
std::vector<Expr> split_conjuncts(const Expr& e);
// Whether e loads from any buffer (a condition that does not can be moved across stores).
bool reads_buffer(const Expr& e);
// Whether e loads the element that store writes (same buffer, structurally equal indices).
bool loads_stored_element(const Expr& e, const BufferStoreNode* store);
// A scalar constant (integer or float), or a broadcast of one, with value v.
bool is_const_value(const Expr& e, int64_t v);
// The statement that does nothing, and the test for it (an Evaluate of a constant).
Stmt no_op();
bool is_no_op(const Stmt& s);
// The sequence op (self) with each statement mutated by m and the no-ops left out: self
// when nothing changed, no_op() when nothing is left.
Stmt mutate_seq_without_no_ops(IRMutator& m, const SeqStmtNode* op, const Stmt& self);

}  // namespace temper
