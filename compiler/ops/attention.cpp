#include "compiler/ops/attention.h"

#include "compiler/ops/shape.h"

namespace temper::ops {

te::Tensor attention(const te::Tensor& q, const te::Tensor& kt, const te::Tensor& v, const te::Tensor& mask,
                     double scale, const std::string& name) {
  const std::string op = "attention";
  check_rank(q, 3, op, "q [B, S, D]");
  check_rank(kt, 3, op, "kt [B, D, T]");
  check_rank(v, 3, op, "v [B, T, E]");
  check_float(q, op, "q");
  check_same_dtype(q, kt, op);
  check_same_dtype(q, v, op);
  Shape sq = static_shape(q, op), sk = static_shape(kt, op), sv = static_shape(v, op);
  int64_t B = sq[0], S = sq[1], D = sq[2], T = sk[2], E = sv[2];
  if (sk[0] != B || sk[1] != D) {
    throw UserError(str(op, ": kt is ", shape_str(sk), " but must be [", B, ", ", D, ", T] for q ", shape_str(sq)));
  }
  if (sv[0] != B || sv[1] != T) {
    throw UserError(str(op, ": v is ", shape_str(sv), " but must be [", B, ", ", T, ", E] for kt ", shape_str(sk)));
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
      shape_exprs({B, S, T}, op), [&](Var b, Var i, Var j) { return te::sum(q(b, i, rk) * kt(b, rk, j), {rk}); },
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
      shape_exprs({B, S, E}, op), [&](Var b, Var i, Var d) { return te::sum(e(b, i, rj) * v(b, rj, d), {rj}); },
      name + "_product");
  return te::compute(
      shape_exprs({B, S, E}, op), [&](Var b, Var i, Var d) { return product(b, i, d) / row_sum(b, i); }, name);
}

}  // namespace temper::ops
