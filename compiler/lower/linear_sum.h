// Integer expressions as linear sums c0 + c1*t1 + ... + cn*tn.
//
// Each term ti is an expression that is not itself a sum, a difference or a product by
// a constant: a variable, a load, x*y, x // 8, min(a, b), ... Linear sums are the
// simplifier's canonical form for index arithmetic: equal terms (structurally equal,
// over the same variables) are collected, constants folded, and the sum rebuilt in one
// shape: terms in order of first appearance, positive coefficients before negative
// ones, the constant last (`io*8 + ii - 3`, `8 - x`).
//
// Only index types (signed integers of 32 bits or more, scalar) are put in this form:
// the rules built on it assume their arithmetic does not overflow.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/lower/analyzer.h"

namespace temper {

bool is_index_type(DataType t);
// Whether v is a value of the signed integer type t.
bool fits_in_type(int64_t v, DataType t);

struct LinearSum {
  struct Term {
    Expr atom;
    int64_t coeff;
  };
  DataType dtype;
  std::vector<Term> terms;  // no two atoms equal, no zero coefficient
  int64_t constant = 0;

  bool is_constant() const { return terms.empty(); }
  // Adds coeff * atom (merging with an equal term); false on int64 overflow.
  [[nodiscard]] bool add(const Expr& atom, int64_t coeff);
  // Adds scale * other; false on int64 overflow.
  [[nodiscard]] bool add(const LinearSum& other, int64_t scale);
  [[nodiscard]] bool add_constant(int64_t c);
};

// e as a linear sum, or nullopt when e is not of an index type or a coefficient
// overflows int64.
std::optional<LinearSum> to_linear_sum(const Expr& e);
// a - b as a linear sum (same conditions).
std::optional<LinearSum> linear_difference(const Expr& a, const Expr& b);
// The expression of s, or an undefined Expr when a coefficient or the constant does
// not fit s.dtype.
Expr from_linear_sum(const LinearSum& s);
// Bounds of the sum from the bounds of its terms.
Interval linear_sum_bounds(const LinearSum& s, const Analyzer& analyzer);

// e split into a symbolic offset and a bounded rest, for bounding an index while some
// variables move and the others stay fixed: `offset` is the sum of the terms for which
// varies(term) is false (0 when there is none), `rest` the bounds of the other terms
// plus the constant. io*8 + ii + 1 with only ii varying, over [0, 8): io*8 and [1, 8].
// nullopt when e is not a linear sum (see to_linear_sum) or the offset does not fit
// e's type.
struct OffsetBounds {
  Expr offset;
  Interval rest;
};
std::optional<OffsetBounds> offset_bounds(const Expr& e, const std::function<bool(const Expr&)>& varies,
                                          const Analyzer& analyzer);

}  // namespace temper
