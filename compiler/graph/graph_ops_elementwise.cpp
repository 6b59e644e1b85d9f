// The elementwise ONNX ops: Add, Sub, Mul, Div and Pow with broadcasting; Relu, Sigmoid,
// Tanh, Erf, Sqrt, Gelu; Clip; Identity and Cast.
//
// Gelu is ONNX opset 20's: x/2 * (1 + erf(x/sqrt 2)), or with approximate="tanh"
// x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))). Import stops at opset 17, so the
// node comes from pass_recognize_gelu.h, which finds the decomposed form exporters write.
//
// Broadcasting is numpy's (ONNX's "multidirectional") from opset 7. Before, the binary
// ops broadcast only with broadcast=1, B's shape matching a run of A's dimensions that
// starts at `axis` (by default A's last ones); B is then read as A's rank with 1s around.
#include <cfloat>
#include <cmath>
#include <numbers>

#include "compiler/graph/graph_ops_common.h"
#include "compiler/ops/elementwise.h"
#include "compiler/ops/transform.h"

namespace temper::graph::detail {

namespace {

// ---------------------------------------------------------------- binary arithmetic

// B's shape padded with 1s to A's rank under the opset < 7 rule (see the file comment).
Shape legacy_aligned_shape(const Node& node, const TensorType& a, const TensorType& b) {
  if (node.attrs.get_int_or("broadcast", 0) == 0) {
    if (a.shape != b.shape) {
      throw UserError(str("inputs ", a.to_string(), " and ", b.to_string(),
                          " differ in shape and broadcast=0 (before opset 7 only broadcast=1 broadcasts)"));
    }
    return b.shape;
  }
  int64_t rank_a = static_cast<int64_t>(a.shape.size());
  int64_t rank_b = static_cast<int64_t>(b.shape.size());
  int64_t axis = node.attrs.get_int_or("axis", rank_a - rank_b);
  if (axis < 0) axis += rank_a;
  bool fits = axis >= 0 && axis + rank_b <= rank_a;
  for (int64_t d = 0; fits && d < rank_b; ++d) fits = b.shape[d] == a.shape[axis + d] || b.shape[d] == 1;
  if (!fits) {
    throw UserError(str("input B ", b.to_string(), " does not match the dimensions of A ", a.to_string(), " from axis ",
                        axis, " (broadcast=1, before opset 7)"));
  }
  Shape aligned(rank_a, 1);
  std::copy(b.shape.begin(), b.shape.end(), aligned.begin() + axis);
  return aligned;
}

std::vector<TensorType> infer_binary(const Graph& graph, const Node& node) {
  check_arity(node, 2, 2);
  const TensorType& a = input_type(graph, node, 0, "A");
  const TensorType& b = input_type(graph, node, 1, "B");
  // Pow's exponent may have another numeric type than its base (opset 12 allows it).
  if (node.op != "Pow") check_same_dtype(a, b, "input A", "input B");
  if (graph.opset < 7) {
    TensorType aligned{legacy_aligned_shape(node, a, b), b.dtype};
    return {{broadcast_shapes(a, aligned), a.dtype}};
  }
  return {{broadcast_shapes(a, b), a.dtype}};
}

te::Tensor pow_compute(const te::Tensor& base, const te::Tensor& exponent, const Shape& out, const std::string& name) {
  DataType t = base.dtype();
  return te::compute(
      shape_exprs(out),
      [&](const std::vector<Var>& i) {
        Expr x = broadcast_load(base, i);
        Expr y = broadcast_load(exponent, i);
        if (t.is_float()) return te::pow(x, cast(t, y));
        // Integer powers through double: exact while the result fits its 53 bits.
        return cast(t, te::pow(cast(DataType::float64(), x), cast(DataType::float64(), y)));
      },
      name);
}

GraphOp binary_op(const std::string& op_type) {
  GraphOp op{op_type, OpPattern::Broadcast, infer_binary, nullptr};
  op.compute = [op_type](const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
    std::string name = output_name(graph, node, 0);
    te::Tensor a = in[0];
    te::Tensor b = in[1];
    if (graph.opset < 7) {
      TensorType ta = input_type(graph, node, 0, "A");
      TensorType tb = input_type(graph, node, 1, "B");
      Shape aligned = legacy_aligned_shape(node, ta, tb);
      if (aligned != tb.shape) b = ops::reshape(b, aligned, name + "_b_aligned");
    }
    if (op_type == "Add") return std::vector<te::Tensor>{ops::add(a, b, name)};
    if (op_type == "Sub") return std::vector<te::Tensor>{ops::subtract(a, b, name)};
    if (op_type == "Mul") return std::vector<te::Tensor>{ops::multiply(a, b, name)};
    if (op_type == "Div") return std::vector<te::Tensor>{ops::divide(a, b, name)};
    TEMPER_CHECK(op_type == "Pow", "not a binary op: ", op_type);
    Shape out = broadcast_shapes({static_shape(a), a.dtype()}, {static_shape(b), b.dtype()});
    return std::vector<te::Tensor>{pow_compute(a, b, out, name)};
  };
  return op;
}

// ---------------------------------------------------------------- unary math

std::vector<TensorType> infer_same_type(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  return {input_type(graph, node, 0, "input")};
}

std::vector<TensorType> infer_float_unary(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  const TensorType& x = input_type(graph, node, 0, "input");
  check_float(x, "the input");
  return {x};
}

GraphOp unary_op(const std::string& op_type, ops::UnaryOp unary) {
  auto infer = ops::unary_op_needs_float(unary) ? infer_float_unary : infer_same_type;
  return {op_type, OpPattern::Elementwise, infer,
          [unary](const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
            return std::vector<te::Tensor>{ops::unary(unary, in[0], output_name(graph, node, 0))};
          }};
}

GraphOp erf_op() {
  return {"Erf", OpPattern::Elementwise, infer_float_unary,
          [](const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
            const te::Tensor& x = in[0];
            return std::vector<te::Tensor>{te::compute(
                x.shape(),
                [&](const std::vector<Var>& i) {
                  return te::erf(x({i.begin(), i.end()}));
                },
                output_name(graph, node, 0))};
          }};
}

std::vector<TensorType> infer_gelu(const Graph& graph, const Node& node) {
  std::string approximate = node.attrs.get_string_or("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    throw UserError(str("attribute approximate=\"", approximate, "\" is neither \"none\" nor \"tanh\""));
  }
  return infer_float_unary(graph, node);
}

std::vector<te::Tensor> compute_gelu(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  DataType t = x.dtype();
  bool tanh_form = node.attrs.get_string_or("approximate", "none") == "tanh";
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        Expr v = x({i.begin(), i.end()});
        auto c = [&](double value) { return make_const(t, value); };
        Expr squashed = tanh_form ? te::tanh(c(std::sqrt(2.0 / std::numbers::pi)) * (v + c(0.044715) * v * v * v))
                                  : te::erf(v * c(1.0 / std::numbers::sqrt2));
        return c(0.5) * v * (c(1.0) + squashed);
      },
      output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- Clip

// Clip's bounds: attributes min and max before opset 11, optional scalar inputs 1 and 2 after.
std::vector<TensorType> infer_clip(const Graph& graph, const Node& node) {
  check_arity(node, 1, graph.opset < 11 ? 1 : 3);
  const TensorType& x = input_type(graph, node, 0, "input");
  for (int i : {1, 2}) {
    if (!has_input(node, i)) continue;
    const char* role = i == 1 ? "min" : "max";
    const TensorType& bound = input_type(graph, node, i, role);
    check_same_dtype(x, bound, "the input", role);
    if (bound.size() != 1) throw UserError(str("input ", i, " (", role, ") is ", bound.to_string(), ", not a scalar"));
  }
  return {x};
}

std::vector<te::Tensor> compute_clip(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  DataType t = x.dtype();
  auto bound = [&](int i, const std::string& attr) -> Expr {
    if (graph.opset < 11) return node.attrs.has(attr) ? make_const(t, node.attrs.get_float_or(attr, 0)) : Expr();
    if (!has_input(node, i)) return Expr();
    return in[i](std::vector<Expr>(in[i].ndim(), make_const(DataType::int32(), int64_t{0})));
  };
  Expr low = bound(1, "min");
  Expr high = bound(2, "max");
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        // ONNX's order: the upper bound wins where min > max.
        Expr y = x({i.begin(), i.end()});
        if (low.defined()) y = max(y, low);
        if (high.defined()) y = min(y, high);
        return y;
      },
      output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- Identity and Cast

// TensorProto.DataType codes.
DataType onnx_dtype(int64_t code) {
  switch (code) {
    case 1:
      return DataType::float32();
    case 2:
      return DataType::uint8();
    case 3:
      return DataType::int8();
    case 4:
      return DataType(DataType::Code::UInt, 16);
    case 5:
      return DataType::int16();
    case 6:
      return DataType::int32();
    case 7:
      return DataType::int64();
    case 9:
      return DataType::boolean();
    case 10:
      return DataType::float16();
    case 11:
      return DataType::float64();
    case 12:
      return DataType(DataType::Code::UInt, 32);
    case 13:
      return DataType(DataType::Code::UInt, 64);
  }
  static const char* const names[] = {"undefined", "float",  "uint8",     "int8",       "uint16",  "int16",
                                      "int32",     "int64",  "string",    "bool",       "float16", "double",
                                      "uint32",    "uint64", "complex64", "complex128", "bfloat16"};
  std::string name = code >= 0 && code <= 16 ? names[code] : "unknown";
  throw UserError(str("attribute to=", code, " (", name, ") is a type Temper does not compute"));
}

std::vector<TensorType> infer_cast(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  const TensorType& x = input_type(graph, node, 0, "input");
  return {{x.shape, onnx_dtype(node.attrs.get_int("to"))}};
}

std::vector<te::Tensor> compute_cast(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  DataType to = onnx_dtype(node.attrs.get_int("to"));
  if (to == x.dtype()) return {x};
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        Expr v = x({i.begin(), i.end()});
        // To bool is "not zero", not a truncation to the lowest bit.
        if (to.is_bool()) return v != make_const(x.dtype(), int64_t{0});
        return cast(to, v);
      },
      output_name(graph, node, 0))};
}

}  // namespace

std::vector<GraphOp> elementwise_graph_ops() {
  return {
      binary_op("Add"),
      binary_op("Sub"),
      binary_op("Mul"),
      binary_op("Div"),
      binary_op("Pow"),
      unary_op("Relu", ops::UnaryOp::Relu),
      unary_op("Sigmoid", ops::UnaryOp::Sigmoid),
      unary_op("Tanh", ops::UnaryOp::Tanh),
      unary_op("Sqrt", ops::UnaryOp::Sqrt),
      erf_op(),
      {"Gelu", OpPattern::Elementwise, infer_gelu, compute_gelu},
      {"Clip", OpPattern::Elementwise, infer_clip, compute_clip},
      {"Identity", OpPattern::Elementwise, infer_same_type,
       [](const Graph&, const Node&, const std::vector<te::Tensor>& in) { return std::vector<te::Tensor>{in[0]}; }},
      {"Cast", OpPattern::Elementwise, infer_cast, compute_cast},
  };
}

}  // namespace temper::graph::detail
