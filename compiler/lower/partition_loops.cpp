#include "compiler/lower/partition_loops.h"

#include <algorithm>

#include "compiler/ir/functor.h"
#include "compiler/ir/substitute.h"
#include "compiler/lower/analyzer.h"
#include "compiler/lower/int_math.h"
#include "compiler/lower/ir_util.h"
#include "compiler/lower/linear_sum.h"

namespace temper {
namespace {

Expr conjunction(const std::vector<Expr>& parts) {
  Expr r;
  for (const Expr& p : parts) r = r.defined() ? (r && p) : p;
  return r;
}

int64_t ceildiv(int64_t a, int64_t b) {
  return -floordiv_i64(-a, b);
}

// A guard of the loop: the `if` node, which conjunct, the range of the loop variable in
// which the conjunct holds for every inner iteration, and the range in which it holds for
// none (either empty when lo > hi).
struct Guard {
  const IfThenElseNode* node = nullptr;
  size_t conjunct = 0;
  int64_t lo = Interval::kNegInf;
  int64_t hi = Interval::kPosInf;
  int64_t false_lo = 1;
  int64_t false_hi = 0;
};

// Finds the first guard in a loop body that splits the loop's range [min, max].
class GuardFinder : public AnalyzingVisitor {
 public:
  GuardFinder(Analyzer& analyzer, const Var& loop_var, int64_t min, int64_t max)
      : AnalyzingVisitor(analyzer), v_(loop_var), min_(min), max_(max) {}
  using AnalyzingVisitor::visit;
  std::optional<Guard> found;

  void visit(const Stmt& s) override {
    if (!found) AnalyzingVisitor::visit(s);
  }

 protected:
  void visit(const IfThenElseNode* op) override {
    std::vector<Expr> parts = split_conjuncts(op->condition);
    for (size_t i = 0; i < parts.size() && !found; ++i) {
      std::optional<Guard> g = ranges_of(parts[i]);
      bool splits_true = g && g->lo <= g->hi && (g->lo > min_ || g->hi < max_);
      bool splits_false = g && g->false_lo <= g->false_hi && (g->false_lo > min_ || g->false_hi < max_);
      if (splits_true || splits_false) {
        g->node = op;
        g->conjunct = i;
        found = g;
      }
    }
    AnalyzingVisitor::visit(op);
  }

 private:
  Var v_;
  int64_t min_, max_;

  // The ranges of v (within [min, max]) where `cond` holds for every value of the rest,
  // and where it holds for none.
  std::optional<Guard> ranges_of(const Expr& cond) {
    NodeKind kind = cond.kind();
    if (kind != NodeKind::LT && kind != NodeKind::LE && kind != NodeKind::GT && kind != NodeKind::GE) return {};
    auto [a, b] = binary_operands(cond);
    std::optional<LinearSum> d = linear_difference(a, b);  // cond is `d OP 0`
    if (!d) return {};
    int64_t coeff = 0;
    LinearSum rest{d->dtype, {}, d->constant};
    for (const LinearSum::Term& t : d->terms) {
      if (t.atom.get() == v_.get()) {
        coeff = t.coeff;
      } else {
        rest.terms.push_back(t);
      }
    }
    if (coeff == 0) return {};
    // The rest may vary with the loops inside, but not with v or with outer loops,
    // whose other iterations the split does not see.
    for (const LinearSum::Term& t : rest.terms) {
      bool depends_outside = uses_var_if(t.atom, [&](const VarNode* x) {
        return x == v_.get() || (!inner_.count(x) && !analyzer_.var_bounds(x).is_point());
      });
      if (depends_outside) return {};
    }
    Interval r = linear_sum_bounds(rest, analyzer_);
    if (!r.is_bounded()) return {};
    // coeff*v + r OP 0 for all r: an upper bound on coeff*v (LT, LE) or a lower one.
    bool upper = kind == NodeKind::LT || kind == NodeKind::LE;
    int64_t bound = kind == NodeKind::LT   ? -r.max - 1
                    : kind == NodeKind::LE ? -r.max
                    : kind == NodeKind::GT ? -r.min + 1
                                           : -r.min;
    // And false for all r: a lower bound on coeff*v (LT, LE) or an upper one.
    int64_t false_bound = kind == NodeKind::LT   ? -r.min
                          : kind == NodeKind::LE ? -r.min + 1
                          : kind == NodeKind::GT ? -r.max
                                                 : -r.max - 1;
    Guard g{nullptr, 0, min_, max_, min_, max_};
    // coeff*v <= bound, or coeff*v >= bound; dividing by a negative coeff flips it.
    if (coeff < 0) {
      upper = !upper;
      coeff = -coeff;
      bound = -bound;
      false_bound = -false_bound;
    }
    if (upper) {
      g.hi = std::min(max_, floordiv_i64(bound, coeff));
      g.false_lo = std::max(min_, ceildiv(false_bound, coeff));
    } else {
      g.lo = std::max(min_, ceildiv(bound, coeff));
      g.false_hi = std::min(max_, floordiv_i64(false_bound, coeff));
    }
    return g;
  }
};

// The statement with one conjunct of one `if` known to be true -- or, with holds false,
// known to be false: the `if` is then its else case, or nothing.
class GuardRemover : public IRMutator {
 public:
  explicit GuardRemover(const Guard& g, bool holds = true) : guard_(g), holds_(holds) {}
  using IRMutator::visit;

  Stmt visit(const IfThenElseNode* op, const Stmt& self) override {
    if (op != guard_.node) return IRMutator::visit(op, self);
    if (!holds_) return op->else_case.defined() ? op->else_case : evaluate(make_const(DataType::int32(), int64_t{0}));
    std::vector<Expr> parts = split_conjuncts(op->condition);
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(guard_.conjunct));
    if (parts.empty()) return op->then_case;
    return if_then_else(conjunction(parts), op->then_case, op->else_case);
  }

 private:
  const Guard& guard_;
  bool holds_;
};

class LoopPartitioner : public AnalyzingMutator {
 public:
  using AnalyzingMutator::visit;

  Stmt visit(const ForNode* op, const Stmt& self) override {
    const int64_t* min = as_const_int(op->min);
    const int64_t* extent = as_const_int(op->extent);
    if (min && extent && *extent > 1 && op->for_kind != ForKind::ThreadBinding) {
      if (std::optional<Stmt> split = partition(op, *min, *min + *extent - 1)) return *split;
    }
    return AnalyzingMutator::visit(op, self);
  }

 private:
  std::optional<Stmt> partition(const ForNode* op, int64_t min, int64_t max) {
    std::optional<Guard> guard;
    {
      Analyzer::Scope scope(analyzer_);
      analyzer_.bind(op->loop_var, Interval{min, max});
      GuardFinder finder(analyzer_, op->loop_var, min, max);
      finder.visit(op->body);
      guard = finder.found;
    }
    if (!guard) return std::nullopt;
    // The loop's range in order: where the guard holds throughout (its `if` removed), where
    // it holds nowhere (the `if` dropped for its else case), and the rest, which keeps the
    // guard and is partitioned again. The two ranges lie at opposite ends of the loop.
    struct Part {
      int64_t lo, hi;
      int kind;  // 1: holds, 0: never, -1: mixed
    };
    std::vector<Part> known;
    if (guard->lo <= guard->hi) known.push_back({guard->lo, guard->hi, 1});
    if (guard->false_lo <= guard->false_hi) known.push_back({guard->false_lo, guard->false_hi, 0});
    std::sort(known.begin(), known.end(), [](const Part& a, const Part& b) { return a.lo < b.lo; });
    std::vector<Part> ranges;
    int64_t next = min;
    for (const Part& p : known) {
      if (p.lo > next) ranges.push_back({next, p.lo - 1, -1});
      ranges.push_back(p);
      next = p.hi + 1;
    }
    if (next <= max) ranges.push_back({next, max, -1});
    // A parallel loop's head would run as a parallel region of its own, on one thread
    // (a conv's first output row, whose taps reach into the padding): its threads keep
    // the guard instead, and the loops inside are partitioned. A tail (a split that does
    // not divide) is partitioned, so that the main part's inner loops vectorize.
    if (op->for_kind == ForKind::Parallel && ranges.front().kind != 1) return std::nullopt;
    std::vector<Stmt> parts;
    bool first_var = true;  // the first piece keeps the loop's own variable
    for (const Part& p : ranges) {
      Stmt body = p.kind == 1   ? GuardRemover(*guard).mutate(op->body)
                  : p.kind == 0 ? GuardRemover(*guard, false).mutate(op->body)
                                : op->body;
      if (is_no_op(body)) continue;  // nothing runs in that range
      parts.push_back(mutate(piece(op, body, p.lo, p.hi, !(first_var && p.kind == 1))));
      if (p.kind == 1) first_var = false;
    }
    if (parts.empty()) return evaluate(make_const(DataType::int32(), int64_t{0}));
    return seq(parts);
  }

  // The loop over [lo, hi] with this body; remainders get a fresh loop variable so
  // that every loop binds its own.
  static Stmt piece(const ForNode* op, const Stmt& body, int64_t lo, int64_t hi, bool fresh_var) {
    DataType t = op->loop_var.dtype();
    Var v = fresh_var ? Var(op->loop_var->name, t) : op->loop_var;
    Stmt b = fresh_var ? substitute(body, {{op->loop_var.get(), v}}) : body;
    return make_for(v, make_const(t, lo), make_const(t, hi - lo + 1), op->for_kind, b, op->thread_tag, op->annotations);
  }
};

}  // namespace

PrimFunc partition_loops(const PrimFunc& f) {
  return LoopPartitioner().mutate(f);
}

}  // namespace temper
