// Simplifier rules for casts, selects and lets, and the Analyzer's entry point.
#include "compiler/ir/structural_equal.h"
#include "compiler/ir/substitute.h"
#include "compiler/lower/const_fold.h"
#include "compiler/lower/simplifier.h"

namespace temper {

Expr Simplifier::visit(const CastNode* op, const Expr& self) {
  Expr v = mutate(op->value);
  if (Expr c = fold_cast(op->dtype, v); c.defined()) return c;
  if (auto* b = v.as<BroadcastNode>()) return broadcast(mutate(cast(op->dtype.element_of(), b->value)), b->lanes);
  return v.same_as(op->value) ? self : cast(op->dtype, v);
}

Expr Simplifier::visit(const SelectNode* op, const Expr& self) {
  Expr c = mutate(op->condition);
  Expr t = mutate(op->true_value);
  Expr f = mutate(op->false_value);
  if (is_const_value(c, 1)) return t;
  if (is_const_value(c, 0)) return f;
  if (structural_equal(t, f, /*map_vars=*/false)) return t;
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
  return select(c, t, f);
}

Expr Simplifier::visit(const LetNode* op, const Expr& self) {
  Expr value = mutate(op->value);
  // A constant or a variable costs nothing to repeat.
  if (value.as<IntImmNode>() || value.as<FloatImmNode>() || value.as<VarNode>()) {
    return mutate(substitute(op->body, {{op->var.get(), value}}));
  }
  analyzer_.bind(op->var, analyzer_.bounds(value));
  Expr body = mutate(op->body);
  if (!uses_var(body, op->var)) return body;
  if (value.same_as(op->value) && body.same_as(op->body)) return self;
  return let(op->var, value, body);
}

Expr Analyzer::simplify(const Expr& e) {
  // Each round simplifies children before parents; a rewrite at a parent can expose a
  // rule at a child (a new term in a sum), which the next round takes. Rounds are
  // capped so that a pair of rules undoing each other cannot loop.
  constexpr int kMaxRounds = 4;
  Expr current = e;
  for (int round = 0; round < kMaxRounds; ++round) {
    Expr next = Simplifier(*this).mutate(current);
    if (next.same_as(current) || structural_equal(next, current, /*map_vars=*/false)) return next;
    current = next;
  }
  return current;
}

}  // namespace temper
