// Simplifier rules for comparisons and logic.
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/const_fold.h"
#include "compiler/lower/linear_sum.h"
#include "compiler/lower/simplifier.h"

namespace temper {
namespace {

NodeKind negated(NodeKind k) {
  switch (k) {
    case NodeKind::LT:
      return NodeKind::GE;
    case NodeKind::LE:
      return NodeKind::GT;
    case NodeKind::GT:
      return NodeKind::LE;
    case NodeKind::GE:
      return NodeKind::LT;
    case NodeKind::EQ:
      return NodeKind::NE;
    default:
      return NodeKind::EQ;  // NE
  }
}

// a OP b  <=>  b FLIP(OP) a
NodeKind flipped(NodeKind k) {
  switch (k) {
    case NodeKind::LT:
      return NodeKind::GT;
    case NodeKind::LE:
      return NodeKind::GE;
    case NodeKind::GT:
      return NodeKind::LT;
    case NodeKind::GE:
      return NodeKind::LE;
    default:
      return k;  // EQ, NE
  }
}

// The truth of (d OP 0) where the bounds of d decide it: 1, 0, or -1 when undecided.
int decide(NodeKind kind, const Interval& d) {
  switch (kind) {
    case NodeKind::LT:
      return d.max < 0 ? 1 : d.min >= 0 ? 0 : -1;
    case NodeKind::LE:
      return d.max <= 0 ? 1 : d.min > 0 ? 0 : -1;
    case NodeKind::GT:
      return d.min > 0 ? 1 : d.max <= 0 ? 0 : -1;
    case NodeKind::GE:
      return d.min >= 0 ? 1 : d.max < 0 ? 0 : -1;
    case NodeKind::EQ:
      return d == Interval::point(0) ? 1 : (d.min > 0 || d.max < 0) ? 0 : -1;
    default:
      return d == Interval::point(0) ? 0 : (d.min > 0 || d.max < 0) ? 1 : -1;  // NE
  }
}

// (d OP 0) written as `positive terms OP negative terms - constant`, or with the sides
// swapped when d has no positive term (5 - x < 0 reads x > 5).
Expr normalize_compare(NodeKind kind, const LinearSum& d) {
  LinearSum positive{d.dtype, {}, 0};
  LinearSum negative{d.dtype, {}, 0};
  for (const LinearSum::Term& t : d.terms) {
    if (t.coeff == Interval::kNegInf) return Expr();  // -coeff would overflow
    if (t.coeff > 0) {
      positive.terms.push_back(t);
    } else {
      negative.terms.push_back({t.atom, -t.coeff});
    }
  }
  if (d.constant == Interval::kNegInf) return Expr();
  if (positive.terms.empty()) {
    // 0 OP N - k  <=>  N FLIP(OP) k
    negative.constant = 0;
    positive.constant = d.constant;
    std::swap(positive, negative);
    kind = flipped(kind);
  } else {
    negative.constant = -d.constant;
  }
  Expr lhs = from_linear_sum(positive);
  Expr rhs = from_linear_sum(negative);
  if (!lhs.defined() || !rhs.defined()) return Expr();
  return make_binary(kind, lhs, rhs);
}

bool is_fact(const Expr& e, const Analyzer& analyzer) {
  for (const Expr& f : analyzer.facts()) {
    if (structural_equal(f, e, /*map_vars=*/false)) return true;
  }
  return false;
}

}  // namespace

Expr Simplifier::simplify_compare(NodeKind kind, const Expr& a, const Expr& b, const Expr& self) {
  if (Expr c = fold_binary(kind, a, b); c.defined()) return c;
  Expr result = rebuild_binary(kind, self, a, b);
  if (a.dtype().is_vector()) {
    if (Expr v = simplify_vector_binary(kind, a, b); v.defined()) return v;
    // Decided for all lanes by the bounds of the difference (a ramp or broadcast).
    if (is_index_type(a.dtype().element_of())) {
      int known = decide(kind, analyzer_.bounds(mutate(a - b)));
      if (known >= 0) return broadcast(make_bool(known == 1), a.dtype().lanes());
    }
    return result;
  }
  // x == x is false for a NaN.
  if (!a.dtype().is_float() && structural_equal(a, b, /*map_vars=*/false)) {
    return make_bool(kind == NodeKind::EQ || kind == NodeKind::LE || kind == NodeKind::GE);
  }
  Expr negation =
      a.dtype().is_float() && kind != NodeKind::EQ && kind != NodeKind::NE ? Expr() : make_binary(negated(kind), a, b);
  if (std::optional<LinearSum> d = linear_difference(a, b)) {
    int known = decide(kind, linear_sum_bounds(*d, analyzer_));
    if (known >= 0) return make_bool(known == 1);
    if (Expr n = normalize_compare(kind, *d); n.defined()) result = n;
    // In the form assume() records for the condition of an else branch.
    negation = normalize_compare(negated(kind), *d);
  }
  if (is_fact(result, analyzer_)) return make_bool(true);
  if (negation.defined() && is_fact(negation, analyzer_)) return make_bool(false);
  return result;
}

#define TEMPER_COMPARE_VISIT(K)                                               \
  Expr Simplifier::visit(const K##Node* op, const Expr& self) {               \
    return simplify_compare(NodeKind::K, mutate(op->a), mutate(op->b), self); \
  }
TEMPER_COMPARE_VISIT(EQ)
TEMPER_COMPARE_VISIT(NE)
TEMPER_COMPARE_VISIT(LT)
TEMPER_COMPARE_VISIT(LE)
TEMPER_COMPARE_VISIT(GT)
TEMPER_COMPARE_VISIT(GE)
#undef TEMPER_COMPARE_VISIT

Expr Simplifier::visit(const AndNode* op, const Expr& self) {
  Expr a = mutate(op->a);
  Expr b = mutate(op->b);
  if (Expr c = fold_binary(NodeKind::And, a, b); c.defined()) return c;
  if (is_const_value(a, 0) || is_const_value(b, 0)) return make_const(op->dtype, int64_t{0});
  if (is_const_value(a, 1)) return b;
  if (is_const_value(b, 1)) return a;
  if (structural_equal(a, b, /*map_vars=*/false)) return a;
  if (op->dtype.is_vector()) {
    Expr v = simplify_vector_binary(NodeKind::And, a, b);
    if (v.defined()) return v;
  }
  return rebuild_binary(NodeKind::And, self, a, b);
}

Expr Simplifier::visit(const OrNode* op, const Expr& self) {
  Expr a = mutate(op->a);
  Expr b = mutate(op->b);
  if (Expr c = fold_binary(NodeKind::Or, a, b); c.defined()) return c;
  if (is_const_value(a, 1) || is_const_value(b, 1)) return make_const(op->dtype, int64_t{1});
  if (is_const_value(a, 0)) return b;
  if (is_const_value(b, 0)) return a;
  if (structural_equal(a, b, /*map_vars=*/false)) return a;
  if (op->dtype.is_vector()) {
    Expr v = simplify_vector_binary(NodeKind::Or, a, b);
    if (v.defined()) return v;
  }
  return rebuild_binary(NodeKind::Or, self, a, b);
}

Expr Simplifier::visit(const NotNode* op, const Expr& self) {
  Expr a = mutate(op->a);
  if (Expr c = fold_not(a); c.defined()) return c;
  if (auto* inner = a.as<NotNode>()) return inner->a;
  if (auto* b = a.as<BroadcastNode>()) return broadcast(mutate(!b->value), b->lanes);
  if (is_comparison(a.kind())) {
    auto [x, y] = binary_operands(a);
    // With a NaN operand every ordered comparison is false, so only == and != negate
    // for floats.
    bool ordered = a.kind() != NodeKind::EQ && a.kind() != NodeKind::NE;
    if (!ordered || !x.dtype().is_float()) {
      NodeKind k = negated(a.kind());
      return simplify_compare(k, x, y, make_binary(k, x, y));
    }
  }
  return a.same_as(op->a) ? self : !a;
}

}  // namespace temper
