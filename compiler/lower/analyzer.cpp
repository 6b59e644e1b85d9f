#include "compiler/lower/analyzer.h"

#include <algorithm>

#include "compiler/lower/int_math.h"
#include "compiler/lower/ir_util.h"
#include "compiler/lower/simplifier.h"

namespace temper {

Interval interval_union(const Interval& a, const Interval& b) {
  return {std::min(a.min, b.min), std::max(a.max, b.max)};
}

Interval dtype_range(DataType t) {
  if (t.is_bool()) return {0, 1};
  if (t.is_uint()) {
    return t.bits() >= 64 ? Interval{0, Interval::kPosInf} : Interval{0, (int64_t{1} << t.bits()) - 1};
  }
  if (t.is_int() && t.bits() < 32) return {-(int64_t{1} << (t.bits() - 1)), (int64_t{1} << (t.bits() - 1)) - 1};
  return Interval::everything();
}

std::ostream& operator<<(std::ostream& os, const Interval& i) {
  os << "[";
  if (i.has_lower()) {
    os << i.min;
  } else {
    os << "-inf";
  }
  os << ", ";
  if (i.has_upper()) {
    os << i.max;
  } else {
    os << "+inf";
  }
  return os << "]";
}

namespace {

// Types whose arithmetic wraps around instead of being assumed not to overflow.
bool wraps(DataType t) {
  return t.is_uint() || t.is_bool() || (t.is_int() && t.bits() < 32);
}

// Whether every value in r is a value of integer type t.
bool holds(DataType t, const Interval& r) {
  if (t.bits() >= 64) return t.is_int() || r.min >= 0;
  int64_t lo = t.is_int() ? -(int64_t{1} << (t.bits() - 1)) : 0;
  int64_t hi = t.is_int() ? (int64_t{1} << (t.bits() - 1)) - 1 : (int64_t{1} << t.bits()) - 1;
  return r.min >= lo && r.max <= hi;
}

Interval add(const Interval& a, const Interval& b) {
  return {lower_add(a.min, b.min), upper_add(a.max, b.max)};
}
Interval negate(const Interval& a) {
  return {negate_end(a.max), negate_end(a.min)};
}

Interval from_candidates(std::initializer_list<int64_t> c) {
  return {*std::min_element(c.begin(), c.end()), *std::max_element(c.begin(), c.end())};
}

Interval mul(const Interval& a, const Interval& b) {
  return from_candidates({mul_end(a.min, b.min), mul_end(a.min, b.max), mul_end(a.max, b.min), mul_end(a.max, b.max)});
}

// floor(a / b) where b does not contain 0.
Interval floordiv(const Interval& a, const Interval& b) {
  if (!(b.min > 0 || b.max < 0)) return Interval::everything();
  return from_candidates(
      {floordiv_end(a.min, b.min), floordiv_end(a.min, b.max), floordiv_end(a.max, b.min), floordiv_end(a.max, b.max)});
}

Interval bool_interval(bool can_be_true, bool can_be_false) {
  return {can_be_false ? 0 : 1, can_be_true ? 1 : 0};
}

class BoundsEvaluator {
 public:
  explicit BoundsEvaluator(const Analyzer& a) : analyzer_(a) {}

  Interval eval(const Expr& e) {
    DataType t = e.dtype();
    if (t.is_float() || t.is_handle()) return Interval::everything();
    Interval r = eval_node(e);
    Interval range = dtype_range(t);
    if (wraps(t) && (r.min < range.min || r.max > range.max)) return range;
    return r;
  }

 private:
  const Analyzer& analyzer_;
  std::vector<std::pair<const VarNode*, Interval>> lets_;

  Interval eval_node(const Expr& e) {
    switch (e.kind()) {
      case NodeKind::IntImm:
        return Interval::point(e.as<IntImmNode>()->value);
      case NodeKind::Var: {
        for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) {
          if (it->first == e.get()) return it->second;
        }
        return analyzer_.var_bounds(e.as<VarNode>());
      }
      case NodeKind::Cast: {
        // A value the target type cannot hold wraps (or, from a float, is undefined).
        const Expr& v = e.as<CastNode>()->value;
        if (v.dtype().is_float()) return dtype_range(e.dtype());
        Interval r = eval(v);
        return holds(e.dtype(), r) ? r : dtype_range(e.dtype());
      }
      case NodeKind::Add: {
        auto* op = e.as<AddNode>();
        return add(eval(op->a), eval(op->b));
      }
      case NodeKind::Sub: {
        auto* op = e.as<SubNode>();
        return add(eval(op->a), negate(eval(op->b)));
      }
      case NodeKind::Mul: {
        auto* op = e.as<MulNode>();
        return mul(eval(op->a), eval(op->b));
      }
      case NodeKind::FloorDiv: {
        auto* op = e.as<FloorDivNode>();
        return floordiv(eval(op->a), eval(op->b));
      }
      case NodeKind::Div: {
        // Truncation is floor for a quotient >= 0 and ceil (at most floor + 1, at most
        // 0) below: only when every floor is negative does the top move up by one.
        auto* op = e.as<DivNode>();
        Interval q = floordiv(eval(op->a), eval(op->b));
        return {q.min, q.max >= 0 ? q.max : q.max + 1};
      }
      case NodeKind::FloorMod:
        return eval_floormod(e.as<FloorModNode>());
      case NodeKind::Mod:
        return eval_truncmod(e.as<ModNode>());
      case NodeKind::Min: {
        auto* op = e.as<MinNode>();
        Interval a = eval(op->a);
        Interval b = eval(op->b);
        return {std::min(a.min, b.min), std::min(a.max, b.max)};
      }
      case NodeKind::Max: {
        auto* op = e.as<MaxNode>();
        Interval a = eval(op->a);
        Interval b = eval(op->b);
        return {std::max(a.min, b.min), std::max(a.max, b.max)};
      }
      case NodeKind::EQ:
      case NodeKind::NE:
      case NodeKind::LT:
      case NodeKind::LE:
      case NodeKind::GT:
      case NodeKind::GE:
        return eval_compare(e);
      case NodeKind::And: {
        auto* op = e.as<AndNode>();
        Interval a = eval(op->a);
        Interval b = eval(op->b);
        return bool_interval(a.max >= 1 && b.max >= 1, a.min <= 0 || b.min <= 0);
      }
      case NodeKind::Or: {
        auto* op = e.as<OrNode>();
        Interval a = eval(op->a);
        Interval b = eval(op->b);
        return bool_interval(a.max >= 1 || b.max >= 1, a.min <= 0 && b.min <= 0);
      }
      case NodeKind::Not: {
        Interval a = eval(e.as<NotNode>()->a);
        return bool_interval(a.min <= 0, a.max >= 1);
      }
      case NodeKind::Select: {
        auto* op = e.as<SelectNode>();
        Interval c = eval(op->condition);
        if (c.min >= 1) return eval(op->true_value);
        if (c.max <= 0) return eval(op->false_value);
        return interval_union(eval(op->true_value), eval(op->false_value));
      }
      case NodeKind::Ramp: {
        auto* op = e.as<RampNode>();
        return add(eval(op->base), mul(eval(op->stride), Interval{0, op->lanes - 1}));
      }
      case NodeKind::Broadcast:
        return eval(e.as<BroadcastNode>()->value);
      case NodeKind::Let: {
        auto* op = e.as<LetNode>();
        lets_.emplace_back(op->var.get(), eval(op->value));
        Interval r = eval(op->body);
        lets_.pop_back();
        return r;
      }
      default:  // loads, calls: anything the type holds
        return dtype_range(e.dtype());
    }
  }

  Interval eval_floormod(const FloorModNode* op) {
    Interval a = eval(op->a);
    Interval b = eval(op->b);
    if (b.min > 0) {
      if (a.min >= 0 && a.max < b.min) return a;
      return {0, b.max == Interval::kPosInf ? b.max : b.max - 1};
    }
    if (b.max < 0) return {b.min == Interval::kNegInf ? b.min : b.min + 1, 0};
    return Interval::everything();
  }

  // C's %: the sign follows the dividend, the magnitude is below the divisor's.
  Interval eval_truncmod(const ModNode* op) {
    Interval a = eval(op->a);
    Interval b = eval(op->b);
    if (!(b.min > 0 || b.max < 0)) return Interval::everything();
    int64_t m = std::max(negate_end(b.min), b.max);  // largest |b|
    if (m != Interval::kPosInf) m -= 1;
    if (a.min >= 0) return {0, std::min(a.max, m)};
    if (a.max <= 0) return {std::max(a.min, negate_end(m)), 0};
    return {negate_end(m), m};
  }

  Interval eval_compare(const Expr& e) {
    auto [a, b] = binary_operands(e);
    if (a.dtype().is_float() || a.dtype().is_handle()) return {0, 1};
    Interval x = eval(a);
    Interval y = eval(b);
    switch (e.kind()) {
      case NodeKind::EQ:
        return bool_interval(!(x.max < y.min || y.max < x.min), !(x.is_point() && y.is_point() && x.min == y.min));
      case NodeKind::NE:
        return bool_interval(!(x.is_point() && y.is_point() && x.min == y.min), !(x.max < y.min || y.max < x.min));
      case NodeKind::LT:
        return bool_interval(x.min < y.max, x.max >= y.min);
      case NodeKind::LE:
        return bool_interval(x.min <= y.max, x.max > y.min);
      case NodeKind::GT:
        return bool_interval(x.max > y.min, x.min <= y.max);
      default:  // GE
        return bool_interval(x.max >= y.min, x.min < y.max);
    }
  }
};

}  // namespace

void Analyzer::bind(const Var& v, const Range& r) {
  const int64_t* min = as_const_int(r.min);
  const int64_t* extent = as_const_int(r.extent);
  if (min && extent) {
    // An empty loop never runs: any bound is sound for its body, and a single point
    // keeps every interval well-formed (min <= max).
    bind(v, Interval{*min, *min + std::max<int64_t>(*extent, 1) - 1});
    return;
  }
  // Simplified first, so that correlated min and extent (min = x, extent = 10 - x)
  // give exact bounds.
  Expr last = simplify(r.min + r.extent - make_const(r.extent.dtype(), int64_t{1}));
  Interval i{bounds(r.min).min, bounds(last).max};
  bind(v, i.min <= i.max ? i : Interval{i.min, i.min});
}

void Analyzer::bind(const Var& v, const Interval& i) {
  var_bounds_[v.get()] = i;
}

void Analyzer::assume(const Expr& cond) {
  for (const Expr& c : split_conjuncts(simplify(cond))) {
    if (is_one(c)) continue;
    facts_.push_back(c);
    auto [a, b] = binary_operands(c);
    auto* var = a.defined() ? a.as<VarNode>() : nullptr;
    const int64_t* k = b.defined() ? as_const_int(b) : nullptr;
    if (!var || !k || !var->dtype.is_int()) continue;
    Interval i = var_bounds(var);
    switch (c.kind()) {
      case NodeKind::LT:
        i.max = std::min(i.max, *k - 1);
        break;
      case NodeKind::LE:
        i.max = std::min(i.max, *k);
        break;
      case NodeKind::GT:
        i.min = std::max(i.min, *k + 1);
        break;
      case NodeKind::GE:
        i.min = std::max(i.min, *k);
        break;
      case NodeKind::EQ:
        i = Interval::point(*k);
        break;
      default:
        continue;
    }
    var_bounds_[var] = i;
  }
}

Interval Analyzer::var_bounds(const VarNode* v) const {
  auto it = var_bounds_.find(v);
  return it != var_bounds_.end() ? it->second : dtype_range(v->dtype);
}

Interval Analyzer::bounds(const Expr& e) const {
  return BoundsEvaluator(*this).eval(e);
}

bool Analyzer::can_prove(const Expr& cond) {
  Expr s = simplify(cond);
  if (auto* b = s.as<BroadcastNode>()) s = b->value;
  return bounds(s).min >= 1;
}

Expr simplify(const Expr& e) {
  return Analyzer().simplify(e);
}

void AnalyzingVisitor::visit(const ForNode* op) {
  visit_field(op->min);
  visit_field(op->extent);
  Analyzer::Scope scope(analyzer_);
  analyzer_.bind(op->loop_var, Range{op->min, op->extent});
  inner_.insert(op->loop_var.get());
  visit(op->body);
}

void AnalyzingVisitor::visit(const LetStmtNode* op) {
  visit(op->value);
  analyzer_.bind(op->var, analyzer_.bounds(op->value));
  inner_.insert(op->var.get());
  visit(op->body);
}

Stmt AnalyzingMutator::visit(const ForNode* op, const Stmt& self) {
  Analyzer::Scope scope(analyzer_);
  analyzer_.bind(op->loop_var, Range{op->min, op->extent});
  return IRMutator::visit(op, self);
}

Stmt AnalyzingMutator::visit(const LetStmtNode* op, const Stmt& self) {
  analyzer_.bind(op->var, analyzer_.bounds(op->value));
  return IRMutator::visit(op, self);
}

}  // namespace temper
