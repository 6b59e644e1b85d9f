// The ONNX ops that move or describe data: Reshape, Flatten, Transpose, Concat, Pad,
// Constant, Shape, Gather, Unsqueeze, Squeeze and Slice.
//
// What decides an output shape must be known at compile time: Reshape's shape, Pad's
// pads (an input from opset 11), Unsqueeze's and Squeeze's axes (inputs from opset 13)
// and Slice's starts, ends, axes and steps (inputs from opset 10) are constant inputs.
// Gather's indices and Pad's constant_value may be computed. Constant and Shape are
// evaluated on the host (GraphOp::evaluate): their outputs never depend on input data.
#include <algorithm>
#include <numeric>

#include "compiler/graph/graph_ops_common.h"
#include "compiler/ops/shape.h"
#include "compiler/ops/transform.h"

namespace temper::graph::detail {

namespace {

// An op that only rearranges elements into the shape its infer gives.
GraphOp reshaping_op(const std::string& op_type,
                     std::function<std::vector<TensorType>(const Graph& graph, const Node& node)> infer) {
  GraphOp op{op_type, OpPattern::Injective, infer, nullptr};
  op.compute = [infer](const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
    Shape shape = infer(graph, node)[0].shape;
    return std::vector<te::Tensor>{ops::reshape(in[0], shape, output_name(graph, node, 0))};
  };
  return op;
}

// ---------------------------------------------------------------- Reshape and Flatten

std::vector<TensorType> infer_reshape(const Graph& graph, const Node& node) {
  check_arity(node, 2, 2);
  const TensorType& x = input_type(graph, node, 0, "data");
  std::vector<int64_t> spec = constant_ints(graph, node, 1, "shape");
  bool allow_zero = node.attrs.get_int_or("allowzero", 0) != 0;
  Shape out;
  int inferred = -1;
  for (size_t k = 0; k < spec.size(); ++k) {
    int64_t v = spec[k];
    if (v == -1) {
      if (inferred >= 0) throw UserError(str("shape ", ints_str(spec), " has more than one -1"));
      inferred = static_cast<int>(k);
      out.push_back(1);
    } else if (v == 0 && !allow_zero) {
      // 0 copies the input's extent at the same position.
      if (k >= x.shape.size()) {
        throw UserError(str("shape ", ints_str(spec), " copies dimension ", k, " (a 0) that input ", x.to_string(),
                            " does not have"));
      }
      out.push_back(x.shape[k]);
    } else if (v < 0) {
      throw UserError(str("shape ", ints_str(spec), " has the extent ", v, "; only -1 is allowed below 0"));
    } else {
      out.push_back(v);
    }
  }
  if (inferred >= 0) {
    int64_t known = ops::num_elements(out);
    if (known == 0 || x.size() % known != 0) {
      throw UserError(str("shape ", ints_str(spec), " cannot hold the ", x.size(), " elements of ", x.to_string()));
    }
    out[inferred] = x.size() / known;
  }
  if (ops::num_elements(out) != x.size()) {
    throw UserError(str("shape ", ints_str(spec), " (", ops::num_elements(out), " elements) cannot hold the ", x.size(),
                        " elements of ", x.to_string()));
  }
  return {{out, x.dtype}};
}

// [prod(shape[:axis]), prod(shape[axis:])]; axis may equal the rank.
std::vector<TensorType> infer_flatten(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  const TensorType& x = input_type(graph, node, 0, "input");
  int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = node.attrs.get_int_or("axis", 1);
  if (axis < -rank || axis > rank) {
    throw UserError(
        str("axis ", axis, " is out of range for ", x.to_string(), " (accepted: ", -rank, " to ", rank, ")"));
  }
  if (axis < 0) axis += rank;
  Shape outer(x.shape.begin(), x.shape.begin() + axis);
  Shape inner(x.shape.begin() + axis, x.shape.end());
  return {{{ops::num_elements(outer), ops::num_elements(inner)}, x.dtype}};
}

// ---------------------------------------------------------------- Transpose and Concat

std::vector<int64_t> transpose_perm(const Node& node, size_t rank) {
  std::vector<int64_t> reversed(rank);
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  std::vector<int64_t> perm = node.attrs.get_ints_or("perm", reversed);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  if (sorted != identity) {
    throw UserError(str("perm ", ints_str(perm), " is not a permutation of the ", rank, " dimensions"));
  }
  return perm;
}

std::vector<TensorType> infer_transpose(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  const TensorType& x = input_type(graph, node, 0, "data");
  std::vector<int64_t> perm = transpose_perm(node, x.shape.size());
  Shape out;
  for (int64_t d : perm) out.push_back(x.shape[d]);
  return {{out, x.dtype}};
}

std::vector<TensorType> infer_concat(const Graph& graph, const Node& node) {
  check_arity(node, 1, std::numeric_limits<int>::max());
  const TensorType& first = input_type(graph, node, 0, "input");
  if (first.shape.empty()) throw UserError("inputs must have at least 1 dimension");
  int axis = normalize_axis(node.attrs.get_int("axis"), static_cast<int64_t>(first.shape.size()), "axis");
  Shape out = first.shape;
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    const TensorType& t = input_type(graph, node, static_cast<int>(i), "input");
    check_same_dtype(first, t, "input 0", str("input ", i));
    bool fits = t.shape.size() == first.shape.size();
    for (size_t d = 0; fits && d < t.shape.size(); ++d)
      fits = static_cast<int>(d) == axis || t.shape[d] == first.shape[d];
    if (!fits) {
      throw UserError(str("input ", i, " ", t.to_string(), " does not fit input 0 ", first.to_string(),
                          ": all extents but axis ", axis, "'s must be equal"));
    }
    out[axis] += t.shape[axis];
  }
  return {{out, first.dtype}};
}

// ---------------------------------------------------------------- Pad

// Pads before and after each dimension: the attribute pads before opset 11, the constant
// input pads from 11, both [x1_begin, x2_begin, ..., x1_end, x2_end]; from opset 18 the
// optional constant input axes names the dimensions pads covers (all when absent).
// Modes: constant, reflect, edge, and wrap from opset 19 (the other end's elements).
struct PadAmounts {
  std::vector<int64_t> before, after;
};

PadAmounts pad_amounts(const Graph& graph, const Node& node, const TensorType& x) {
  std::string mode = node.attrs.get_string_or("mode", "constant");
  bool wrap = graph.opset >= 19 && mode == "wrap";
  if (mode != "constant" && mode != "reflect" && mode != "edge" && !wrap) {
    throw UserError(str("mode '", mode, "' is none of 'constant', 'reflect', 'edge' and (from opset 19) 'wrap'"));
  }
  size_t rank = x.shape.size();
  std::vector<int64_t> pads;
  if (graph.opset < 11) {
    if (!node.attrs.has("pads")) throw UserError("attribute pads is missing");
    pads = node.attrs.get_ints_or("pads", {});
  } else {
    pads = constant_ints(graph, node, 1, "pads");
  }
  std::vector<int> axes;
  if (graph.opset >= 18 && has_input(node, 3)) {
    for (int64_t a : constant_ints(graph, node, 3, "axes")) axes.push_back(normalize_axis(a, rank, "axes entry"));
  } else {
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int>(d));
  }
  size_t n = axes.size();
  if (pads.size() != 2 * n) {
    throw UserError(str("pads ", ints_str(pads), " must have 2 x ", n, " entries for ",
                        n == rank ? str("input ", x.to_string()) : str(n, " axes")));
  }
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; })) {
    throw UnsupportedError(str("pads ", ints_str(pads), " are negative; cropping by Pad is not supported (use Slice)"));
  }
  PadAmounts p{std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 0)};
  for (size_t k = 0; k < n; ++k) {
    p.before[axes[k]] += pads[k];
    p.after[axes[k]] += pads[k + n];
  }
  for (size_t d = 0; d < rank && mode != "constant"; ++d) {
    int64_t most = std::max(p.before[d], p.after[d]);
    if ((mode == "reflect" && most >= x.shape[d]) || (wrap && most > x.shape[d])) {
      throw UserError(str("pads ", ints_str(pads), " ", mode, " past the ends of dimension ", d, " of ", x.to_string(),
                          ": mode '", mode, "' pads ", wrap ? "at most" : "less than", " the extent"));
    }
  }
  return p;
}

std::vector<TensorType> infer_pad(const Graph& graph, const Node& node) {
  check_arity(node, 1, graph.opset < 11 ? 1 : graph.opset < 18 ? 3 : 4);
  const TensorType& x = input_type(graph, node, 0, "data");
  PadAmounts p = pad_amounts(graph, node, x);
  if (has_input(node, 2)) {
    const TensorType& value = input_type(graph, node, 2, "constant_value");
    check_same_dtype(x, value, "input data", "constant_value");
    if (value.size() != 1) throw UserError(str("constant_value is ", value.to_string(), ", not a scalar"));
  }
  Shape out = x.shape;
  for (size_t d = 0; d < out.size(); ++d) out[d] += p.before[d] + p.after[d];
  return {{out, x.dtype}};
}

// Modes reflect (the element mirrored at the edge, the edge itself not repeated), edge
// (the edge element repeated) and wrap (the other end's element) read x at a folded index.
te::Tensor pad_from_inside(const te::Tensor& x, const PadAmounts& p, const std::string& mode, const std::string& name) {
  Shape shape = static_shape(x);
  Shape out = shape;
  for (size_t d = 0; d < out.size(); ++d) out[d] += p.before[d] + p.after[d];
  return te::compute(
      shape_exprs(out),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> source;
        for (size_t d = 0; d < shape.size(); ++d) {
          Expr j = i[d] - ops::index_const(p.before[d]);
          Expr last = ops::index_const(shape[d] - 1);
          if (mode == "reflect") {
            j = select(j < ops::index_const(0), ops::index_const(0) - j, j);
            j = select(j > last, last * ops::index_const(2) - j, j);
          } else if (mode == "wrap") {
            Expr extent = ops::index_const(shape[d]);
            j = select(j < ops::index_const(0), j + extent, select(j > last, j - extent, j));
          }
          // For reflect and wrap a no-op (the pads are at most the extent) that shows the
          // bounds check the index stays inside.
          source.push_back(min(max(j, ops::index_const(0)), last));
        }
        return x(source);
      },
      name);
}

std::vector<te::Tensor> compute_pad(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  PadAmounts p = pad_amounts(graph, node, input_type(graph, node, 0, "data"));
  std::string mode = node.attrs.get_string_or("mode", "constant");
  if (mode != "constant") return {pad_from_inside(x, p, mode, output_name(graph, node, 0))};
  Expr value = make_const(x.dtype(), graph.opset < 11 ? node.attrs.get_float_or("value", 0.0) : 0.0);
  if (has_input(node, 2)) value = in[2](std::vector<Expr>(in[2].ndim(), ops::index_const(0)));
  return {ops::pad(x, p.before, p.after, value, output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- Constant and Shape

NDArray constant_value(const Node& node) {
  const auto& attrs = node.attrs.all();
  if (attrs.size() != 1) throw UserError(str("needs exactly one value attribute, has ", attrs.size()));
  const auto& [name, value] = *attrs.begin();
  if (name == "value") return node.attrs.get_tensor("value");
  if (name == "value_float" || name == "value_floats") {
    const auto* list = std::get_if<std::vector<double>>(&value);
    if (name == "value_floats" && !list) throw UserError("attribute value_floats is not a list of floats");
    std::vector<double> floats = list ? *list : std::vector<double>{node.attrs.get_float_or(name, 0)};
    NDArray a = NDArray::empty(name == "value_float" ? Shape{} : Shape{static_cast<int64_t>(floats.size())},
                               DataType::float32());
    for (size_t k = 0; k < floats.size(); ++k) a.set(static_cast<int64_t>(k), floats[k]);
    return a;
  }
  if (name == "value_int" || name == "value_ints") {
    std::vector<int64_t> ints =
        name == "value_int" ? std::vector<int64_t>{node.attrs.get_int(name)} : node.attrs.get_ints_or(name, {});
    NDArray a =
        NDArray::empty(name == "value_int" ? Shape{} : Shape{static_cast<int64_t>(ints.size())}, DataType::int64());
    std::copy(ints.begin(), ints.end(), a.data_as<int64_t>());
    return a;
  }
  throw UnsupportedError(
      str("attribute ", name, " is not supported; Temper takes value, value_float(s) and value_int(s)"));
}

// The dimensions Shape reports: [start, end) of the input's, clamped (start and end are
// opset 15's attributes).
Shape shape_slice(const Node& node, const TensorType& x) {
  int64_t rank = static_cast<int64_t>(x.shape.size());
  auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  int64_t start = clamp(node.attrs.get_int_or("start", 0));
  int64_t end = clamp(node.attrs.get_int_or("end", rank));
  return end > start ? Shape(x.shape.begin() + start, x.shape.begin() + end) : Shape{};
}

std::vector<TensorType> infer_shape(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  const TensorType& x = input_type(graph, node, 0, "data");
  Shape dims = shape_slice(node, x);
  if (dims.empty())
    throw UnsupportedError(str("reports no dimension of ", x.to_string(), "; Temper has no empty tensors"));
  return {{{static_cast<int64_t>(dims.size())}, DataType::int64()}};
}

std::vector<NDArray> evaluate_shape(const Graph& graph, const Node& node) {
  Shape dims = shape_slice(node, input_type(graph, node, 0, "data"));
  NDArray a = NDArray::empty({static_cast<int64_t>(dims.size())}, DataType::int64());
  std::copy(dims.begin(), dims.end(), a.data_as<int64_t>());
  return {a};
}

// The extents as a chain of selects on the index: Shape compiles like any op when it is
// not folded.
std::vector<te::Tensor> compute_shape(const Graph& graph, const Node& node, const std::vector<te::Tensor>&) {
  Shape dims = shape_slice(node, input_type(graph, node, 0, "data"));
  return {te::compute(
      shape_exprs({static_cast<int64_t>(dims.size())}),
      [&](Var i) {
        Expr value = make_const(DataType::int64(), dims.back());
        for (size_t k = dims.size() - 1; k-- > 0;) {
          value = select(i == ops::index_const(static_cast<int64_t>(k)), make_const(DataType::int64(), dims[k]), value);
        }
        return value;
      },
      output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- Gather

std::vector<TensorType> infer_gather(const Graph& graph, const Node& node) {
  check_arity(node, 2, 2);
  const TensorType& data = input_type(graph, node, 0, "data");
  const TensorType& indices = input_type(graph, node, 1, "indices");
  if (indices.dtype != DataType::int32() && indices.dtype != DataType::int64()) {
    throw UserError(str("input indices is ", indices.to_string(), "; it must be int32 or int64"));
  }
  if (data.shape.empty()) throw UserError("input data is a scalar; Gather needs at least 1 dimension");
  int axis = normalize_axis(node.attrs.get_int_or("axis", 0), static_cast<int64_t>(data.shape.size()), "axis");
  const Value& index_value = graph.value(node.inputs[1]);
  if (index_value.constant) {
    int64_t extent = data.shape[axis];
    for (int64_t k = 0; k < index_value.constant->size(); ++k) {
      auto index = static_cast<int64_t>(index_value.constant->get(k));
      if (index < -extent || index >= extent) {
        throw UserError(str("index ", index, " is out of range for axis ", axis, " of ", data.to_string()));
      }
    }
  }
  Shape out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  return {{out, data.dtype}};
}

// out[i_outer, j, i_inner] = data[i_outer, indices[j], i_inner]; a negative index counts
// from the end, and one out of range reads the nearest element rather than outside.
std::vector<te::Tensor> compute_gather(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const te::Tensor& data = in[0];
  const te::Tensor& indices = in[1];
  Shape shape = static_shape(data);
  int axis = normalize_axis(node.attrs.get_int_or("axis", 0), static_cast<int64_t>(shape.size()), "axis");
  int index_rank = indices.ndim();
  Shape out = infer_gather(graph, node)[0].shape;
  return {te::compute(
      shape_exprs(out),
      [&](const std::vector<Var>& i) {
        Expr index =
            cast(DataType::int32(), indices(std::vector<Expr>(i.begin() + axis, i.begin() + axis + index_rank)));
        Expr extent = ops::index_const(shape[axis]);
        index = select(index < ops::index_const(0), index + extent, index);
        index = min(max(index, ops::index_const(0)), ops::index_const(shape[axis] - 1));
        std::vector<Expr> source(i.begin(), i.begin() + axis);
        source.push_back(index);
        source.insert(source.end(), i.begin() + axis + index_rank, i.end());
        return data(source);
      },
      output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- Unsqueeze and Squeeze

// The axes attribute before opset 13, the constant input axes from 13 (optional for
// Squeeze; absent: nullopt).
std::optional<std::vector<int64_t>> axes_of(const Graph& graph, const Node& node) {
  if (graph.opset < 13) {
    if (!node.attrs.has("axes")) return std::nullopt;
    return node.attrs.get_ints_or("axes", {});
  }
  if (!has_input(node, 1)) return std::nullopt;
  return constant_ints(graph, node, 1, "axes");
}

// Flags for the dimensions axes names, in [0, rank); UserError for repeats.
std::vector<bool> axis_flags(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<bool> flags(rank, false);
  for (int64_t a : axes) {
    int d = normalize_axis(a, rank, "axes entry");
    if (flags[d]) throw UserError(str("axes ", ints_str(axes), " name dimension ", d, " twice"));
    flags[d] = true;
  }
  return flags;
}

std::vector<TensorType> infer_unsqueeze(const Graph& graph, const Node& node) {
  check_arity(node, 1, graph.opset < 13 ? 1 : 2);
  const TensorType& x = input_type(graph, node, 0, "data");
  std::optional<std::vector<int64_t>> axes = axes_of(graph, node);
  if (!axes) throw UserError(graph.opset < 13 ? "attribute axes is missing" : "input 1 (axes) is missing");
  int64_t rank = static_cast<int64_t>(x.shape.size() + axes->size());
  std::vector<bool> inserted = axis_flags(*axes, rank);
  Shape out;
  auto next = x.shape.begin();
  for (int64_t d = 0; d < rank; ++d) out.push_back(inserted[d] ? 1 : *next++);
  return {{out, x.dtype}};
}

std::vector<TensorType> infer_squeeze(const Graph& graph, const Node& node) {
  check_arity(node, 1, graph.opset < 13 ? 1 : 2);
  const TensorType& x = input_type(graph, node, 0, "data");
  int64_t rank = static_cast<int64_t>(x.shape.size());
  std::optional<std::vector<int64_t>> axes = axes_of(graph, node);
  std::vector<bool> removed(rank);
  if (axes) {
    removed = axis_flags(*axes, rank);
    for (int64_t d = 0; d < rank; ++d) {
      if (removed[d] && x.shape[d] != 1) {
        throw UserError(
            str("axes ", ints_str(*axes), " name dimension ", d, " of ", x.to_string(), ", whose extent is not 1"));
      }
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) removed[d] = x.shape[d] == 1;
  }
  Shape out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!removed[d]) out.push_back(x.shape[d]);
  }
  return {{out, x.dtype}};
}

// ---------------------------------------------------------------- Slice

// Per dimension of the input: the first element read, the step and the output extent.
struct SliceSpec {
  Shape start, step, extent;
};

// starts and ends count from the back when negative, then clamp to the dimension
// ([0, dim] for a positive step; [0, dim - 1] and [-1, dim - 1] for a negative one).
SliceSpec slice_spec(const Graph& graph, const Node& node, const TensorType& x) {
  int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (graph.opset < 10) {
    check_arity(node, 1, 1);
    if (!node.attrs.has("starts") || !node.attrs.has("ends"))
      throw UserError("attributes starts and ends are required");
    starts = node.attrs.get_ints_or("starts", {});
    ends = node.attrs.get_ints_or("ends", {});
    axes = node.attrs.get_ints_or("axes", {});
  } else {
    check_arity(node, 3, 5);
    starts = constant_ints(graph, node, 1, "starts");
    ends = constant_ints(graph, node, 2, "ends");
    if (has_input(node, 3)) axes = constant_ints(graph, node, 3, "axes");
    if (has_input(node, 4)) steps = constant_ints(graph, node, 4, "steps");
  }
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    throw UserError(str("starts ", ints_str(starts), ", ends ", ints_str(ends), ", axes ", ints_str(axes),
                        " and steps ", ints_str(steps), " must have one length"));
  }
  SliceSpec s{Shape(rank, 0), Shape(rank, 1), x.shape};
  axis_flags(axes, rank);  // in range, no repeats
  for (size_t k = 0; k < axes.size(); ++k) {
    int d = normalize_axis(axes[k], rank, "axes entry");
    int64_t dim = x.shape[d];
    int64_t step = steps[k];
    if (step == 0) throw UserError(str("steps ", ints_str(steps), " has a 0"));
    int64_t start = starts[k] < 0 ? starts[k] + dim : starts[k];
    int64_t end = ends[k] < 0 ? ends[k] + dim : ends[k];
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    int64_t distance = step > 0 ? end - start : start - end;
    int64_t magnitude = step > 0 ? step : -step;
    s.start[d] = start;
    s.step[d] = step;
    s.extent[d] = std::max<int64_t>(0, (distance + magnitude - 1) / magnitude);
  }
  return s;
}

std::vector<TensorType> infer_slice(const Graph& graph, const Node& node) {
  const TensorType& x = input_type(graph, node, 0, "data");
  return {{slice_spec(graph, node, x).extent, x.dtype}};
}

std::vector<te::Tensor> compute_slice(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  SliceSpec s = slice_spec(graph, node, input_type(graph, node, 0, "data"));
  return {te::compute(
      shape_exprs(s.extent),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> source;
        for (size_t d = 0; d < i.size(); ++d) source.push_back(ops::plus(ops::times(i[d], s.step[d]), s.start[d]));
        return x(source);
      },
      output_name(graph, node, 0))};
}

}  // namespace

std::vector<GraphOp> shape_graph_ops() {
  GraphOp constant{"Constant", OpPattern::Opaque,
                   [](const Graph&, const Node& node) {
                     check_arity(node, 0, 0);
                     NDArray value = constant_value(node);
                     return std::vector<TensorType>{{value.shape(), value.dtype()}};
                   },
                   [](const Graph&, const Node&, const std::vector<te::Tensor>&) -> std::vector<te::Tensor> {
                     throw UserError("a Constant is evaluated (GraphOp::evaluate), not compiled");
                   }};
  constant.evaluate = [](const Graph&, const Node& node) { return std::vector<NDArray>{constant_value(node)}; };
  GraphOp shape{"Shape", OpPattern::Opaque, infer_shape, compute_shape};
  shape.evaluate = evaluate_shape;
  return {
      reshaping_op("Reshape", infer_reshape),
      reshaping_op("Flatten", infer_flatten),
      reshaping_op("Unsqueeze", infer_unsqueeze),
      reshaping_op("Squeeze", infer_squeeze),
      {"Transpose", OpPattern::Injective, infer_transpose,
       [](const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
         std::vector<int64_t> perm = transpose_perm(node, in[0].ndim());
         return std::vector<te::Tensor>{ops::transpose(in[0], perm, output_name(graph, node, 0))};
       }},
      {"Concat", OpPattern::Injective, infer_concat,
       [](const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
         int64_t axis = node.attrs.get_int("axis");
         return std::vector<te::Tensor>{ops::concat(in, axis, output_name(graph, node, 0))};
       }},
      {"Pad", OpPattern::Injective, infer_pad, compute_pad},
      {"Gather", OpPattern::Injective, infer_gather, compute_gather},
      {"Slice", OpPattern::Injective, infer_slice, compute_slice},
      constant,
      shape,
  };
}

}  // namespace temper::graph::detail
