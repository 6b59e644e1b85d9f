#include "compiler/ops/shape.h"

#include <limits>

#include "compiler/ir/printer.h"

namespace temper::ops {

Shape static_shape(const te::Tensor& t, const std::string& op) {
  Shape shape;
  for (size_t d = 0; d < t.shape().size(); ++d) {
    const int64_t* extent = as_const_int(t.shape()[d]);
    if (!extent) {
      throw UserError(str(op, ": dimension ", d, " of ", t.name(), " is ", t.shape()[d],
                          ", not a constant; Temper's operators need static shapes"));
    }
    shape.push_back(*extent);
  }
  return shape;
}

std::vector<Expr> shape_exprs(const Shape& shape, const std::string& op) {
  std::vector<Expr> exprs;
  for (int64_t extent : shape) {
    if (extent <= 0) throw UserError(str(op, ": shape ", shape_str(shape), " has a non-positive extent"));
    if (extent > std::numeric_limits<int32_t>::max()) {
      throw UserError(str(op, ": extent ", extent, " of shape ", shape_str(shape), " does not fit an int32 index"));
    }
    exprs.push_back(index_const(extent));
  }
  return exprs;
}

int64_t num_elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t extent : shape) {
    if (__builtin_mul_overflow(n, extent, &n)) {
      throw UserError(str("shape ", shape_str(shape), " has more elements than a 64-bit count holds"));
    }
  }
  return n;
}

std::string shape_str(const Shape& shape) {
  if (shape.empty()) return "[]";
  std::string s;
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? "x" : "") + std::to_string(shape[d]);
  return s;
}

std::vector<Expr> as_exprs(const std::vector<Var>& vars) {
  return {vars.begin(), vars.end()};
}

Expr index_const(int64_t v) {
  return make_const(DataType::int32(), v);
}

Expr times(const Expr& x, int64_t k) {
  return k == 1 ? x : x * index_const(k);
}

Expr plus(const Expr& x, int64_t k) {
  if (k == 0) return x;
  return k > 0 ? x + index_const(k) : x - index_const(-k);
}

int normalize_axis(int64_t axis, int rank, const std::string& op) {
  if (axis < -rank || axis >= rank) {
    throw UserError(str(op, ": axis ", axis, " is out of range for a tensor of rank ", rank, " (accepted: ", -rank,
                        " to ", rank - 1, ")"));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

void check_float(const te::Tensor& t, const std::string& op, const std::string& what) {
  if (!t.dtype().is_float()) {
    throw UserError(str(op, ": ", what, " must be a floating-point tensor, got ", t.dtype()));
  }
}

void check_rank(const te::Tensor& t, int rank, const std::string& op, const std::string& what) {
  if (t.ndim() != rank) {
    throw UserError(str(op, ": ", what, " must have ", rank, " dimensions, but ", t.name(), " has shape ",
                        shape_str(static_shape(t, op))));
  }
}

void check_same_dtype(const te::Tensor& a, const te::Tensor& b, const std::string& op) {
  if (a.dtype() != b.dtype()) {
    throw UserError(str(op, ": ", a.name(), " is ", a.dtype(), " but ", b.name(), " is ", b.dtype(),
                        "; both inputs must have one element type"));
  }
}

}  // namespace temper::ops
