// Simplifier rules for integer division and modulo.
#include "compiler/lower/const_fold.h"
#include "compiler/lower/int_math.h"
#include "compiler/lower/linear_sum.h"
#include "compiler/lower/simplifier.h"

namespace temper {
namespace {

// The constant divisor of an index-typed division worth simplifying.
const int64_t* positive_divisor(const Expr& a, const Expr& b) {
  const int64_t* c = as_const_int(b);
  return is_index_type(a.dtype()) && c && *c > 0 ? c : nullptr;
}

}  // namespace

Expr Simplifier::simplify_floordiv(const Expr& a, int64_t c, const Expr& fallback) {
  DataType t = a.dtype();
  if (c == 1) return a;
  // (x // c1) // c  ->  x // (c1*c)
  if (auto* inner = a.as<FloorDivNode>()) {
    const int64_t* c1 = as_const_int(inner->b);
    int64_t product;
    if (c1 && *c1 > 0 && !__builtin_mul_overflow(*c1, c, &product) && fits_in_type(product, t)) {
      return simplify_floordiv(inner->a, product, floordiv(inner->a, make_const(t, product)));
    }
  }
  std::optional<LinearSum> s = to_linear_sum(a);
  if (!s) return fallback;
  // a = c*quotient + rest, where rest holds the terms c does not divide.
  LinearSum quotient{t, {}, 0};
  LinearSum rest{t, {}, s->constant};
  for (const LinearSum::Term& term : s->terms) {
    if (term.coeff % c == 0) {
      quotient.terms.push_back({term.atom, term.coeff / c});
    } else {
      rest.terms.push_back(term);
    }
  }
  Interval r = linear_sum_bounds(rest, analyzer_);
  if (r.is_bounded() && floordiv_i64(r.min, c) == floordiv_i64(r.max, c)) {
    quotient.constant = floordiv_i64(r.min, c);
    Expr e = from_linear_sum(quotient);
    return e.defined() ? e : fallback;
  }
  if (quotient.terms.empty()) return fallback;
  Expr rest_expr = from_linear_sum(rest);
  if (!rest_expr.defined() || !quotient.add(floordiv(rest_expr, make_const(t, c)), 1)) return fallback;
  Expr e = from_linear_sum(quotient);
  return e.defined() ? e : fallback;
}

Expr Simplifier::simplify_floormod(const Expr& a, int64_t c, const Expr& fallback) {
  DataType t = a.dtype();
  if (c == 1) return make_const(t, int64_t{0});
  // (x % c1) % c  ->  x % c  when c divides c1
  if (auto* inner = a.as<FloorModNode>()) {
    const int64_t* c1 = as_const_int(inner->b);
    if (c1 && *c1 > 0 && *c1 % c == 0) return simplify_floormod(inner->a, c, floormod(inner->a, make_const(t, c)));
  }
  std::optional<LinearSum> s = to_linear_sum(a);
  if (!s) return fallback;
  // Terms c divides do not change a % c, nor do multiples of c in the constant.
  LinearSum rest{t, {}, floormod_i64(s->constant, c)};
  for (const LinearSum::Term& term : s->terms) {
    if (term.coeff % c != 0) rest.terms.push_back(term);
  }
  Interval r = linear_sum_bounds(rest, analyzer_);
  if (r.is_bounded() && floordiv_i64(r.min, c) == floordiv_i64(r.max, c)) {
    rest.constant -= floordiv_i64(r.min, c) * c;
    Expr e = from_linear_sum(rest);
    return e.defined() ? e : fallback;
  }
  if (rest.terms.size() == s->terms.size() && rest.constant == s->constant) return fallback;
  Expr rest_expr = from_linear_sum(rest);
  return rest_expr.defined() ? floormod(rest_expr, make_const(t, c)) : fallback;
}

Expr Simplifier::visit(const FloorDivNode* op, const Expr& self) {
  Expr a = mutate(op->a);
  Expr b = mutate(op->b);
  if (Expr c = fold_binary(NodeKind::FloorDiv, a, b); c.defined()) return c;
  Expr fallback = rebuild_binary(NodeKind::FloorDiv, self, a, b);
  if (op->dtype.is_vector()) {
    Expr v = simplify_vector_binary(NodeKind::FloorDiv, a, b);
    return v.defined() ? v : fallback;
  }
  if (const int64_t* c = positive_divisor(a, b)) return simplify_floordiv(a, *c, fallback);
  if (is_one(b)) return a;
  return fallback;
}

Expr Simplifier::visit(const FloorModNode* op, const Expr& self) {
  Expr a = mutate(op->a);
  Expr b = mutate(op->b);
  if (Expr c = fold_binary(NodeKind::FloorMod, a, b); c.defined()) return c;
  Expr fallback = rebuild_binary(NodeKind::FloorMod, self, a, b);
  if (op->dtype.is_vector()) {
    Expr v = simplify_vector_binary(NodeKind::FloorMod, a, b);
    return v.defined() ? v : fallback;
  }
  if (const int64_t* c = positive_divisor(a, b)) return simplify_floormod(a, *c, fallback);
  if (is_one(b)) return make_const(op->dtype, int64_t{0});
  return fallback;
}

// Truncating division equals floor division for a >= 0 and b > 0.
Expr Simplifier::visit(const DivNode* op, const Expr& self) {
  Expr a = mutate(op->a);
  Expr b = mutate(op->b);
  if (Expr c = fold_binary(NodeKind::Div, a, b); c.defined()) return c;
  Expr fallback = rebuild_binary(NodeKind::Div, self, a, b);
  if (op->dtype.is_vector()) {
    Expr v = simplify_vector_binary(NodeKind::Div, a, b);
    if (v.defined()) return v;
  }
  if (is_const_value(b, 1)) return a;
  if (const int64_t* c = positive_divisor(a, b); c && analyzer_.bounds(a).min >= 0) {
    return simplify_floordiv(a, *c, floordiv(a, b));
  }
  return fallback;
}

Expr Simplifier::visit(const ModNode* op, const Expr& self) {
  Expr a = mutate(op->a);
  Expr b = mutate(op->b);
  if (Expr c = fold_binary(NodeKind::Mod, a, b); c.defined()) return c;
  Expr fallback = rebuild_binary(NodeKind::Mod, self, a, b);
  if (op->dtype.is_vector()) {
    Expr v = simplify_vector_binary(NodeKind::Mod, a, b);
    if (v.defined()) return v;
  }
  if (is_const_value(b, 1) && op->dtype.is_scalar()) return make_const(op->dtype, int64_t{0});
  if (const int64_t* c = positive_divisor(a, b); c && analyzer_.bounds(a).min >= 0) {
    return simplify_floormod(a, *c, floormod(a, b));
  }
  return fallback;
}

}  // namespace temper
