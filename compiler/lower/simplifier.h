// The arithmetic simplifier: an IRMutator over expressions that rewrites each node
// after simplifying its children. Used through Analyzer::simplify, which repeats it
// until nothing changes (at most a few rounds, so it always terminates).
//
// Every rule keeps the value of the expression for every value of its variables (under
// the overflow convention of analyzer.h). The rules, by file:
// - const_fold.cpp: operations on constants, for every type.
// - simplify_add.cpp: index-typed +, -, * by a constant are put in the canonical linear
//   form of linear_sum.h (collect terms, fold constants); in a sum,
//   (x // c)*c + x % c becomes x, and x - (x // c)*c becomes x % c. Other types: x + 0,
//   x - 0, x * 1, x * 0 for integers, x - x for integers.
// - simplify_div.cpp: (a*8 + b) // 8 is a + b // 8, and a when 0 <= b < 8 by bounds
//   (any constant divisor, any linear numerator: terms whose coefficient the divisor
//   divides leave the division); % likewise keeps only the other terms, and drops the
//   modulo when their bounds fit in one period; (x // a) // b is x // (a*b);
//   (x % a) % b is x % b when b divides a; truncating / and % become floor division
//   and modulo when the numerator is provably non-negative and the divisor positive.
// - simplify_minmax.cpp: min/max of operands whose difference has a known sign.
// - simplify_compare.cpp: comparisons decided by the bounds of the difference of
//   their sides, or by an assumed fact; undecided integer comparisons are normalized
//   to `positive terms OP rest` (x + 1 < y becomes x < y - 1); &&, ||, ! with
//   constants, !(a < b) as a >= b for integers.
// - simplify_vector.cpp: Broadcast(a) op Broadcast(b) is Broadcast(a op b); ramps
//   absorb broadcasts in + - * (Ramp(b, s) + Broadcast(x) is Ramp(b + x, s)); a ramp
//   of stride 0 is a broadcast; ramp // c and ramp % c when the lanes stay in one
//   period or the stride is a multiple of c; vector comparisons by bounds.
// - simplify_other.cpp: casts of constants and broadcasts, select with a decided
//   condition or equal branches, lets of constants or variables inlined and unused
//   lets dropped.
#pragma once

#include "compiler/ir/functor.h"
#include "compiler/lower/analyzer.h"
#include "compiler/lower/ir_util.h"

namespace temper {

class Simplifier : public IRMutator {
 public:
  explicit Simplifier(Analyzer& analyzer) : analyzer_(analyzer) {}
  using IRMutator::mutate;

 protected:
  using IRMutator::visit;
  Expr visit(const AddNode* op, const Expr& self) override;
  Expr visit(const SubNode* op, const Expr& self) override;
  Expr visit(const MulNode* op, const Expr& self) override;
  Expr visit(const DivNode* op, const Expr& self) override;
  Expr visit(const ModNode* op, const Expr& self) override;
  Expr visit(const FloorDivNode* op, const Expr& self) override;
  Expr visit(const FloorModNode* op, const Expr& self) override;
  Expr visit(const MinNode* op, const Expr& self) override;
  Expr visit(const MaxNode* op, const Expr& self) override;
  Expr visit(const EQNode* op, const Expr& self) override;
  Expr visit(const NENode* op, const Expr& self) override;
  Expr visit(const LTNode* op, const Expr& self) override;
  Expr visit(const LENode* op, const Expr& self) override;
  Expr visit(const GTNode* op, const Expr& self) override;
  Expr visit(const GENode* op, const Expr& self) override;
  Expr visit(const AndNode* op, const Expr& self) override;
  Expr visit(const OrNode* op, const Expr& self) override;
  Expr visit(const NotNode* op, const Expr& self) override;
  Expr visit(const CastNode* op, const Expr& self) override;
  Expr visit(const SelectNode* op, const Expr& self) override;
  Expr visit(const RampNode* op, const Expr& self) override;
  Expr visit(const LetNode* op, const Expr& self) override;

 private:
  Analyzer& analyzer_;

  // simplify_add.cpp: e (an index-typed sum) in canonical linear form.
  Expr canonical_sum(const Expr& e);
  // simplify_div.cpp
  // a // c and a % c for an index-typed a and c > 0; fallback when no rule applies.
  Expr simplify_floordiv(const Expr& a, int64_t c, const Expr& fallback);
  Expr simplify_floormod(const Expr& a, int64_t c, const Expr& fallback);
  // simplify_compare.cpp
  Expr simplify_compare(NodeKind kind, const Expr& a, const Expr& b, const Expr& self);
  // simplify_vector.cpp: a rule for a vector binary operation, or an undefined Expr.
  Expr simplify_vector_binary(NodeKind kind, const Expr& a, const Expr& b);
  Expr make_ramp(const Expr& base, const Expr& stride, int lanes);
};

// a op b as a node, or self when a and b are self's own operands.
Expr rebuild_binary(NodeKind kind, const Expr& self, const Expr& a, const Expr& b);

}  // namespace temper
