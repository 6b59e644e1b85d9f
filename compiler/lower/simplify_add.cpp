// Simplifier rules for +, - and *: the canonical linear form of index arithmetic.
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/const_fold.h"
#include "compiler/lower/linear_sum.h"
#include "compiler/lower/simplifier.h"

namespace temper {
namespace {

LinearSum without_terms(const LinearSum& s, size_t i, size_t j) {
  LinearSum r = s;
  r.terms.clear();
  for (size_t t = 0; t < s.terms.size(); ++t) {
    if (t != i && t != j) r.terms.push_back(s.terms[t]);
  }
  return r;
}

// (x // c)*(c*k) + (x % c)*k  ->  x*k
bool merge_div_with_mod(LinearSum& s, size_t i, const FloorDivNode* div, int64_t c) {
  int64_t k = s.terms[i].coeff / c;
  for (size_t j = 0; j < s.terms.size(); ++j) {
    auto* mod = s.terms[j].atom.as<FloorModNode>();
    if (!mod || s.terms[j].coeff != k || !is_const_int(mod->b, c) ||
        !structural_equal(mod->a, div->a, /*map_vars=*/false)) {
      continue;
    }
    std::optional<LinearSum> x = to_linear_sum(div->a);
    LinearSum next = without_terms(s, i, j);
    if (!x || !next.add(*x, k)) return false;
    s = std::move(next);
    return true;
  }
  return false;
}

// x*k - (x // c)*(c*k)  ->  (x % c)*k, when all of x*k is in the sum.
bool merge_div_into_mod(LinearSum& s, size_t i, const FloorDivNode* div, int64_t c) {
  int64_t k = -(s.terms[i].coeff / c);
  std::optional<LinearSum> x = to_linear_sum(div->a);
  if (!x || x->terms.empty()) return false;
  for (const LinearSum::Term& t : x->terms) {
    int64_t wanted;
    if (__builtin_mul_overflow(t.coeff, k, &wanted)) return false;
    bool present = false;
    for (const LinearSum::Term& u : s.terms) {
      if (structural_equal(u.atom, t.atom, /*map_vars=*/false)) present = u.coeff == wanted;
    }
    if (!present) return false;
  }
  // s - (x // c)*(c*k) - k*x + (x % c)*k, since k*x - (x // c)*(c*k) = (x % c)*k;
  // the terms of k*x cancel, x's constant (if any) moves to the sum's constant.
  LinearSum next = without_terms(s, i, i);
  if (!next.add(*x, -k)) return false;
  if (!next.add(floormod(div->a, div->b), k)) return false;
  s = std::move(next);
  return true;
}

void merge_div_mod(LinearSum& s) {
  // Each merge removes a division from the sum, so a few rounds reach the end; the
  // cap only guards against a rule bug looping.
  for (int round = 0; round < 16; ++round) {
    bool changed = false;
    for (size_t i = 0; i < s.terms.size() && !changed; ++i) {
      auto* div = s.terms[i].atom.as<FloorDivNode>();
      const int64_t* c = div ? as_const_int(div->b) : nullptr;
      if (!c || *c <= 1 || s.terms[i].coeff % *c != 0) continue;
      changed = merge_div_with_mod(s, i, div, *c) || merge_div_into_mod(s, i, div, *c);
    }
    if (!changed) return;
  }
}

}  // namespace

Expr rebuild_binary(NodeKind kind, const Expr& self, const Expr& a, const Expr& b) {
  auto [sa, sb] = binary_operands(self);
  if (a.same_as(sa) && b.same_as(sb)) return self;
  return make_binary(kind, a, b);
}

Expr Simplifier::canonical_sum(const Expr& e) {
  std::optional<LinearSum> s = to_linear_sum(e);
  if (!s) return e;
  merge_div_mod(*s);
  Expr r = from_linear_sum(*s);
  return r.defined() ? r : e;
}

Expr Simplifier::visit(const AddNode* op, const Expr& self) {
  Expr a = mutate(op->a);
  Expr b = mutate(op->b);
  if (Expr c = fold_binary(NodeKind::Add, a, b); c.defined()) return c;
  if (op->dtype.is_vector()) {
    Expr v = simplify_vector_binary(NodeKind::Add, a, b);
    if (v.defined()) return v;
  } else if (is_index_type(op->dtype)) {
    return canonical_sum(rebuild_binary(NodeKind::Add, self, a, b));
  }
  // x + 0.0 is not x for x = -0.0, so only integers drop a zero.
  if (op->dtype.is_integer()) {
    if (is_const_value(b, 0)) return a;
    if (is_const_value(a, 0)) return b;
  }
  return rebuild_binary(NodeKind::Add, self, a, b);
}

Expr Simplifier::visit(const SubNode* op, const Expr& self) {
  Expr a = mutate(op->a);
  Expr b = mutate(op->b);
  if (Expr c = fold_binary(NodeKind::Sub, a, b); c.defined()) return c;
  if (op->dtype.is_vector()) {
    Expr v = simplify_vector_binary(NodeKind::Sub, a, b);
    if (v.defined()) return v;
  } else if (is_index_type(op->dtype)) {
    return canonical_sum(rebuild_binary(NodeKind::Sub, self, a, b));
  }
  if (is_const_value(b, 0)) return a;
  if (op->dtype.is_integer() && structural_equal(a, b, /*map_vars=*/false)) return make_const(op->dtype, int64_t{0});
  return rebuild_binary(NodeKind::Sub, self, a, b);
}

Expr Simplifier::visit(const MulNode* op, const Expr& self) {
  Expr a = mutate(op->a);
  Expr b = mutate(op->b);
  if (Expr c = fold_binary(NodeKind::Mul, a, b); c.defined()) return c;
  if (op->dtype.is_vector()) {
    Expr v = simplify_vector_binary(NodeKind::Mul, a, b);
    if (v.defined()) return v;
  } else if (is_index_type(op->dtype) && (as_const_int(a) || as_const_int(b))) {
    return canonical_sum(rebuild_binary(NodeKind::Mul, self, a, b));
  }
  if (is_const_value(b, 1)) return a;
  if (is_const_value(a, 1)) return b;
  // x * 0.0 is NaN for x = inf, so only integers fold to zero.
  if (op->dtype.is_integer() && (is_const_value(a, 0) || is_const_value(b, 0)))
    return make_const(op->dtype, int64_t{0});
  return rebuild_binary(NodeKind::Mul, self, a, b);
}

}  // namespace temper
