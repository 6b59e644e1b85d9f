// Simplifier rules for vectors: broadcasts and ramps.
#include "compiler/lower/int_math.h"
#include "compiler/lower/linear_sum.h"
#include "compiler/lower/simplifier.h"

namespace temper {
namespace {

struct Split {
  Expr quotient;  // (base - rest) / c
  Interval rest;  // bounds of the terms of base that c does not divide, with the constant
};

// base = c*quotient + rest.
std::optional<Split> split_by(const Expr& base, int64_t c, const Analyzer& analyzer) {
  std::optional<LinearSum> s = to_linear_sum(base);
  if (!s) return std::nullopt;
  LinearSum quotient{s->dtype, {}, 0};
  LinearSum rest{s->dtype, {}, s->constant};
  for (const LinearSum::Term& t : s->terms) {
    if (t.coeff % c == 0) {
      quotient.terms.push_back({t.atom, t.coeff / c});
    } else {
      rest.terms.push_back(t);
    }
  }
  Expr q = from_linear_sum(quotient);
  if (!q.defined()) return std::nullopt;
  return Split{q, linear_sum_bounds(rest, analyzer)};
}

}  // namespace

Expr Simplifier::make_ramp(const Expr& base, const Expr& stride, int lanes) {
  Expr b = mutate(base);
  Expr s = mutate(stride);
  if (is_zero(s)) return broadcast(b, lanes);
  return ramp(b, s, lanes);
}

Expr Simplifier::visit(const RampNode* op, const Expr& self) {
  Expr base = mutate(op->base);
  Expr stride = mutate(op->stride);
  if (is_zero(stride)) return broadcast(base, op->lanes);
  if (base.same_as(op->base) && stride.same_as(op->stride)) return self;
  return ramp(base, stride, op->lanes);
}

Expr Simplifier::simplify_vector_binary(NodeKind kind, const Expr& a, const Expr& b) {
  int lanes = a.dtype().lanes();
  auto* ba = a.as<BroadcastNode>();
  auto* bb = b.as<BroadcastNode>();
  if (ba && bb) return broadcast(mutate(make_binary(kind, ba->value, bb->value)), lanes);
  // Ramps reassociate lane arithmetic, exact for integers only.
  if (!a.dtype().is_integer()) return Expr();
  auto* ra = a.as<RampNode>();
  auto* rb = b.as<RampNode>();
  switch (kind) {
    case NodeKind::Add:
      if (ra && rb) return make_ramp(ra->base + rb->base, ra->stride + rb->stride, lanes);
      if (ra && bb) return make_ramp(ra->base + bb->value, ra->stride, lanes);
      if (ba && rb) return make_ramp(ba->value + rb->base, rb->stride, lanes);
      break;
    case NodeKind::Sub:
      if (ra && rb) return make_ramp(ra->base - rb->base, ra->stride - rb->stride, lanes);
      if (ra && bb) return make_ramp(ra->base - bb->value, ra->stride, lanes);
      if (ba && rb) return make_ramp(ba->value - rb->base, -rb->stride, lanes);
      break;
    case NodeKind::Mul:
      if (ra && bb) return make_ramp(ra->base * bb->value, ra->stride * bb->value, lanes);
      if (ba && rb) return make_ramp(ba->value * rb->base, ba->value * rb->stride, lanes);
      break;
    case NodeKind::FloorDiv:
    case NodeKind::FloorMod: {
      const int64_t* c = bb ? as_const_int(bb->value) : nullptr;
      const int64_t* stride = ra ? as_const_int(ra->stride) : nullptr;
      if (!c || !stride || *c <= 0 || *stride < 0 || !is_index_type(a.dtype().element_of())) break;
      Expr cexpr = bb->value;
      bool div = kind == NodeKind::FloorDiv;
      // (base + k*c*t) // c = base // c + k*t, and (base + k*c*t) % c = base % c.
      if (*stride % *c == 0) {
        return div ? make_ramp(floordiv(ra->base, cexpr), make_const(cexpr.dtype(), *stride / *c), lanes)
                   : broadcast(mutate(floormod(ra->base, cexpr)), lanes);
      }
      // All lanes in one period [m*c, (m+1)*c) of the divisor.
      std::optional<Split> s = split_by(ra->base, *c, analyzer_);
      if (!s || !s->rest.is_bounded()) break;
      int64_t last = upper_add(s->rest.max, mul_end(*stride, lanes - 1));
      if (is_inf(last) || floordiv_i64(s->rest.min, *c) != floordiv_i64(last, *c)) break;
      int64_t m = floordiv_i64(s->rest.min, *c);
      Expr offset = make_const(cexpr.dtype(), m);
      if (div) return broadcast(mutate(s->quotient + offset), lanes);
      return make_ramp(ra->base - s->quotient * cexpr - offset * cexpr, ra->stride, lanes);
    }
    default:
      break;
  }
  return Expr();
}

}  // namespace temper
