// Static shapes for the operator library.
//
// Temper's operators are defined on tensors whose extents are compile-time constants:
// the shape checks, the output-shape arithmetic and the reference implementations all
// work on plain integers. These helpers convert between a tensor's shape expressions and
// integers, and format shapes for error messages ("2x3x4").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/te/te.h"

namespace temper::ops {

using Shape = std::vector<int64_t>;

// The extents of t; UserError naming `op` if one is not an integer constant.
Shape static_shape(const te::Tensor& t, const std::string& op);

// Shape expressions (int32 constants) for a compute or placeholder; UserError naming
// `op` if an extent is not positive or does not fit an int32 index.
std::vector<Expr> shape_exprs(const Shape& shape, const std::string& op);

// UserError when the count overflows int64 (a shape no memory holds).
int64_t num_elements(const Shape& shape);

// "2x3x4"; "[]" for a scalar.
std::string shape_str(const Shape& shape);

// A compute body's index variables as the index list of a tensor access.
std::vector<Expr> as_exprs(const std::vector<Var>& vars);

// An int32 index constant.
Expr index_const(int64_t v);

// x * k, leaving x alone when k is 1 (so the printed IR carries no "* 1").
Expr times(const Expr& x, int64_t k);
// x + k, leaving x alone when k is 0.
Expr plus(const Expr& x, int64_t k);

// A normalised axis in [0, rank): negative values count from the end (as in numpy).
// UserError naming `op` when out of range.
int normalize_axis(int64_t axis, int rank, const std::string& op);

// UserError "<op>: <what> must be a floating-point tensor, got int32" unless t is float.
void check_float(const te::Tensor& t, const std::string& op, const std::string& what);

// UserError unless t has `rank` dimensions.
void check_rank(const te::Tensor& t, int rank, const std::string& op, const std::string& what);

// UserError unless a and b have the same element type.
void check_same_dtype(const te::Tensor& a, const te::Tensor& b, const std::string& op);

}  // namespace temper::ops
