// Interval analysis and the arithmetic simplifier's entry point.
//
// An Analyzer knows the ranges of the variables bound so far (loop variables, lets,
// block iteration variables) and the conditions assumed true (an enclosing if), and
// answers three questions about expressions:
//   bounds(e)     constant bounds of an integer expression, each side possibly infinite;
//   can_prove(c)  whether condition c holds for every value of the bound variables;
//   simplify(e)   an expression with the same value that is simpler (see simplifier.h
//                 for the rules).
//
// Overflow: signed integers of 32 bits or more are index arithmetic and are assumed
// never to overflow (as in TVM and Halide); narrower signed and all unsigned integers
// wrap around, so their bounds widen to the whole type when an operation may wrap.
// Bounds of floating-point expressions are not tracked (everything).
//
// Variables are unique objects, so a binding is never shadowed; bind() replaces an
// earlier binding of the same variable, and a Scope undoes everything bound or
// assumed since it was opened.
//
// AnalyzingVisitor and AnalyzingMutator walk statements keeping an Analyzer informed of
// what is around: each loop variable bound to its range while its body is walked, each
// let variable to the bounds of its value. Passes that ask bounds questions in context
// derive from them.
#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/functor.h"
#include "compiler/ir/ir.h"

namespace temper {

// The integers in [min, max]; kNegInf / kPosInf stand for an unbounded side.
struct Interval {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  int64_t min = kNegInf;
  int64_t max = kPosInf;

  static Interval everything() { return {}; }
  static Interval point(int64_t v) { return {v, v}; }
  bool has_lower() const { return min != kNegInf; }
  bool has_upper() const { return max != kPosInf; }
  bool is_bounded() const { return has_lower() && has_upper(); }
  bool is_point() const { return is_bounded() && min == max; }
  bool operator==(const Interval&) const = default;
};

// The smallest interval holding both.
Interval interval_union(const Interval& a, const Interval& b);
// The values a type can hold (everything for 64-bit and float types).
Interval dtype_range(DataType t);
// "[0, 7]", "[-inf, 5]"
std::ostream& operator<<(std::ostream& os, const Interval& i);

class Analyzer {
 public:
  // v takes the values [r.min, r.min + r.extent), bounded by the bounds of both.
  void bind(const Var& v, const Range& r);
  void bind(const Var& v, const Interval& i);
  // Records cond as true from now on (until the enclosing Scope ends): its conjuncts
  // become facts the simplifier replaces by true, and conjuncts of the form
  // `v < c`, `v >= c`, `v == c` (v a variable, c a constant) tighten v's bounds.
  void assume(const Expr& cond);

  // What is known about v: its bound interval, or the range of its type.
  Interval var_bounds(const VarNode* v) const;
  Interval bounds(const Expr& e) const;
  bool can_prove(const Expr& cond);
  Expr simplify(const Expr& e);
  // Simplifies every expression of s, binding loop variables as it descends; removes
  // branches whose conditions are decided and loops that run at most once.
  Stmt simplify(const Stmt& s);

  // The conditions assumed so far (conjuncts, simplified).
  const std::vector<Expr>& facts() const { return facts_; }

  // Restores the analyzer's bindings and facts when it goes out of scope.
  class Scope {
   public:
    explicit Scope(Analyzer& a) : a_(a), bounds_(a.var_bounds_), facts_(a.facts_) {}
    ~Scope() {
      a_.var_bounds_ = std::move(bounds_);
      a_.facts_ = std::move(facts_);
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Analyzer& a_;
    std::unordered_map<const VarNode*, Interval> bounds_;
    std::vector<Expr> facts_;
  };

 private:
  std::unordered_map<const VarNode*, Interval> var_bounds_;
  std::vector<Expr> facts_;
};

// e simplified with nothing known about its variables: Analyzer().simplify(e).
Expr simplify(const Expr& e);

class AnalyzingVisitor : public IRVisitor {
 public:
  explicit AnalyzingVisitor(Analyzer& analyzer) : analyzer_(analyzer) {}
  using IRVisitor::visit;

 protected:
  void visit(const ForNode* op) override;
  void visit(const LetStmtNode* op) override;

  Analyzer& analyzer_;
  // The loop and let variables bound inside the statements walked so far.
  std::unordered_set<const VarNode*> inner_;
};

class AnalyzingMutator : public IRMutator {
 protected:
  using IRMutator::visit;
  Stmt visit(const ForNode* op, const Stmt& self) override;
  Stmt visit(const LetStmtNode* op, const Stmt& self) override;

  Analyzer analyzer_;
};

}  // namespace temper
