#include "compiler/lower/guard_padded_taps.h"

#include <vector>

#include "compiler/ir/functor.h"
#include "compiler/ir/substitute.h"
#include "compiler/lower/ir_util.h"

namespace temper {
namespace {

// select(c, x, 0) as {c, x}; both undefined for anything else. Nested ones (a padded
// tap of a block's tail lane: select(lane < C, select(inside, x, 0), 0)) as {c && d, x}.
std::pair<Expr, Expr> zero_default_select(const Expr& e) {
  auto* s = e.as<SelectNode>();
  if (!s || !is_const_value(s->false_value, 0)) return {};
  if (auto [inner, x] = zero_default_select(s->true_value); inner.defined()) return {s->condition && inner, x};
  return {s->condition, s->true_value};
}

class TapGuarder : public IRMutator {
 public:
  using IRMutator::visit;

  Stmt visit(const ForNode* op, const Stmt& self) override {
    bool vector = op->for_kind == ForKind::Vectorized;
    if (op->for_kind == ForKind::ThreadBinding) return self;
    if (vector) vector_vars_.push_back(op->loop_var.get());
    Stmt s = IRMutator::visit(op, self);
    if (vector) vector_vars_.pop_back();
    return s;
  }

  Stmt visit(const BufferStoreNode* op, const Stmt& self) override {
    auto* add = op->value.as<AddNode>();
    if (!add || op->value.dtype().lanes() != 1) return self;
    bool acc_first = loads_stored_element(add->a, op);
    if (!acc_first && !loads_stored_element(add->b, op)) return self;
    Expr acc = acc_first ? add->a : add->b;
    Expr tap = acc_first ? add->b : add->a;
    auto [cond, inside] = guarded_tap(tap);
    if (!cond.defined() || cond.dtype().lanes() != 1 || reads_buffer(cond)) return self;
    bool per_lane = uses_var_if(cond, [&](const VarNode* v) {
      for (const VarNode* u : vector_vars_) {
        if (u == v) return true;
      }
      return false;
    });
    if (per_lane) return self;
    return if_then_else(cond, store(op->buffer, acc + inside, op->indices));
  }

 private:
  // The tap select(c, x, 0) [* w] as {c, x [* w]}.
  static std::pair<Expr, Expr> guarded_tap(const Expr& tap) {
    if (auto [c, x] = zero_default_select(tap); c.defined()) return {c, x};
    auto* mul = tap.as<MulNode>();
    if (!mul) return {};
    if (auto [c, x] = zero_default_select(mul->a); c.defined()) return {c, x * mul->b};
    if (auto [c, x] = zero_default_select(mul->b); c.defined()) return {c, mul->a * x};
    return {};
  }

  std::vector<const VarNode*> vector_vars_;
};

}  // namespace

PrimFunc guard_padded_taps(const PrimFunc& f) {
  return TapGuarder().mutate(f);
}

}  // namespace temper
