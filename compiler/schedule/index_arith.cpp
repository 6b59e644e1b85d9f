#include "compiler/schedule/index_arith.h"

#include <cstdlib>

#include "compiler/ir/functor.h"

namespace temper::schedule_detail {
namespace {

int64_t floordiv_int(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floormod_int(int64_t a, int64_t b) {
  return a - floordiv_int(a, b) * b;
}

bool is_index(const Expr& e) {
  return e.dtype().is_integer() && e.dtype().is_scalar();
}

// ---------------------------------------------------------------- identity equality

struct FieldAddresses {
  std::vector<const void*> ptrs;
  template <typename T>
  void operator()(const T& f) {
    ptrs.push_back(&f);
  }
};

bool same(const Expr& a, const Expr& b);
bool same(const Buffer& a, const Buffer& b) {
  return a.same_as(b);
}
bool same(const Range& a, const Range& b) {
  return same(a.min, b.min) && same(a.extent, b.extent);
}
bool same(const IterVar& a, const IterVar& b) {
  return a.var.same_as(b.var) && same(a.dom, b.dom);
}
bool same(const Var& a, const Var& b) {
  return a.same_as(b);
}
bool same(const double& a, const double& b) {
  return a == b;
}
template <typename T>
bool same(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same(a[i], b[i])) return false;
  }
  return true;
}
template <typename T>
bool same(const T& a, const T& b) {
  return a == b;
}

bool same(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined() || a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  if (a.as<VarNode>()) return false;
  return dispatch(a.get(), [&](const auto* na) -> bool {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(na)>>;
    if constexpr (std::is_base_of_v<ExprNode, T>) {
      FieldAddresses fa;
      T::fields(*na, fa);
      size_t i = 0;
      bool equal = true;
      T::fields(*static_cast<const T*>(b.get()), [&](const auto& fb) {
        using F = std::decay_t<decltype(fb)>;
        if (equal) equal = same(*static_cast<const F*>(fa.ptrs[i]), fb);
        ++i;
      });
      return equal;
    } else {
      return false;
    }
  });
}

// ---------------------------------------------------------------- linear forms

// c0 + sum(coefficient * atom), atoms in order of first appearance.
struct Linear {
  DataType dtype;
  int64_t constant = 0;
  std::vector<std::pair<Expr, int64_t>> terms;

  void add(const Expr& atom, int64_t c) {
    for (auto& [a, coeff] : terms) {
      if (same(a, atom)) {
        coeff += c;
        return;
      }
    }
    terms.emplace_back(atom, c);
  }
  void add(const Linear& o, int64_t scale) {
    constant += o.constant * scale;
    for (const auto& [a, c] : o.terms) add(a, c * scale);
  }

  Expr to_expr() const {
    Expr result;
    bool leading_negative = false;
    for (const auto& [a, c] : terms) {
      if (c != 0) {
        leading_negative = c < 0;
        break;
      }
    }
    if (leading_negative && constant != 0) result = make_const(dtype, constant);
    for (const auto& [atom, c] : terms) {
      if (c == 0) continue;
      Expr term = std::llabs(c) == 1 ? atom : atom * make_const(dtype, static_cast<int64_t>(std::llabs(c)));
      if (!result.defined()) {
        result = c > 0 ? term : atom * make_const(dtype, c);
      } else {
        result = c > 0 ? result + term : result - term;
      }
    }
    if (!result.defined()) return make_const(dtype, constant);
    if (leading_negative || constant == 0) return result;
    return constant > 0 ? result + make_const(dtype, constant) : result - make_const(dtype, -constant);
  }
};

class Simplifier : public IRMutator {
 public:
  using IRMutator::visit;

  Linear linear(const Expr& e) {
    Linear out;
    out.dtype = e.dtype();
    collect(e, 1, out);
    return out;
  }

 protected:
  Expr visit(const AddNode* op, const Expr& self) override { return normalize(op, self); }
  Expr visit(const SubNode* op, const Expr& self) override { return normalize(op, self); }
  Expr visit(const MulNode* op, const Expr& self) override { return normalize(op, self); }

  Expr visit(const FloorDivNode* op, const Expr& self) override {
    Expr a = mutate(op->a);
    Expr b = mutate(op->b);
    const int64_t* cb = as_const_int(b);
    if (!cb || *cb <= 0) return rebuild(self, op, a, b);
    if (const int64_t* ca = as_const_int(a)) return make_const(self.dtype(), floordiv_int(*ca, *cb));
    if (*cb == 1) return a;
    // floordiv(c*X + m, c) == X + floordiv(m, c) when c divides every coefficient.
    Linear la = linear(a);
    for (const auto& [atom, c] : la.terms) {
      if (c % *cb != 0) return rebuild(self, op, a, b);
    }
    Linear q;
    q.dtype = la.dtype;
    q.constant = floordiv_int(la.constant, *cb);
    for (const auto& [atom, c] : la.terms) q.add(atom, c / *cb);
    return q.to_expr();
  }

  Expr visit(const FloorModNode* op, const Expr& self) override {
    Expr a = mutate(op->a);
    Expr b = mutate(op->b);
    const int64_t* cb = as_const_int(b);
    if (!cb || *cb <= 0) return rebuild(self, op, a, b);
    if (const int64_t* ca = as_const_int(a)) return make_const(self.dtype(), floormod_int(*ca, *cb));
    if (*cb == 1) return make_const(self.dtype(), int64_t{0});
    // Terms whose coefficient c divides drop out of floormod(., c).
    Linear la = linear(a);
    Linear rest;
    rest.dtype = la.dtype;
    rest.constant = la.constant;
    bool dropped = false;
    for (const auto& [atom, c] : la.terms) {
      if (c % *cb == 0) {
        dropped = true;
      } else {
        rest.add(atom, c);
      }
    }
    if (rest.terms.empty()) return make_const(self.dtype(), floormod_int(rest.constant, *cb));
    if (!dropped) return rebuild(self, op, a, b);
    return floormod(rest.to_expr(), b);
  }

  Expr visit(const MinNode* op, const Expr& self) override { return min_max(op, self, true); }
  Expr visit(const MaxNode* op, const Expr& self) override { return min_max(op, self, false); }

  Expr visit(const EQNode* op, const Expr& self) override {
    return compare(op, self, [](int64_t d) { return d == 0; });
  }
  Expr visit(const NENode* op, const Expr& self) override {
    return compare(op, self, [](int64_t d) { return d != 0; });
  }
  Expr visit(const LTNode* op, const Expr& self) override {
    return compare(op, self, [](int64_t d) { return d < 0; });
  }
  Expr visit(const LENode* op, const Expr& self) override {
    return compare(op, self, [](int64_t d) { return d <= 0; });
  }
  Expr visit(const GTNode* op, const Expr& self) override {
    return compare(op, self, [](int64_t d) { return d > 0; });
  }
  Expr visit(const GENode* op, const Expr& self) override {
    return compare(op, self, [](int64_t d) { return d >= 0; });
  }

  Expr visit(const AndNode* op, const Expr& self) override {
    Expr a = mutate(op->a);
    Expr b = mutate(op->b);
    if (is_const_int(a, 0) || is_const_int(b, 0)) return make_bool(false);
    if (is_one(a) && a.dtype().is_bool()) return b;
    if (is_one(b) && b.dtype().is_bool()) return a;
    return rebuild(self, op, a, b);
  }
  Expr visit(const OrNode* op, const Expr& self) override {
    Expr a = mutate(op->a);
    Expr b = mutate(op->b);
    if (is_one(a) || is_one(b)) return make_bool(true);
    if (is_const_int(a, 0)) return b;
    if (is_const_int(b, 0)) return a;
    return rebuild(self, op, a, b);
  }

 private:
  template <typename T>
  Expr normalize(const T* op, const Expr& self) {
    if (!is_index(self)) return IRMutator::visit(op, self);
    return linear(self).to_expr();
  }

  void collect(const Expr& e, int64_t scale, Linear& out) {
    if (const int64_t* c = as_const_int(e)) {
      out.constant += scale * *c;
    } else if (auto* add = e.as<AddNode>()) {
      collect(add->a, scale, out);
      collect(add->b, scale, out);
    } else if (auto* sub = e.as<SubNode>()) {
      collect(sub->a, scale, out);
      collect(sub->b, -scale, out);
    } else if (auto* mul = e.as<MulNode>()) {
      Linear la = linear(mul->a);
      Linear lb = linear(mul->b);
      if (lb.terms.empty()) {
        out.add(la, scale * lb.constant);
      } else if (la.terms.empty()) {
        out.add(lb, scale * la.constant);
      } else {
        out.add(la.to_expr() * lb.to_expr(), scale);
      }
    } else if (e.as<VarNode>()) {
      out.add(e, scale);
    } else {
      Expr s = mutate(e);
      if (s.as<AddNode>() || s.as<SubNode>() || s.as<MulNode>() || as_const_int(s)) {
        out.add(linear(s), scale);
      } else {
        out.add(s, scale);
      }
    }
  }

  template <typename T>
  Expr rebuild(const Expr& self, const T* op, const Expr& a, const Expr& b) {
    if (a.same_as(op->a) && b.same_as(op->b)) return self;
    return make_binary(T::kKind, a, b);
  }

  template <typename T>
  Expr min_max(const T* op, const Expr& self, bool is_min) {
    Expr a = mutate(op->a);
    Expr b = mutate(op->b);
    if (is_index(a) && is_index(b)) {
      if (auto d = constant_difference(a, b)) return (*d <= 0) == is_min ? a : b;
    }
    return rebuild(self, op, a, b);
  }

  template <typename T, typename Pred>
  Expr compare(const T* op, const Expr& self, Pred holds) {
    Expr a = mutate(op->a);
    Expr b = mutate(op->b);
    if (is_index(a) && is_index(b)) {
      if (auto d = constant_difference(a, b)) return make_bool(holds(*d));
    }
    return rebuild(self, op, a, b);
  }
};

class Substituter : public IRMutator {
 public:
  using IRMutator::visit;
  explicit Substituter(const VarMap& map) : map_(map) {}
  Expr visit(const VarNode* op, const Expr& self) override {
    auto it = map_.find(op);
    return it == map_.end() ? self : it->second;
  }

 private:
  const VarMap& map_;
};

bool depends_on_ranges(const Expr& e, const VarRanges& ranges) {
  bool found = false;
  post_order_visit(e, [&](const Node* n) {
    if (n->kind == NodeKind::Var && ranges.count(static_cast<const VarNode*>(n))) found = true;
  });
  return found;
}

std::optional<Interval> bound_atom(const Expr& atom, const VarRanges& ranges) {
  if (!depends_on_ranges(atom, ranges)) return Interval{atom, atom};
  if (auto* v = atom.as<VarNode>()) {
    const Range& r = ranges.at(v);
    return Interval{simplify(r.min), simplify(r.min + r.extent - make_const(r.extent.dtype(), int64_t{1}))};
  }
  if (auto* div = atom.as<FloorDivNode>()) {
    const int64_t* c = as_const_int(div->b);
    auto a = bound(div->a, ranges);
    if (!c || *c <= 0 || !a) return std::nullopt;
    return Interval{simplify(floordiv(a->min, div->b)), simplify(floordiv(a->max, div->b))};
  }
  if (auto* mod = atom.as<FloorModNode>()) {
    const int64_t* c = as_const_int(mod->b);
    if (!c || *c <= 0) return std::nullopt;
    auto a = bound(mod->a, ranges);
    // Within one period the remainder grows with the operand.
    if (a && same(simplify(floordiv(a->min, mod->b)), simplify(floordiv(a->max, mod->b)))) {
      return Interval{simplify(floormod(a->min, mod->b)), simplify(floormod(a->max, mod->b))};
    }
    return Interval{make_const(atom.dtype(), int64_t{0}), make_const(atom.dtype(), *c - 1)};
  }
  auto min_max = [&](const Expr& x, const Expr& y, bool is_min) -> std::optional<Interval> {
    auto bx = bound(x, ranges);
    auto by = bound(y, ranges);
    if (!bx || !by) return std::nullopt;
    auto pick = [&](const Expr& p, const Expr& q) { return simplify(is_min ? min(p, q) : max(p, q)); };
    return Interval{pick(bx->min, by->min), pick(bx->max, by->max)};
  };
  if (auto* m = atom.as<MinNode>()) return min_max(m->a, m->b, true);
  if (auto* m = atom.as<MaxNode>()) return min_max(m->a, m->b, false);
  return std::nullopt;
}

}  // namespace

Expr simplify(const Expr& e) {
  if (!e.defined()) return e;
  Simplifier s;
  return s.mutate(e);
}

std::optional<int64_t> constant_difference(const Expr& a, const Expr& b) {
  Simplifier s;
  Linear la = s.linear(a);
  la.add(s.linear(b), -1);
  for (const auto& [atom, c] : la.terms) {
    if (c != 0) return std::nullopt;
  }
  return la.constant;
}

std::optional<Interval> bound(const Expr& e, const VarRanges& ranges) {
  Simplifier s;
  Linear lin = s.linear(simplify(e));
  Linear lo;
  Linear hi;
  lo.dtype = hi.dtype = lin.dtype;
  lo.constant = hi.constant = lin.constant;
  for (const auto& [atom, c] : lin.terms) {
    if (c == 0) continue;
    auto b = bound_atom(atom, ranges);
    if (!b) return std::nullopt;
    lo.add(s.linear(c > 0 ? b->min : b->max), c);
    hi.add(s.linear(c > 0 ? b->max : b->min), c);
  }
  return Interval{simplify(lo.to_expr()), simplify(hi.to_expr())};
}

bool same_expr(const Expr& a, const Expr& b) {
  return same(a, b);
}

bool uses_any(const Expr& e, const VarSet& vars) {
  if (!e.defined() || vars.empty()) return false;
  bool found = false;
  post_order_visit(e, [&](const Node* n) {
    if (n->kind == NodeKind::Var && vars.count(static_cast<const VarNode*>(n))) found = true;
  });
  return found;
}

bool uses_var(const Expr& e, const VarNode* v) {
  return uses_any(e, VarSet{v});
}

Expr substitute(const Expr& e, const VarMap& map) {
  if (!e.defined() || map.empty()) return e;
  Substituter s(map);
  return s.mutate(e);
}

Stmt substitute(const Stmt& s, const VarMap& map) {
  if (!s.defined() || map.empty()) return s;
  Substituter sub(map);
  return sub.mutate(s);
}

}  // namespace temper::schedule_detail
