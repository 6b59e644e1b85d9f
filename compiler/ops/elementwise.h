// Elementwise operators: binary arithmetic with numpy broadcasting, activations and
// other unary math, and a per-channel scale-and-bias.
//
// Broadcasting follows numpy: shapes are aligned at their last dimension, a missing
// leading dimension counts as 1, and each pair of extents must be equal or contain a 1
// (which is stretched). An input read along a stretched dimension is indexed with 0.
// Each operator is one injective stage named `name`.
#pragma once

#include <string>

#include "compiler/ops/shape.h"
#include "compiler/te/te.h"

namespace temper::ops {

enum class BinaryOp { Add, Sub, Mul, Div, Maximum, Minimum };
enum class UnaryOp { Relu, Relu6, Sigmoid, Tanh, Gelu, Exp, Sqrt };

// "add", "relu", ...: the op names of workloads and default stage names.
const char* binary_op_name(BinaryOp op);
const char* unary_op_name(UnaryOp op);
// relu and relu6 work on integers; the others are float-only.
bool unary_op_needs_float(UnaryOp op);

// The broadcast shape of a and b; UserError naming op and both shapes when they do not
// broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& op);

te::Tensor binary(BinaryOp op, const te::Tensor& a, const te::Tensor& b, const std::string& name);
te::Tensor add(const te::Tensor& a, const te::Tensor& b, const std::string& name = "add");
te::Tensor subtract(const te::Tensor& a, const te::Tensor& b, const std::string& name = "sub");
te::Tensor multiply(const te::Tensor& a, const te::Tensor& b, const std::string& name = "mul");
te::Tensor divide(const te::Tensor& a, const te::Tensor& b, const std::string& name = "div");
te::Tensor maximum(const te::Tensor& a, const te::Tensor& b, const std::string& name = "maximum");
te::Tensor minimum(const te::Tensor& a, const te::Tensor& b, const std::string& name = "minimum");

// The scalar expression op(x); gelu is the erf form 0.5 x (1 + erf(x / sqrt 2)).
Expr unary_expr(UnaryOp op, const Expr& x);

te::Tensor unary(UnaryOp op, const te::Tensor& x, const std::string& name);
te::Tensor relu(const te::Tensor& x, const std::string& name = "relu");
te::Tensor relu6(const te::Tensor& x, const std::string& name = "relu6");
te::Tensor sigmoid(const te::Tensor& x, const std::string& name = "sigmoid");
te::Tensor tanh(const te::Tensor& x, const std::string& name = "tanh");
te::Tensor gelu(const te::Tensor& x, const std::string& name = "gelu");
te::Tensor exp(const te::Tensor& x, const std::string& name = "exp");
te::Tensor sqrt(const te::Tensor& x, const std::string& name = "sqrt");

// y = x * scale[c] + bias[c], with c the index along `axis` (negative counts from the
// end); scale and bias are 1-D with x.shape[axis] elements. The form batch norm takes
// once folded into the preceding layer.
te::Tensor scale_bias(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& bias, int64_t axis,
                      const std::string& name = "scale_bias");

}  // namespace temper::ops
