// The elementwise ONNX ops: Add, Sub, Mul, Div, Pow, Mod and PRelu with broadcasting;
// Max, Min, Sum and Mean of any number of inputs; unary math (Neg, Abs, Exp, Log, Floor,
// Ceil, Round, Sign, Reciprocal, Sqrt, Erf, the trigonometric and hyperbolic functions) and the
// activations (Relu, Sigmoid, Tanh, Gelu, LeakyRelu, Elu, Selu, Celu, HardSigmoid,
// HardSwish, Softplus, Softsign, Mish, ThresholdedRelu, Shrink); Clip; Identity, Dropout
// (inference), Cast and CastLike.
//
// Gelu is ONNX opset 20's: x/2 * (1 + erf(x/sqrt 2)), or with approximate="tanh"
// x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))). Models before opset 20 write it
// decomposed, which pass_recognize_gelu.h turns into this node.
//
// Broadcasting is numpy's (ONNX's "multidirectional") from opset 7. Before, the binary
// ops broadcast only with broadcast=1, B's shape matching a run of A's dimensions that
// starts at `axis` (by default A's last ones); B is then read as A's rank with 1s around.
#include <cfloat>
#include <cmath>
#include <functional>
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

// An integer divisor that cannot trap: 1 where b is 0 (and, signed, -1, whose quotient
// of the type's minimum overflows); x86's idiv faults on both, ending the process.
Expr trap_free_divisor(const Expr& b) {
  DataType t = b.dtype();
  Expr unsafe = b == make_const(t, int64_t{0});
  if (t.is_int()) unsafe = unsafe || b == make_const(t, int64_t{-1});
  return select(unsafe, make_const(t, int64_t{1}), b);
}

// Integer Div as numpy computes it where C would trap: x / 0 is 0, x / -1 is -x (wrapping
// at the type's minimum). ONNX leaves both undefined; a model must not end the process.
te::Tensor integer_divide(const te::Tensor& a, const te::Tensor& b, const std::string& name) {
  Shape out = broadcast_shapes({static_shape(a), a.dtype()}, {static_shape(b), b.dtype()});
  return te::compute(
      shape_exprs(out),
      [&](const std::vector<Var>& i) {
        Expr x = broadcast_load(a, i);
        Expr y = broadcast_load(b, i);
        DataType t = y.dtype();
        Expr zero = make_const(t, int64_t{0});
        Expr q = x / trap_free_divisor(y);
        if (t.is_int()) q = select(y == make_const(t, int64_t{-1}), zero - x, q);
        return select(y == zero, zero, q);
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
    if (op_type == "Div") {
      if (a.dtype().is_integer()) return std::vector<te::Tensor>{integer_divide(a, b, name)};
      return std::vector<te::Tensor>{ops::divide(a, b, name)};
    }
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

// ---------------------------------------------------------------- more unary math, activations

// out = f(x) per element; the attributes are read from the node.
GraphOp map_op(const std::string& op_type, bool float_only, ElementFn f) {
  return {op_type, OpPattern::Elementwise, float_only ? infer_float_unary : infer_same_type,
          map_elements(std::move(f))};
}

Expr constant(const Expr& like, double value) {
  return make_const(like.dtype(), value);
}

Expr float_attr(const Node& node, const Expr& like, const std::string& name, double fallback) {
  return constant(like, node.attrs.get_float_or(name, fallback));
}

Expr zero(const Expr& like) {
  return make_const(like.dtype(), int64_t{0});
}

// ONNX's Round: halves to even (numpy's rint). x - floor(x) is exact, so the comparisons
// with 1/2 are too (floor(x + 1/2) is not: 0.49999997f + 0.5f rounds to 1). Infinities and
// NaN come back as they are.
Expr round_half_even(const Expr& x) {
  Expr down = te::floor(x);
  Expr fraction = x - down;
  Expr up = down + constant(x, 1.0);
  Expr half = constant(x, 0.5);
  Expr down_is_even = te::floor(down * half) * constant(x, 2.0) == down;
  return select(fraction > half, up, select(fraction < half, down, select(down_is_even, down, up)));
}

Expr absolute(const Expr& x) {
  if (x.dtype().is_float()) return te::fabs(x);
  if (x.dtype().is_int()) return select(x < zero(x), -x, x);
  return x;
}

// Softplus log(1 + e^x) without overflow: max(x, 0) + log(1 + e^-|x|).
Expr softplus(const Expr& x) {
  return max(x, zero(x)) + te::log(constant(x, 1.0) + te::exp(-te::fabs(x)));
}

std::vector<GraphOp> unary_math_ops() {
  auto one = [](const Expr& x) { return constant(x, 1.0); };
  return {
      map_op("Neg", false, [](const Node&, const Expr& x) { return -x; }),
      map_op("Abs", false, [](const Node&, const Expr& x) { return absolute(x); }),
      map_op("Reciprocal", true, [one](const Node&, const Expr& x) { return one(x) / x; }),
      map_op("Exp", true, [](const Node&, const Expr& x) { return te::exp(x); }),
      map_op("Log", true, [](const Node&, const Expr& x) { return te::log(x); }),
      map_op("Floor", true, [](const Node&, const Expr& x) { return te::floor(x); }),
      map_op("Ceil", true, [](const Node&, const Expr& x) { return te::ceil(x); }),
      map_op("Round", true, [](const Node&, const Expr& x) { return round_half_even(x); }),
      // x * 0 keeps NaN a NaN.
      map_op("Sign", false,
             [one](const Node&, const Expr& x) {
               Expr zero_or_nan = x.dtype().is_float() ? x * zero(x) : zero(x);
               Expr minus_one = x.dtype().is_uint() ? zero(x) : -one(x);
               return select(x > zero(x), one(x), select(x < zero(x), minus_one, zero_or_nan));
             }),
      map_op("Sin", true, [](const Node&, const Expr& x) { return te::sin(x); }),
      map_op("Cos", true, [](const Node&, const Expr& x) { return te::cos(x); }),
      map_op("Tan", true, [](const Node&, const Expr& x) { return te::tan(x); }),
      map_op("Asin", true, [](const Node&, const Expr& x) { return te::asin(x); }),
      map_op("Acos", true, [](const Node&, const Expr& x) { return te::acos(x); }),
      map_op("Atan", true, [](const Node&, const Expr& x) { return te::atan(x); }),
      map_op("Sinh", true, [](const Node&, const Expr& x) { return (te::exp(x) - te::exp(-x)) * constant(x, 0.5); }),
      map_op("Cosh", true, [](const Node&, const Expr& x) { return (te::exp(x) + te::exp(-x)) * constant(x, 0.5); }),
      // asinh(-x) = -asinh(x): the log of a sum, never of a difference.
      map_op("Asinh", true,
             [one](const Node&, const Expr& x) {
               Expr a = te::fabs(x);
               Expr y = te::log(a + te::sqrt(a * a + one(x)));
               return select(x < zero(x), -y, y);
             }),
      map_op("Acosh", true, [one](const Node&, const Expr& x) { return te::log(x + te::sqrt(x * x - one(x))); }),
      map_op("Atanh", true,
             [one](const Node&, const Expr& x) { return te::log((one(x) + x) / (one(x) - x)) * constant(x, 0.5); }),
      map_op("Softplus", true, [](const Node&, const Expr& x) { return softplus(x); }),
      map_op("Mish", true, [](const Node&, const Expr& x) { return x * te::tanh(softplus(x)); }),
      map_op("Softsign", true, [one](const Node&, const Expr& x) { return x / (one(x) + te::fabs(x)); }),
      map_op("LeakyRelu", true,
             [](const Node& node, const Expr& x) {
               return select(x < zero(x), float_attr(node, x, "alpha", 0.01) * x, x);
             }),
      map_op("Elu", true,
             [one](const Node& node, const Expr& x) {
               return select(x < zero(x), float_attr(node, x, "alpha", 1.0) * (te::exp(x) - one(x)), x);
             }),
      map_op("Selu", true,
             [one](const Node& node, const Expr& x) {
               Expr alpha = float_attr(node, x, "alpha", 1.67326319217681884765625);
               Expr gamma = float_attr(node, x, "gamma", 1.05070102214813232421875);
               return gamma * select(x <= zero(x), alpha * (te::exp(x) - one(x)), x);
             }),
      map_op("Celu", true,
             [one](const Node& node, const Expr& x) {
               Expr alpha = float_attr(node, x, "alpha", 1.0);
               return max(zero(x), x) + min(zero(x), alpha * (te::exp(x / alpha) - one(x)));
             }),
      map_op("HardSigmoid", true,
             [one](const Node& node, const Expr& x) {
               Expr y = float_attr(node, x, "alpha", 0.2) * x + float_attr(node, x, "beta", 0.5);
               return max(zero(x), min(one(x), y));
             }),
      map_op("HardSwish", true,
             [one](const Node&, const Expr& x) {
               return x * max(zero(x), min(one(x), x * constant(x, 1.0 / 6.0) + constant(x, 0.5)));
             }),
      map_op("ThresholdedRelu", true,
             [](const Node& node, const Expr& x) { return select(x > float_attr(node, x, "alpha", 1.0), x, zero(x)); }),
      map_op("Shrink", false,
             [](const Node& node, const Expr& x) {
               Expr bias = float_attr(node, x, "bias", 0.0);
               Expr lambd = float_attr(node, x, "lambd", 0.5);
               return select(x < -lambd, x + bias, select(x > lambd, x - bias, zero(x)));
             }),
  };
}

// ---------------------------------------------------------------- Mod and PRelu

// Mod: fmod=0 (integers only) takes the divisor's sign, as Python's %; fmod=1 the
// dividend's, as C's fmod. A floating-point Mod needs fmod=1 (the ONNX spec) and is
// computed exactly as x - trunc(x / y) * y only where that is exact: Temper refuses it.
std::vector<TensorType> infer_mod(const Graph& graph, const Node& node) {
  std::vector<TensorType> out = infer_binary(graph, node);
  int64_t fmod = node.attrs.get_int_or("fmod", 0);
  if (fmod != 0 && fmod != 1) throw UserError(str("attribute fmod=", fmod, " is neither 0 nor 1"));
  if (out[0].dtype.is_float()) {
    if (fmod == 0) throw UserError(str("fmod=0 on ", out[0].dtype, " inputs; floating-point Mod needs fmod=1"));
    throw UnsupportedError(
        str("floating-point Mod (", out[0].dtype, ") is not supported; Temper computes integer Mod"));
  }
  if (!out[0].dtype.is_integer()) throw UserError(str("Mod of ", out[0].dtype, " inputs; it takes numbers"));
  return out;
}

std::vector<te::Tensor> compute_mod(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  Shape out = broadcast_shapes({static_shape(in[0]), in[0].dtype()}, {static_shape(in[1]), in[1].dtype()});
  bool c_fmod = node.attrs.get_int_or("fmod", 0) == 1;
  return {te::compute(
      shape_exprs(out),
      [&](const std::vector<Var>& i) {
        Expr a = broadcast_load(in[0], i);
        Expr b = broadcast_load(in[1], i);
        if (b.dtype().is_integer()) b = trap_free_divisor(b);  // x mod 1 is 0, as numpy's x mod 0
        return c_fmod ? a % b : floormod(a, b);
      },
      output_name(graph, node, 0))};
}

// PRelu: x where x >= 0, slope * x elsewhere; slope broadcasts to x.
std::vector<TensorType> infer_prelu(const Graph& graph, const Node& node) {
  check_arity(node, 2, 2);
  const TensorType& x = input_type(graph, node, 0, "X");
  const TensorType& slope = input_type(graph, node, 1, "slope");
  check_same_dtype(x, slope, "input X", "input slope");
  // Before opset 7 a slope of X's channels broadcasts over the dimensions after them.
  if (graph.opset < 7 && slope.shape.size() == 1 && x.shape.size() > 2 && slope.shape[0] == x.shape[1]) return {x};
  if (broadcast_shapes(x, slope) != x.shape) {
    throw UserError(str("input slope ", slope.to_string(), " does not broadcast to X ", x.to_string()));
  }
  return {x};
}

std::vector<te::Tensor> compute_prelu(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  te::Tensor slope = in[1];
  Shape xs = static_shape(x);
  Shape ss = static_shape(slope);
  std::string name = output_name(graph, node, 0);
  if (graph.opset < 7 && ss.size() == 1 && xs.size() > 2 && ss[0] == xs[1]) {
    Shape channels(xs.size() - 1, 1);
    channels[0] = ss[0];
    slope = ops::reshape(slope, channels, name + "_slope");
  }
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        Expr v = x({i.begin(), i.end()});
        return select(v < zero(v), broadcast_load(slope, i) * v, v);
      },
      name)};
}

// ---------------------------------------------------------------- Max, Min, Sum, Mean

// Any number of inputs (at least one) of one dtype, broadcast together.
std::vector<TensorType> infer_variadic(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1 << 20);
  TensorType out = input_type(graph, node, 0, "data_0");
  for (size_t k = 1; k < node.inputs.size(); ++k) {
    const TensorType& t = input_type(graph, node, static_cast<int>(k), str("data_", k));
    check_same_dtype(out, t, "input data_0", str("input data_", k));
    out.shape = broadcast_shapes(out, t);
  }
  if (node.op == "Mean") check_float(out, "the inputs");
  if (out.dtype.is_bool()) throw UserError(str(node.op, " of bool inputs; it takes numbers"));
  return {out};
}

GraphOp variadic_op(const std::string& op_type) {
  GraphOp op{op_type, OpPattern::Broadcast, infer_variadic, nullptr};
  op.compute = [op_type](const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
    Shape out = static_shape(in[0]);
    for (size_t k = 1; k < in.size(); ++k) {
      out = broadcast_shapes({out, in[0].dtype()}, {static_shape(in[k]), in[k].dtype()});
    }
    return std::vector<te::Tensor>{te::compute(
        shape_exprs(out),
        [&](const std::vector<Var>& i) {
          Expr acc = broadcast_load(in[0], i);
          for (size_t k = 1; k < in.size(); ++k) {
            Expr v = broadcast_load(in[k], i);
            if (op_type == "Max") {
              acc = max(acc, v);
            } else if (op_type == "Min") {
              acc = min(acc, v);
            } else {
              acc = acc + v;
            }
          }
          if (op_type == "Mean") acc = acc * make_const(acc.dtype(), 1.0 / static_cast<double>(in.size()));
          return acc;
        },
        output_name(graph, node, 0))};
  };
  return op;
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

std::vector<TensorType> infer_cast(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  const TensorType& x = input_type(graph, node, 0, "input");
  return {{x.shape, onnx_dtype(node.attrs.get_int("to"), "to")}};
}

// x as dtype `to`; x itself when it has that dtype already.
te::Tensor cast_tensor(const te::Tensor& x, DataType to, const std::string& name) {
  if (to == x.dtype()) return x;
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        Expr v = x({i.begin(), i.end()});
        // To bool is "not zero", not a truncation to the lowest bit.
        if (to.is_bool()) return v != make_const(x.dtype(), int64_t{0});
        return cast(to, v);
      },
      name);
}

std::vector<te::Tensor> compute_cast(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  return {cast_tensor(in[0], onnx_dtype(node.attrs.get_int("to"), "to"), output_name(graph, node, 0))};
}

// CastLike: input cast to target_type's dtype.
std::vector<TensorType> infer_cast_like(const Graph& graph, const Node& node) {
  check_arity(node, 2, 2);
  return {{input_type(graph, node, 0, "input").shape, input_type(graph, node, 1, "target_type").dtype}};
}

std::vector<te::Tensor> compute_cast_like(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  return {cast_tensor(in[0], in[1].dtype(), output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- Dropout

// Dropout in inference: the output is the input and the optional mask all true. Training
// (attribute is_test=0 before opset 7; input training_mode, when a constant true, from 12)
// is refused: Temper runs inference.
std::vector<TensorType> infer_dropout(const Graph& graph, const Node& node) {
  check_arity(node, 1, 3, 2);
  const TensorType& x = input_type(graph, node, 0, "data");
  bool training = graph.opset < 7 && node.attrs.get_int_or("is_test", 0) == 0 && node.outputs.size() > 1;
  if (has_input(node, 2)) {
    const NDArray& mode = constant_input(graph, node, 2, "training_mode");
    training = mode.size() == 1 && mode.get(0) != 0;
  }
  if (training) throw UnsupportedError("training mode is not supported; Temper runs inference");
  std::vector<TensorType> out = {x, {x.shape, graph.opset < 10 ? x.dtype : DataType::boolean()}};
  out.resize(node.outputs.size());
  return out;
}

std::vector<te::Tensor> compute_dropout(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  std::vector<te::Tensor> out = {in[0]};
  if (node.outputs.size() > 1) {
    DataType mask = graph.opset < 10 ? in[0].dtype() : DataType::boolean();
    out.push_back(te::compute(
        in[0].shape(), [&](const std::vector<Var>&) { return make_const(mask, int64_t{1}); },
        output_name(graph, node, 1)));
  }
  return out;
}

}  // namespace

std::vector<GraphOp> elementwise_graph_ops() {
  std::vector<GraphOp> ops = {
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
      {"CastLike", OpPattern::Elementwise, infer_cast_like, compute_cast_like},
      {"Dropout", OpPattern::Elementwise, infer_dropout, compute_dropout},
      {"Mod", OpPattern::Broadcast, infer_mod, compute_mod},
      {"PRelu", OpPattern::Broadcast, infer_prelu, compute_prelu},
      variadic_op("Max"),
      variadic_op("Min"),
      variadic_op("Sum"),
      variadic_op("Mean"),
  };
  std::vector<GraphOp> math = unary_math_ops();
  ops.insert(ops.end(), math.begin(), math.end());
  return ops;
}

}  // namespace temper::graph::detail
