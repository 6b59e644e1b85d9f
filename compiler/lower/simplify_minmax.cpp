// Simplifier rules for min and max.
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/const_fold.h"
#include "compiler/lower/linear_sum.h"
#include "compiler/lower/simplifier.h"

namespace temper {
namespace {

// The sign of a - b where the bounds decide it: -1 when a <= b, 1 when a >= b, else 0.
int difference_sign(const Expr& a, const Expr& b, const Analyzer& analyzer) {
  std::optional<LinearSum> d = linear_difference(a, b);
  if (!d) return 0;
  Interval r = linear_sum_bounds(*d, analyzer);
  if (r.max <= 0) return -1;
  if (r.min >= 0) return 1;
  return 0;
}

}  // namespace

Expr Simplifier::visit(const MinNode* op, const Expr& self) {
  Expr a = mutate(op->a);
  Expr b = mutate(op->b);
  if (Expr c = fold_binary(NodeKind::Min, a, b); c.defined()) return c;
  if (structural_equal(a, b, /*map_vars=*/false)) return a;
  if (op->dtype.is_vector()) {
    Expr v = simplify_vector_binary(NodeKind::Min, a, b);
    if (v.defined()) return v;
  }
  int sign = difference_sign(a, b, analyzer_);
  if (sign < 0) return a;
  if (sign > 0) return b;
  return rebuild_binary(NodeKind::Min, self, a, b);
}

Expr Simplifier::visit(const MaxNode* op, const Expr& self) {
  Expr a = mutate(op->a);
  Expr b = mutate(op->b);
  if (Expr c = fold_binary(NodeKind::Max, a, b); c.defined()) return c;
  if (structural_equal(a, b, /*map_vars=*/false)) return a;
  if (op->dtype.is_vector()) {
    Expr v = simplify_vector_binary(NodeKind::Max, a, b);
    if (v.defined()) return v;
  }
  int sign = difference_sign(a, b, analyzer_);
  if (sign < 0) return b;
  if (sign > 0) return a;
  return rebuild_binary(NodeKind::Max, self, a, b);
}

}  // namespace temper
