#include "compiler/ops/matmul.h"

namespace temper::ops {

namespace {

// The (rows, cols) of an operand's last two dimensions, read transposed when asked.
struct MatrixDims {
  int64_t rows, cols;
};

MatrixDims matrix_dims(const Shape& s, bool transposed) {
  int64_t r = s[s.size() - 2];
  int64_t c = s[s.size() - 1];
  return transposed ? MatrixDims{c, r} : MatrixDims{r, c};
}

// The element (row, col) of the operand's logical (possibly transposed) matrix, with
// `batch` as leading indices.
Expr matrix_load(const te::Tensor& t, std::vector<Expr> batch, Expr row, Expr col, bool transposed) {
  batch.push_back(transposed ? col : row);
  batch.push_back(transposed ? row : col);
  return t(batch);
}

std::string flags_str(bool transpose_a, bool transpose_b) {
  return str(" (transpose_a=", transpose_a, ", transpose_b=", transpose_b, ")");
}

}  // namespace

te::Tensor matmul(const te::Tensor& a, const te::Tensor& b, bool transpose_a, bool transpose_b,
                  const std::string& name) {
  check_rank(a, 2, "matmul", "A");
  check_rank(b, 2, "matmul", "B");
  check_same_dtype(a, b, "matmul");
  MatrixDims da = matrix_dims(static_shape(a, "matmul"), transpose_a);
  MatrixDims db = matrix_dims(static_shape(b, "matmul"), transpose_b);
  if (da.cols != db.rows) {
    throw UserError(str("matmul: A is ", da.rows, "x", da.cols, " and B is ", db.rows, "x", db.cols,
                        flags_str(transpose_a, transpose_b), "; A's K=", da.cols, " must equal B's K=", db.rows));
  }
  IterVar k = te::reduce_axis({0, index_const(da.cols)}, "rk");
  return te::compute(
      shape_exprs({da.rows, db.cols}, "matmul"),
      [&](Var i, Var j) {
        return te::sum(matrix_load(a, {}, i, k, transpose_a) * matrix_load(b, {}, k, j, transpose_b), {k});
      },
      name);
}

te::Tensor batch_matmul(const te::Tensor& a, const te::Tensor& b, bool transpose_a, bool transpose_b,
                        const std::string& name) {
  const std::string op = "batch_matmul";
  check_rank(a, 3, op, "A");
  check_rank(b, 3, op, "B");
  check_same_dtype(a, b, op);
  Shape sa = static_shape(a, op);
  Shape sb = static_shape(b, op);
  if (sa[0] != sb[0]) {
    throw UserError(str(op, ": A has batch ", sa[0], " but B has batch ", sb[0], "; the batches must be equal"));
  }
  MatrixDims da = matrix_dims(sa, transpose_a);
  MatrixDims db = matrix_dims(sb, transpose_b);
  if (da.cols != db.rows) {
    throw UserError(str(op, ": A is ", sa[0], "x", da.rows, "x", da.cols, " and B is ", sb[0], "x", db.rows, "x",
                        db.cols, flags_str(transpose_a, transpose_b), "; A's K=", da.cols,
                        " must equal B's K=", db.rows));
  }
  IterVar k = te::reduce_axis({0, index_const(da.cols)}, "rk");
  return te::compute(
      shape_exprs({sa[0], da.rows, db.cols}, op),
      [&](Var batch, Var i, Var j) {
        return te::sum(matrix_load(a, {batch}, i, k, transpose_a) * matrix_load(b, {batch}, k, j, transpose_b), {k});
      },
      name);
}

te::Tensor dense(const te::Tensor& x, const te::Tensor& weight, const te::Tensor& bias,
                 std::optional<UnaryOp> activation, const std::string& name) {
  const std::string op = "dense";
  check_rank(x, 2, op, "the input X [M, K]");
  check_rank(weight, 2, op, "the weight W [N, K]");
  check_same_dtype(x, weight, op);
  Shape sx = static_shape(x, op);
  Shape sw = static_shape(weight, op);
  if (sx[1] != sw[1]) {
    throw UserError(str(op, ": the input is ", sx[0], "x", sx[1], " (M x K) but the weight is ", sw[0], "x", sw[1],
                        " (N x K); their K must be equal"));
  }
  if (bias.defined()) {
    check_same_dtype(x, bias, op);
    if (static_shape(bias, op) != Shape{sw[0]}) {
      throw UserError(str(op, ": the bias has shape ", shape_str(static_shape(bias, op)), " but must be ", sw[0],
                          " (N, the weight's first dimension)"));
    }
  }
  if (activation && unary_op_needs_float(*activation)) check_float(x, op, "the input");
  bool has_epilogue = bias.defined() || activation.has_value();
  IterVar k = te::reduce_axis({0, index_const(sx[1])}, "rk");
  te::Tensor product = te::compute(
      shape_exprs({sx[0], sw[0]}, op), [&](Var i, Var j) { return te::sum(x(i, k) * weight(j, k), {k}); },
      has_epilogue ? name + "_matmul" : name);
  if (!has_epilogue) return product;
  return te::compute(
      shape_exprs({sx[0], sw[0]}, op),
      [&](Var i, Var j) {
        Expr y = product(i, j);
        if (bias.defined()) y = y + bias(j);
        return activation ? unary_expr(*activation, y) : y;
      },
      name);
}

}  // namespace temper::ops
