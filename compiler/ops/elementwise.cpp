#include "compiler/ops/elementwise.h"

#include <algorithm>
#include <cmath>

namespace temper::ops {

const char* binary_op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "add";
    case BinaryOp::Sub:
      return "sub";
    case BinaryOp::Mul:
      return "mul";
    case BinaryOp::Div:
      return "div";
    case BinaryOp::Maximum:
      return "maximum";
    case BinaryOp::Minimum:
      return "minimum";
  }
  return "?";
}

const char* unary_op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::Relu:
      return "relu";
    case UnaryOp::Relu6:
      return "relu6";
    case UnaryOp::Sigmoid:
      return "sigmoid";
    case UnaryOp::Tanh:
      return "tanh";
    case UnaryOp::Gelu:
      return "gelu";
    case UnaryOp::Exp:
      return "exp";
    case UnaryOp::Sqrt:
      return "sqrt";
  }
  return "?";
}

bool unary_op_needs_float(UnaryOp op) {
  return op != UnaryOp::Relu && op != UnaryOp::Relu6;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& op) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d) {
    // Dimension d of the result, counted from the front; the inputs align at the back.
    int64_t ea = d + a.size() >= rank ? a[d + a.size() - rank] : 1;
    int64_t eb = d + b.size() >= rank ? b[d + b.size() - rank] : 1;
    if (ea != eb && ea != 1 && eb != 1) {
      throw UserError(str(op, ": shapes ", shape_str(a), " and ", shape_str(b), " do not broadcast: dimension ", d,
                          " of the result would be ", ea, " and ", eb, "; extents must be equal or 1"));
    }
    out[d] = ea == 1 ? eb : ea;
  }
  return out;
}

namespace {

// The access of x at output index i of a broadcast result of rank i.size().
Expr broadcast_load(const te::Tensor& x, const Shape& shape, const Shape& out, const std::vector<Var>& i) {
  std::vector<Expr> idx;
  size_t offset = out.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    idx.push_back(shape[d] == out[d + offset] ? Expr(i[d + offset]) : index_const(0));
  }
  return x(idx);
}

}  // namespace

te::Tensor binary(BinaryOp op, const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  const char* op_name = binary_op_name(op);
  check_same_dtype(a, b, op_name);
  Shape sa = static_shape(a, op_name);
  Shape sb = static_shape(b, op_name);
  Shape out = broadcast_shapes(sa, sb, op_name);
  return te::compute(
      shape_exprs(out, op_name),
      [&](const std::vector<Var>& i) {
        Expr x = broadcast_load(a, sa, out, i);
        Expr y = broadcast_load(b, sb, out, i);
        switch (op) {
          case BinaryOp::Add:
            return x + y;
          case BinaryOp::Sub:
            return x - y;
          case BinaryOp::Mul:
            return x * y;
          case BinaryOp::Div:
            return x / y;
          case BinaryOp::Maximum:
            return max(x, y);
          case BinaryOp::Minimum:
            return min(x, y);
        }
        return Expr();
      },
      name);
}

te::Tensor add(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  return binary(BinaryOp::Add, a, b, name);
}
te::Tensor subtract(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  return binary(BinaryOp::Sub, a, b, name);
}
te::Tensor multiply(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  return binary(BinaryOp::Mul, a, b, name);
}
te::Tensor divide(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  return binary(BinaryOp::Div, a, b, name);
}
te::Tensor maximum(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  return binary(BinaryOp::Maximum, a, b, name);
}
te::Tensor minimum(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  return binary(BinaryOp::Minimum, a, b, name);
}

Expr unary_expr(UnaryOp op, const Expr& x) {
  DataType t = x.dtype();
  switch (op) {
    case UnaryOp::Relu:
      return max(x, make_const(t, int64_t{0}));
    case UnaryOp::Relu6:
      return min(max(x, make_const(t, int64_t{0})), make_const(t, int64_t{6}));
    case UnaryOp::Sigmoid:
      return te::sigmoid(x);
    case UnaryOp::Tanh:
      return te::tanh(x);
    case UnaryOp::Gelu:
      return make_const(t, 0.5) * x * (make_const(t, 1.0) + te::erf(x * make_const(t, M_SQRT1_2)));
    case UnaryOp::Exp:
      return te::exp(x);
    case UnaryOp::Sqrt:
      return te::sqrt(x);
  }
  return Expr();
}

te::Tensor unary(UnaryOp op, const te::Tensor& x, const std::string& name) {
  const char* op_name = unary_op_name(op);
  if (unary_op_needs_float(op)) check_float(x, op_name, "the input");
  return te::compute(
      shape_exprs(static_shape(x, op_name), op_name),
      [&](const std::vector<Var>& i) { return unary_expr(op, x(as_exprs(i))); }, name);
}

te::Tensor relu(const te::Tensor& x, const std::string& name) {
  return unary(UnaryOp::Relu, x, name);
}
te::Tensor relu6(const te::Tensor& x, const std::string& name) {
  return unary(UnaryOp::Relu6, x, name);
}
te::Tensor sigmoid(const te::Tensor& x, const std::string& name) {
  return unary(UnaryOp::Sigmoid, x, name);
}
te::Tensor tanh(const te::Tensor& x, const std::string& name) {
  return unary(UnaryOp::Tanh, x, name);
}
te::Tensor gelu(const te::Tensor& x, const std::string& name) {
  return unary(UnaryOp::Gelu, x, name);
}
te::Tensor exp(const te::Tensor& x, const std::string& name) {
  return unary(UnaryOp::Exp, x, name);
}
te::Tensor sqrt(const te::Tensor& x, const std::string& name) {
  return unary(UnaryOp::Sqrt, x, name);
}

te::Tensor scale_bias(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& bias, int64_t axis,
                      const std::string& name) {
  const std::string op = "scale_bias";
  Shape shape = static_shape(x, op);
  int ax = normalize_axis(axis, static_cast<int>(shape.size()), op);
  for (const te::Tensor* param : {&scale, &bias}) {
    check_same_dtype(x, *param, op);
    if (static_shape(*param, op) != Shape{shape[ax]}) {
      throw UserError(str(op, ": ", param->name(), " has shape ", shape_str(static_shape(*param, op)), " but must be ",
                          shape[ax], " (the extent of axis ", ax, " of ", shape_str(shape), ")"));
    }
  }
  return te::compute(
      shape_exprs(shape, op), [&](const std::vector<Var>& i) { return x(as_exprs(i)) * scale(i[ax]) + bias(i[ax]); },
      name);
}

}  // namespace temper::ops
