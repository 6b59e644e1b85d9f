#include "compiler/ops/nn.h"

#include "compiler/ops/shape.h"

namespace temper::ops {

namespace {

// The indices of a keep-dims reduction result: i with the reduced dimensions set to 0.
std::vector<Expr> reduced_index(const std::vector<Var>& i, int first_reduced, int last_reduced) {
  std::vector<Expr> idx = as_exprs(i);
  for (int d = first_reduced; d <= last_reduced; ++d) idx[d] = index_const(0);
  return idx;
}

void check_param_shape(const te::Tensor& x, const te::Tensor& param, const Shape& expected, const std::string& op,
                       const std::string& role) {
  check_same_dtype(x, param, op);
  Shape got = static_shape(param, op);
  if (got != expected) {
    throw UserError(str(op, ": ", role, " ", param.name(), " has shape ", shape_str(got), " but must be ",
                        shape_str(expected), " for an input of shape ", shape_str(static_shape(x, op))));
  }
}

}  // namespace

te::Tensor softmax(const te::Tensor& x, int64_t axis, const std::string& name) {
  const std::string op = "softmax";
  check_float(x, op, "the input");
  Shape shape = static_shape(x, op);
  int ax = normalize_axis(axis, static_cast<int>(shape.size()), op);
  Shape reduced = shape;
  reduced[ax] = 1;
  IterVar k = te::reduce_axis({0, index_const(shape[ax])}, "rk");
  auto with_axis = [&](const std::vector<Var>& i, Expr v) {
    std::vector<Expr> idx = as_exprs(i);
    idx[ax] = std::move(v);
    return idx;
  };
  te::Tensor row_max = te::compute(
      shape_exprs(reduced, op), [&](const std::vector<Var>& i) { return te::max(x(with_axis(i, k)), {k}); },
      name + "_max");
  te::Tensor e = te::compute(
      shape_exprs(shape, op),
      [&](const std::vector<Var>& i) { return te::exp(x(as_exprs(i)) - row_max(reduced_index(i, ax, ax))); },
      name + "_exp");
  te::Tensor row_sum = te::compute(
      shape_exprs(reduced, op), [&](const std::vector<Var>& i) { return te::sum(e(with_axis(i, k)), {k}); },
      name + "_sum");
  // One division per row, then a multiply per element: a vector division costs several
  // multiplies' throughput, and the reciprocal is hoisted out of the row's loop.
  Expr one = make_const(x.dtype(), 1.0);
  return te::compute(
      shape_exprs(shape, op),
      [&](const std::vector<Var>& i) { return e(as_exprs(i)) * (one / row_sum(reduced_index(i, ax, ax))); }, name);
}

te::Tensor layer_norm(const te::Tensor& x, const te::Tensor& gamma, const te::Tensor& beta, int64_t axis, double eps,
                      const std::string& name) {
  const std::string op = "layer_norm";
  check_float(x, op, "the input");
  Shape shape = static_shape(x, op);
  int rank = static_cast<int>(shape.size());
  int ax = normalize_axis(axis, rank, op);
  Shape normalized(shape.begin() + ax, shape.end());
  check_param_shape(x, gamma, normalized, op, "gamma");
  check_param_shape(x, beta, normalized, op, "beta");
  Shape reduced = shape;
  std::vector<IterVar> axes;
  for (int d = ax; d < rank; ++d) {
    reduced[d] = 1;
    axes.push_back(te::reduce_axis({0, index_const(shape[d])}, "r" + std::to_string(d - ax)));
  }
  // Sum of x / n rather than a division after the sum: a reduction must be the whole body.
  Expr inv_count = make_const(x.dtype(), 1.0 / static_cast<double>(num_elements(normalized)));
  auto over_axes = [&](const std::vector<Var>& i) {
    std::vector<Expr> idx = as_exprs(i);
    for (int d = ax; d < rank; ++d) idx[d] = axes[d - ax];
    return idx;
  };
  te::Tensor mean = te::compute(
      shape_exprs(reduced, op), [&](const std::vector<Var>& i) { return te::sum(x(over_axes(i)) * inv_count, axes); },
      name + "_mean");
  te::Tensor var = te::compute(
      shape_exprs(reduced, op),
      [&](const std::vector<Var>& i) {
        Expr centered = x(over_axes(i)) - mean(reduced_index(i, ax, rank - 1));
        return te::sum(centered * centered * inv_count, axes);
      },
      name + "_var");
  return te::compute(
      shape_exprs(shape, op),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> stat = reduced_index(i, ax, rank - 1);
        std::vector<Expr> param(i.begin() + ax, i.end());
        Expr normalized_x = (x(as_exprs(i)) - mean(stat)) * te::rsqrt(var(stat) + make_const(x.dtype(), eps));
        return normalized_x * gamma(param) + beta(param);
      },
      name);
}

te::Tensor batch_norm(const te::Tensor& x, const te::Tensor& mean, const te::Tensor& var, const te::Tensor& gamma,
                      const te::Tensor& beta, int64_t axis, double eps, const std::string& name) {
  const std::string op = "batch_norm";
  check_float(x, op, "the input");
  Shape shape = static_shape(x, op);
  int ax = normalize_axis(axis, static_cast<int>(shape.size()), op);
  check_param_shape(x, mean, {shape[ax]}, op, "mean");
  check_param_shape(x, var, {shape[ax]}, op, "var");
  check_param_shape(x, gamma, {shape[ax]}, op, "gamma");
  check_param_shape(x, beta, {shape[ax]}, op, "beta");
  return te::compute(
      shape_exprs(shape, op),
      [&](const std::vector<Var>& i) {
        Expr c = i[ax];
        Expr inv_std = te::rsqrt(var(c) + make_const(x.dtype(), eps));
        return (x(as_exprs(i)) - mean(c)) * inv_std * gamma(c) + beta(c);
      },
      name);
}

}  // namespace temper::ops
