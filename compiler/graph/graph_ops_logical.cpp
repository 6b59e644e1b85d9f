// The ONNX ops of truth values: the comparisons Equal, Greater, Less, GreaterOrEqual and
// LessOrEqual (numbers in, bool out, with broadcasting); And, Or, Xor and Not on bools;
// IsNaN and IsInf; and Where, which selects between two inputs by a bool one. Exporters
// write them for attention masks and for the guards around padding.
#include <cmath>
#include <functional>

#include "compiler/graph/graph_ops_common.h"

namespace temper::graph::detail {

namespace {

// ---------------------------------------------------------------- comparisons, And, Or, Xor

std::vector<TensorType> infer_comparison(const Graph& graph, const Node& node) {
  check_arity(node, 2, 2);
  const TensorType& a = input_type(graph, node, 0, "A");
  const TensorType& b = input_type(graph, node, 1, "B");
  check_same_dtype(a, b, "input A", "input B");
  if (a.dtype.is_bool() && node.op != "Equal") {
    throw UserError(str("inputs are bool; ", node.op, " compares numbers (Equal also compares bools)"));
  }
  return {{broadcast_shapes(a, b), DataType::boolean()}};
}

std::vector<TensorType> infer_logical(const Graph& graph, const Node& node) {
  check_arity(node, 2, 2);
  const TensorType& a = input_type(graph, node, 0, "A");
  const TensorType& b = input_type(graph, node, 1, "B");
  for (const TensorType* t : {&a, &b}) {
    if (!t->dtype.is_bool()) throw UserError(str("input ", t->to_string(), " is not bool; ", node.op, " takes bools"));
  }
  return {{broadcast_shapes(a, b), DataType::boolean()}};
}

// A binary op whose output is f(a, b) per element of the broadcast shape.
GraphOp bool_binary_op(const std::string& op_type, bool logical, Expr (*f)(Expr, Expr)) {
  return {op_type, OpPattern::Broadcast, logical ? infer_logical : infer_comparison,
          [f](const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
            Shape out = broadcast_shapes({static_shape(in[0]), in[0].dtype()}, {static_shape(in[1]), in[1].dtype()});
            return std::vector<te::Tensor>{te::compute(
                shape_exprs(out),
                [&](const std::vector<Var>& i) { return f(broadcast_load(in[0], i), broadcast_load(in[1], i)); },
                output_name(graph, node, 0))};
          }};
}

// ---------------------------------------------------------------- Not, IsNaN, IsInf

// A unary op to bool, of float inputs (float_input) or of bools.
GraphOp bool_unary_op(const std::string& op_type, bool float_input, ElementFn f) {
  auto infer = [float_input](const Graph& graph, const Node& node) {
    check_arity(node, 1, 1);
    const TensorType& x = input_type(graph, node, 0, "X");
    if (float_input) {
      check_float(x, "input X");
    } else if (!x.dtype.is_bool()) {
      throw UserError(str("input X is ", x.to_string(), "; ", node.op, " takes bools"));
    }
    return std::vector<TensorType>{{x.shape, DataType::boolean()}};
  };
  return {op_type, OpPattern::Elementwise, infer, map_elements(std::move(f))};
}

Expr is_inf(const Node& node, Expr x) {
  Expr inf = make_const(x.dtype(), HUGE_VAL);
  bool positive = node.attrs.get_int_or("detect_positive", 1) != 0;
  bool negative = node.attrs.get_int_or("detect_negative", 1) != 0;
  if (positive && negative) return x == inf || x == -inf;
  if (positive) return x == inf;
  if (negative) return x == -inf;
  return make_bool(false);
}

// ---------------------------------------------------------------- Where

std::vector<TensorType> infer_where(const Graph& graph, const Node& node) {
  check_arity(node, 3, 3);
  const TensorType& condition = input_type(graph, node, 0, "condition");
  const TensorType& x = input_type(graph, node, 1, "X");
  const TensorType& y = input_type(graph, node, 2, "Y");
  if (!condition.dtype.is_bool()) throw UserError(str("input condition is ", condition.to_string(), ", not bool"));
  check_same_dtype(x, y, "input X", "input Y");
  TensorType xy{broadcast_shapes(x, y), x.dtype};
  return {{broadcast_shapes(condition, xy), x.dtype}};
}

std::vector<te::Tensor> compute_where(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  Shape out = static_shape(in[0]);
  for (int k : {1, 2}) out = broadcast_shapes({out, in[0].dtype()}, {static_shape(in[k]), in[k].dtype()});
  return {te::compute(
      shape_exprs(out),
      [&](const std::vector<Var>& i) {
        return select(broadcast_load(in[0], i), broadcast_load(in[1], i), broadcast_load(in[2], i));
      },
      output_name(graph, node, 0))};
}

}  // namespace

std::vector<GraphOp> logical_graph_ops() {
  return {
      bool_binary_op("Equal", false, [](Expr a, Expr b) { return a == b; }),
      bool_binary_op("Greater", false, [](Expr a, Expr b) { return a > b; }),
      bool_binary_op("Less", false, [](Expr a, Expr b) { return a < b; }),
      bool_binary_op("GreaterOrEqual", false, [](Expr a, Expr b) { return a >= b; }),
      bool_binary_op("LessOrEqual", false, [](Expr a, Expr b) { return a <= b; }),
      bool_binary_op("And", true, [](Expr a, Expr b) { return a && b; }),
      bool_binary_op("Or", true, [](Expr a, Expr b) { return a || b; }),
      bool_binary_op("Xor", true, [](Expr a, Expr b) { return a != b; }),
      bool_unary_op("Not", false, [](const Node&, Expr x) { return !x; }),
      // NaN is the one value unequal to itself.
      bool_unary_op("IsNaN", true, [](const Node&, Expr x) { return x != x; }),
      bool_unary_op("IsInf", true, is_inf),
      {"Where", OpPattern::Broadcast, infer_where, compute_where},
  };
}

}  // namespace temper::graph::detail
