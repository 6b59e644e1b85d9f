#include "compiler/ops/attention.h"

#include <functional>

#include "compiler/ops/shape.h"

namespace temper::ops {

namespace {

// An element of the head b's q, keys or v: (b, row, column) as the layout stores it.
using HeadAccess = std::function<Expr(const Expr& b, const Expr& row, const Expr& column)>;

}  // namespace

te::Tensor attention(const te::Tensor& q, const te::Tensor& k, const te::Tensor& v, const te::Tensor& mask,
                     double scale, int64_t heads, const std::string& name) {
  const std::string op = "attention";
  int rank = heads > 0 ? 4 : 3;
  check_rank(q, rank, op, heads > 0 ? "q [N, S, H, D]" : "q [B, S, D]");
  check_rank(k, rank, op, heads > 0 ? "k [N, T, H, D]" : "kt [B, D, T]");
  check_rank(v, rank, op, heads > 0 ? "v [N, T, H, E]" : "v [B, T, E]");
  check_float(q, op, "q");
  check_same_dtype(q, k, op);
  check_same_dtype(q, v, op);
  Shape sq = static_shape(q, op), sk = static_shape(k, op), sv = static_shape(v, op);
  int64_t B = 0, S = sq[1], D = 0, T = 0, E = 0;
  HeadAccess q_at, k_at, v_at;
  if (heads > 0) {
    int64_t N = sq[0];
    B = N * heads;
    D = sq[3];
    T = sk[1];
    E = sv[3];
    if (sq[2] != heads || sk != Shape{N, T, heads, D} || sv[0] != N || sv[1] != T || sv[2] != heads) {
      throw UserError(str(op, ": q ", shape_str(sq), ", k ", shape_str(sk), " and v ", shape_str(sv),
                          " must be [N, S, ", heads, ", D], [N, T, ", heads, ", D] and [N, T, ", heads, ", E]"));
    }
    Expr h = index_const(heads);
    q_at = [=](const Expr& b, const Expr& i, const Expr& c) { return q(floordiv(b, h), i, floormod(b, h), c); };
    k_at = [=](const Expr& b, const Expr& j, const Expr& c) { return k(floordiv(b, h), j, floormod(b, h), c); };
    v_at = [=](const Expr& b, const Expr& j, const Expr& c) { return v(floordiv(b, h), j, floormod(b, h), c); };
  } else {
    B = sq[0];
    D = sq[2];
    T = sk[2];
    E = sv[2];
    if (sk[0] != B || sk[1] != D) {
      throw UserError(str(op, ": kt is ", shape_str(sk), " but must be [", B, ", ", D, ", T] for q ", shape_str(sq)));
    }
    if (sv[0] != B || sv[1] != T) {
      throw UserError(str(op, ": v is ", shape_str(sv), " but must be [", B, ", ", T, ", E] for kt ", shape_str(sk)));
    }
    q_at = [=](const Expr& b, const Expr& i, const Expr& c) { return q(b, i, c); };
    k_at = [=](const Expr& b, const Expr& j, const Expr& c) { return k(b, c, j); };
    v_at = [=](const Expr& b, const Expr& j, const Expr& c) { return v(b, j, c); };
  }
  int64_t rows_per_mask_row = 0;
  if (mask.defined()) {
    check_rank(mask, 2, op, "the mask [MB, T]");
    check_same_dtype(q, mask, op);
    Shape sm = static_shape(mask, op);
    if (sm[1] != T || B % sm[0] != 0) {
      throw UserError(str(op, ": the mask is ", shape_str(sm), " but must be [MB, ", T, "] with MB dividing ", B));
    }
    rows_per_mask_row = B / sm[0];
  }
  DataType dtype = q.dtype();
  IterVar rk = te::reduce_axis({0, index_const(D)}, "rk");
  te::Tensor scores = te::compute(
      shape_exprs({B, S, T}, op), [&](Var b, Var i, Var j) { return te::sum(q_at(b, i, rk) * k_at(b, j, rk), {rk}); },
      name + "_scores");
  auto logit = [&](const Expr& b, const Expr& i, const Expr& j) {
    Expr x = scores(b, i, j);
    if (scale != 1.0) x = x * make_const(dtype, scale);
    if (mask.defined()) x = x + mask(rows_per_mask_row == 1 ? b : floordiv(b, index_const(rows_per_mask_row)), j);
    return x;
  };
  IterVar rj_max = te::reduce_axis({0, index_const(T)}, "rj");
  te::Tensor row_max = te::compute(
      shape_exprs({B, S}, op), [&](Var b, Var i) { return te::max(logit(b, i, rj_max), {rj_max}); }, name + "_max");
  te::Tensor e = te::compute(
      shape_exprs({B, S, T}, op), [&](Var b, Var i, Var j) { return te::exp(logit(b, i, j) - row_max(b, i)); },
      name + "_exp");
  IterVar rj_sum = te::reduce_axis({0, index_const(T)}, "rj");
  te::Tensor row_sum = te::compute(
      shape_exprs({B, S}, op), [&](Var b, Var i) { return te::sum(e(b, i, rj_sum), {rj_sum}); }, name + "_sum");
  IterVar rj = te::reduce_axis({0, index_const(T)}, "rj");
  te::Tensor product = te::compute(
      shape_exprs({B, S, E}, op), [&](Var b, Var i, Var d) { return te::sum(e(b, i, rj) * v_at(b, rj, d), {rj}); },
      name + "_product");
  // One division per row (hoisted out of the row's loop), a multiply per element.
  Expr one = make_const(q.dtype(), 1.0);
  if (heads > 0) {
    Expr h = index_const(heads);
    return te::compute(
        shape_exprs({B / heads, S, heads, E}, op),
        [&](Var n, Var i, Var hh, Var d) { return product(n * h + hh, i, d) * (one / row_sum(n * h + hh, i)); }, name);
  }
  return te::compute(
      shape_exprs({B, S, E}, op), [&](Var b, Var i, Var d) { return product(b, i, d) * (one / row_sum(b, i)); }, name);
}

}  // namespace temper::ops
