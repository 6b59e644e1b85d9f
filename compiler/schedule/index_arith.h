// Integer index arithmetic for the schedule primitives: normalising the expressions a
// primitive builds (i_o * 8 + i_i after a split, nested splits flattened into one sum),
// and bounding them over loop ranges (the region a consumer needs under a loop).
//
// Expressions are read as linear sums  c0 + c1*a1 + c2*a2 + ...  whose atoms are
// variables or non-linear subterms (floordiv, floormod, min, max, loads). Atoms are
// kept in order of first appearance, so the printed result is deterministic. This is
// deliberately small: it proves what schedules need (constant extents, constant
// differences) and answers "unknown" otherwise; the lowering simplifier does the rest.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/ir.h"

namespace temper::schedule_detail {

using VarMap = std::unordered_map<const VarNode*, Expr>;
using VarSet = std::unordered_set<const VarNode*>;
// The range each bounded variable takes; variables not in the map are fixed symbols.
using VarRanges = std::unordered_map<const VarNode*, Range>;

// Folds constants, flattens sums and orders the terms; integer scalars only (other
// expressions are returned with their integer subterms simplified). Comparisons keep
// their two sides, each simplified; && and || drop constant-true/false operands.
Expr simplify(const Expr& e);

// a - b when it is a constant.
std::optional<int64_t> constant_difference(const Expr& a, const Expr& b);

// Inclusive bounds of an integer expression.
struct Interval {
  Expr min;
  Expr max;
};

// Bounds of e while each variable in `ranges` moves over its range; nullopt when an
// atom that depends on a ranged variable cannot be bounded.
std::optional<Interval> bound(const Expr& e, const VarRanges& ranges);

// Same nodes, same constants, same variables (by identity, unlike structural_equal).
bool same_expr(const Expr& a, const Expr& b);

// Whether e mentions any variable of vars.
bool uses_any(const Expr& e, const VarSet& vars);
bool uses_var(const Expr& e, const VarNode* v);

// Replaces variables by expressions; the result is simplified only where asked.
Expr substitute(const Expr& e, const VarMap& map);
Stmt substitute(const Stmt& s, const VarMap& map);

}  // namespace temper::schedule_detail
