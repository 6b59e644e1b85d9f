// The ONNX ops that make tensors or move their elements by index, beside those of
// graph_ops_shape.cpp: ConstantOfShape, EyeLike, Range, Size, NonZero, Expand, Tile, Split,
// Trilu, DepthToSpace, SpaceToDepth, GatherElements, GatherND, ScatterND, ScatterElements
// (and opsets 9-10's Scatter, the same op) and OneHot.
//
// Output shapes are static in Temper: the inputs that fix one (ConstantOfShape's shape,
// Expand's shape, Tile's repeats, Split's split, Range's start, limit and delta, NonZero's
// X) must be constants, as they are once Shape -> Gather -> Concat chains fold.
#include <cmath>
#include <functional>
#include <utility>

#include "compiler/graph/graph_ops_common.h"
#include "compiler/ops/shape.h"

namespace temper::graph::detail {

namespace {

// ---------------------------------------------------------------- ConstantOfShape

// The fill value: attribute value, a one-element tensor; float 0 when absent.
NDArray fill_value(const Node& node) {
  if (!node.attrs.has("value")) {
    NDArray zero = NDArray::empty({}, DataType::float32());
    zero.set(0, 0.0);
    return zero;
  }
  NDArray value = node.attrs.get_tensor("value");
  if (value.size() != 1) {
    throw UserError(str("attribute value has ", value.size(), " elements; it must hold exactly one"));
  }
  return value;
}

std::vector<TensorType> infer_constant_of_shape(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  Shape shape = constant_ints(graph, node, 0, "input");
  for (int64_t extent : shape) {
    if (extent < 0) throw UserError(str("input shape ", ints_str(shape), " has a negative extent"));
  }
  return {{shape, fill_value(node).dtype()}};
}

std::vector<te::Tensor> compute_constant_of_shape(const Graph& graph, const Node& node,
                                                  const std::vector<te::Tensor>&) {
  NDArray value = fill_value(node);
  Shape shape = constant_ints(graph, node, 0, "input");
  DataType t = value.dtype();
  Expr fill = t.is_float() ? make_const(t, value.get(0)) : make_const(t, static_cast<int64_t>(value.get(0)));
  return {te::compute(
      shape_exprs(shape), [&](const std::vector<Var>&) { return fill; }, output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- Range

double scalar_of(const Graph& graph, const Node& node, int i, const std::string& role) {
  const NDArray& a = constant_input(graph, node, i, role);
  if (a.size() != 1) throw UserError(str("input ", role, " has ", a.size(), " elements; it must be a scalar"));
  return a.get(0);
}

int64_t range_count(const Graph& graph, const Node& node) {
  double start = scalar_of(graph, node, 0, "start");
  double limit = scalar_of(graph, node, 1, "limit");
  double delta = scalar_of(graph, node, 2, "delta");
  if (delta == 0) throw UserError("input delta is 0; a Range needs a step");
  return std::max<int64_t>(static_cast<int64_t>(std::ceil((limit - start) / delta)), 0);
}

std::vector<TensorType> infer_range(const Graph& graph, const Node& node) {
  check_arity(node, 3, 3);
  const TensorType& start = input_type(graph, node, 0, "start");
  for (int i : {1, 2}) {
    check_same_dtype(start, input_type(graph, node, i, i == 1 ? "limit" : "delta"), "input start",
                     i == 1 ? "input limit" : "input delta");
  }
  if (start.dtype.is_bool()) throw UserError("inputs are bool; Range takes numbers");
  return {{{range_count(graph, node)}, start.dtype}};
}

std::vector<te::Tensor> compute_range(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  DataType t = in[0].dtype();
  Expr zero = ops::index_const(0);
  return {te::compute(
      shape_exprs({range_count(graph, node)}),
      [&](Var i) {
        Expr start = in[0](std::vector<Expr>(in[0].ndim(), zero));
        Expr delta = in[2](std::vector<Expr>(in[2].ndim(), zero));
        return start + cast(t, Expr(i)) * delta;
      },
      output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- NonZero

// NonZero's output [rank, count] has as many columns as X has non-zero elements, so X must
// be a constant: the node is evaluated, never compiled. The indices of the non-zero
// elements in row-major order, one row per dimension.
std::vector<NDArray> evaluate_non_zero(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  const NDArray& x = constant_input(graph, node, 0, "X");
  Shape shape = x.shape();
  std::vector<int64_t> flat;
  for (int64_t k = 0; k < x.size(); ++k) {
    if (x.get(k) != 0) flat.push_back(k);
  }
  auto count = static_cast<int64_t>(flat.size());
  if (count == 0) {
    throw UnsupportedError(str("X ", x.dtype().to_string(), ints_str(shape),
                               " has no non-zero element, so the output would be empty: Temper has no empty tensors"));
  }
  auto rank = static_cast<int64_t>(shape.size());
  if (rank == 0) throw UnsupportedError("X is a scalar: its NonZero would be an empty [0, 1] tensor");
  NDArray out = NDArray::empty({rank, count}, DataType::int64());
  int64_t* indices = out.data_as<int64_t>();
  for (int64_t c = 0; c < count; ++c) {
    int64_t rest = flat[c];
    for (int64_t d = rank - 1; d >= 0; --d) {
      indices[d * count + c] = rest % shape[d];
      rest /= shape[d];
    }
  }
  return {out};
}

std::vector<TensorType> infer_non_zero(const Graph& graph, const Node& node) {
  return {{evaluate_non_zero(graph, node)[0].shape(), DataType::int64()}};
}

// ---------------------------------------------------------------- Size

std::vector<TensorType> infer_size(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  input_type(graph, node, 0, "data");
  return {{{}, DataType::int64()}};
}

std::vector<NDArray> evaluate_size(const Graph& graph, const Node& node) {
  NDArray a = NDArray::empty({}, DataType::int64());
  a.data_as<int64_t>()[0] = input_type(graph, node, 0, "data").size();
  return {a};
}

std::vector<te::Tensor> compute_size(const Graph& graph, const Node& node, const std::vector<te::Tensor>&) {
  int64_t size = input_type(graph, node, 0, "data").size();
  return {te::compute(
      {}, [&](const std::vector<Var>&) { return make_const(DataType::int64(), size); }, output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- Expand and Tile

std::vector<TensorType> infer_expand(const Graph& graph, const Node& node) {
  check_arity(node, 2, 2);
  const TensorType& x = input_type(graph, node, 0, "input");
  TensorType target{constant_ints(graph, node, 1, "shape"), x.dtype};
  return {{broadcast_shapes(x, target), x.dtype}};
}

std::vector<te::Tensor> compute_expand(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  Shape out = infer_expand(graph, node)[0].shape;
  return {te::compute(
      shape_exprs(out), [&](const std::vector<Var>& i) { return broadcast_load(in[0], i); },
      output_name(graph, node, 0))};
}

std::vector<int64_t> tile_repeats(const Graph& graph, const Node& node, const TensorType& x) {
  std::vector<int64_t> repeats = constant_ints(graph, node, 1, "repeats");
  if (repeats.size() != x.shape.size()) {
    throw UserError(str("input repeats ", ints_str(repeats), " has ", repeats.size(), " entries; input ", x.to_string(),
                        " has rank ", x.shape.size()));
  }
  for (int64_t r : repeats) {
    if (r < 0) throw UserError(str("input repeats ", ints_str(repeats), " has a negative entry"));
  }
  return repeats;
}

std::vector<TensorType> infer_tile(const Graph& graph, const Node& node) {
  check_arity(node, 2, 2);
  const TensorType& x = input_type(graph, node, 0, "input");
  std::vector<int64_t> repeats = tile_repeats(graph, node, x);
  Shape out = x.shape;
  for (size_t d = 0; d < out.size(); ++d) out[d] *= repeats[d];
  return {{out, x.dtype}};
}

std::vector<te::Tensor> compute_tile(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  Shape shape = static_shape(in[0]);
  Shape out = infer_tile(graph, node)[0].shape;
  return {te::compute(
      shape_exprs(out),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> source;
        for (size_t d = 0; d < shape.size(); ++d) {
          source.push_back(shape[d] == out[d] ? Expr(i[d]) : floormod(i[d], ops::index_const(shape[d])));
        }
        return in[0](source);
      },
      output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- Split

// The extents of the outputs along the axis: attribute split before opset 13, the
// constant input split from 13; equal parts when absent (the last one smaller, opset 18).
std::vector<int64_t> split_sizes(const Graph& graph, const Node& node, const TensorType& x, int axis) {
  int64_t parts = static_cast<int64_t>(node.outputs.size());
  std::vector<int64_t> sizes;
  if (graph.opset < 13) {
    sizes = node.attrs.get_ints_or("split", {});
  } else if (has_input(node, 1)) {
    sizes = constant_ints(graph, node, 1, "split");
  }
  int64_t extent = x.shape[axis];
  // From opset 18 num_outputs asks for that many parts of ceil(extent / parts), the last
  // one smaller where they do not divide.
  if (sizes.empty() && graph.opset >= 18 && node.attrs.has("num_outputs")) {
    if (node.attrs.get_int("num_outputs") != parts) {
      throw UserError(str("num_outputs=", node.attrs.get_int("num_outputs"), " but the node has ", parts, " outputs"));
    }
    int64_t part = (extent + parts - 1) / parts;
    if (part * (parts - 1) >= extent) {
      throw UserError(str("dimension ", axis, " of ", x.to_string(), " is too short for ", parts, " parts of ", part));
    }
    sizes.assign(parts - 1, part);
    sizes.push_back(extent - part * (parts - 1));
    return sizes;
  }
  if (sizes.empty()) {
    if (extent % parts != 0) {
      throw UserError(str("dimension ", axis, " of ", x.to_string(), " does not split into ", parts, " equal parts"));
    }
    return std::vector<int64_t>(parts, extent / parts);
  }
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (static_cast<int64_t>(sizes.size()) != parts || total != extent) {
    throw UserError(str("split ", ints_str(sizes), " must have one entry per output (", parts,
                        ") summing to dimension ", axis, " of ", x.to_string()));
  }
  return sizes;
}

int split_axis(const Node& node, const TensorType& x) {
  return normalize_axis(node.attrs.get_int_or("axis", 0), static_cast<int64_t>(x.shape.size()), "axis");
}

std::vector<TensorType> infer_split(const Graph& graph, const Node& node) {
  check_arity(node, 1, graph.opset < 13 ? 1 : 2, 1 << 16);
  const TensorType& x = input_type(graph, node, 0, "input");
  int axis = split_axis(node, x);
  std::vector<TensorType> out;
  for (int64_t size : split_sizes(graph, node, x, axis)) {
    Shape shape = x.shape;
    shape[axis] = size;
    out.push_back({shape, x.dtype});
  }
  return out;
}

std::vector<te::Tensor> compute_split(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const TensorType& x = input_type(graph, node, 0, "input");
  int axis = split_axis(node, x);
  std::vector<te::Tensor> out;
  int64_t offset = 0;
  std::vector<int64_t> sizes = split_sizes(graph, node, x, axis);
  for (size_t o = 0; o < sizes.size(); ++o) {
    Shape shape = x.shape;
    shape[axis] = sizes[o];
    out.push_back(te::compute(
        shape_exprs(shape),
        [&](const std::vector<Var>& i) {
          std::vector<Expr> source(i.begin(), i.end());
          source[axis] = source[axis] + ops::index_const(offset);
          return in[0](source);
        },
        output_name(graph, node, static_cast<int>(o))));
    offset += sizes[o];
  }
  return out;
}

// ---------------------------------------------------------------- Trilu

std::vector<TensorType> infer_trilu(const Graph& graph, const Node& node) {
  check_arity(node, 1, 2);
  const TensorType& x = input_type(graph, node, 0, "input");
  if (x.shape.size() < 2) throw UserError(str("input is ", x.to_string(), "; Trilu needs at least 2 dimensions"));
  if (has_input(node, 1)) scalar_of(graph, node, 1, "k");
  return {x};
}

// Upper (upper=1) keeps j - i >= k, lower keeps j - i <= k, of the last two dimensions.
std::vector<te::Tensor> compute_trilu(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  int64_t k = has_input(node, 1) ? static_cast<int64_t>(scalar_of(graph, node, 1, "k")) : 0;
  bool upper = node.attrs.get_int_or("upper", 1) != 0;
  int rank = x.ndim();
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        Expr diagonal = Expr(i[rank - 1]) - Expr(i[rank - 2]);
        Expr keep = upper ? diagonal >= ops::index_const(k) : diagonal <= ops::index_const(k);
        Expr v = x({i.begin(), i.end()});
        return select(keep, v, make_const(v.dtype(), int64_t{0}));
      },
      output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- DepthToSpace, SpaceToDepth

int64_t block_size(const Node& node) {
  int64_t b = node.attrs.get_int("blocksize");
  if (b < 1) throw UserError(str("attribute blocksize=", b, " must be at least 1"));
  return b;
}

std::vector<TensorType> infer_depth_to_space(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  const TensorType& x = input_type(graph, node, 0, "input");
  if (x.shape.size() != 4) throw UserError(str("input is ", x.to_string(), "; it must be 4-D NCHW"));
  int64_t b = block_size(node);
  std::string mode = node.attrs.get_string_or("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") throw UserError(str("attribute mode=\"", mode, "\" is neither DCR nor CRD"));
  if (x.shape[1] % (b * b) != 0) {
    throw UserError(str("input ", x.to_string(), " has channels not divisible by blocksize^2 = ", b * b));
  }
  return {{{x.shape[0], x.shape[1] / (b * b), x.shape[2] * b, x.shape[3] * b}, x.dtype}};
}

// out[n, c, h*b + i, w*b + j] = in[n, channel, h, w], the channel (i*b + j)*C + c in DCR
// mode and c*b*b + i*b + j in CRD mode.
std::vector<te::Tensor> compute_depth_to_space(const Graph& graph, const Node& node,
                                               const std::vector<te::Tensor>& in) {
  int64_t b = block_size(node);
  bool dcr = node.attrs.get_string_or("mode", "DCR") == "DCR";
  Shape out = infer_depth_to_space(graph, node)[0].shape;
  Expr bb = ops::index_const(b);
  return {te::compute(
      shape_exprs(out),
      [&](const std::vector<Var>& o) {
        Expr i = floormod(o[2], bb);
        Expr j = floormod(o[3], bb);
        Expr block = i * bb + j;
        Expr channel = dcr ? block * ops::index_const(out[1]) + o[1] : o[1] * ops::index_const(b * b) + block;
        return in[0](std::vector<Expr>{o[0], channel, floordiv(o[2], bb), floordiv(o[3], bb)});
      },
      output_name(graph, node, 0))};
}

std::vector<TensorType> infer_space_to_depth(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  const TensorType& x = input_type(graph, node, 0, "input");
  if (x.shape.size() != 4) throw UserError(str("input is ", x.to_string(), "; it must be 4-D NCHW"));
  int64_t b = block_size(node);
  if (x.shape[2] % b != 0 || x.shape[3] % b != 0) {
    throw UserError(str("input ", x.to_string(), " has a height or width not divisible by blocksize ", b));
  }
  return {{{x.shape[0], x.shape[1] * b * b, x.shape[2] / b, x.shape[3] / b}, x.dtype}};
}

// out[n, (i*b + j)*C + c, h, w] = in[n, c, h*b + i, w*b + j].
std::vector<te::Tensor> compute_space_to_depth(const Graph& graph, const Node& node,
                                               const std::vector<te::Tensor>& in) {
  int64_t b = block_size(node);
  int64_t channels = static_shape(in[0])[1];
  Shape out = infer_space_to_depth(graph, node)[0].shape;
  Expr bb = ops::index_const(b);
  Expr c = ops::index_const(channels);
  return {te::compute(
      shape_exprs(out),
      [&](const std::vector<Var>& o) {
        Expr block = floordiv(o[1], c);
        Expr i = floordiv(block, bb);
        Expr j = floormod(block, bb);
        return in[0](std::vector<Expr>{o[0], floormod(o[1], c), o[2] * bb + i, o[3] * bb + j});
      },
      output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- GatherElements

std::vector<TensorType> infer_gather_elements(const Graph& graph, const Node& node) {
  check_arity(node, 2, 2);
  const TensorType& data = input_type(graph, node, 0, "data");
  const TensorType& indices = input_type(graph, node, 1, "indices");
  if (indices.dtype != DataType::int32() && indices.dtype != DataType::int64()) {
    throw UserError(str("input indices is ", indices.to_string(), "; it must be int32 or int64"));
  }
  if (indices.shape.size() != data.shape.size()) {
    throw UserError(str("input indices ", indices.to_string(), " and data ", data.to_string(), " differ in rank"));
  }
  int axis = normalize_axis(node.attrs.get_int_or("axis", 0), static_cast<int64_t>(data.shape.size()), "axis");
  for (size_t d = 0; d < data.shape.size(); ++d) {
    if (static_cast<int>(d) != axis && indices.shape[d] > data.shape[d]) {
      throw UserError(
          str("input indices ", indices.to_string(), " is larger than data ", data.to_string(), " in dimension ", d));
    }
  }
  return {{indices.shape, data.dtype}};
}

// out[i] = data[i with its axis entry replaced by indices[i]]; a negative index counts
// from the end, one out of range reads the nearest element rather than outside.
std::vector<te::Tensor> compute_gather_elements(const Graph& graph, const Node& node,
                                                const std::vector<te::Tensor>& in) {
  const te::Tensor& data = in[0];
  const te::Tensor& indices = in[1];
  Shape shape = static_shape(data);
  int axis = normalize_axis(node.attrs.get_int_or("axis", 0), data.ndim(), "axis");
  return {te::compute(
      indices.shape(),
      [&](const std::vector<Var>& i) {
        Expr index = cast(DataType::int32(), indices({i.begin(), i.end()}));
        index = select(index < ops::index_const(0), index + ops::index_const(shape[axis]), index);
        index = min(max(index, ops::index_const(0)), ops::index_const(shape[axis] - 1));
        std::vector<Expr> source(i.begin(), i.end());
        source[axis] = index;
        return data(source);
      },
      output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- EyeLike

std::vector<TensorType> infer_eye_like(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  const TensorType& x = input_type(graph, node, 0, "input");
  if (x.shape.size() != 2) throw UserError(str("input is ", x.to_string(), "; EyeLike takes 2-D inputs"));
  return {{x.shape, node.attrs.has("dtype") ? onnx_dtype(node.attrs.get_int("dtype"), "dtype") : x.dtype}};
}

// Ones on the diagonal k places right of the main one (left for k < 0).
std::vector<te::Tensor> compute_eye_like(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  TensorType out = infer_eye_like(graph, node)[0];
  int64_t k = node.attrs.get_int_or("k", 0);
  return {te::compute(
      shape_exprs(out.shape),
      [&](Var i, Var j) {
        return select(Expr(j) - Expr(i) == ops::index_const(k), make_const(out.dtype, int64_t{1}),
                      make_const(out.dtype, int64_t{0}));
      },
      output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- OneHot

struct OneHotShape {
  int64_t depth;
  int axis;  // in the output's rank
};

OneHotShape one_hot_shape(const Graph& graph, const Node& node, const TensorType& indices) {
  double depth = scalar_of(graph, node, 1, "depth");
  if (depth < 1) throw UserError(str("input depth is ", depth, "; it must be at least 1"));
  int64_t rank = static_cast<int64_t>(indices.shape.size()) + 1;
  return {static_cast<int64_t>(depth), normalize_axis(node.attrs.get_int_or("axis", -1), rank, "axis")};
}

std::vector<TensorType> infer_one_hot(const Graph& graph, const Node& node) {
  check_arity(node, 3, 3);
  const TensorType& indices = input_type(graph, node, 0, "indices");
  const TensorType& values = input_type(graph, node, 2, "values");
  if (indices.dtype.is_bool()) throw UserError(str("input indices is ", indices.to_string(), "; it must hold numbers"));
  if (values.shape != Shape{2}) throw UserError(str("input values is ", values.to_string(), "; it must be [off, on]"));
  OneHotShape s = one_hot_shape(graph, node, indices);
  Shape out = indices.shape;
  out.insert(out.begin() + s.axis, s.depth);
  return {{out, values.dtype}};
}

// out[.., d, ..] = on where indices[..] (negative ones counting from depth) is d, else off.
std::vector<te::Tensor> compute_one_hot(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const TensorType& indices = input_type(graph, node, 0, "indices");
  OneHotShape s = one_hot_shape(graph, node, indices);
  Shape out = infer_one_hot(graph, node)[0].shape;
  return {te::compute(
      shape_exprs(out),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> at(i.begin(), i.end());
        at.erase(at.begin() + s.axis);
        Expr index = in[0](at);
        index = index.dtype().is_float() ? cast(DataType::int64(), te::floor(index)) : cast(DataType::int64(), index);
        Expr depth = make_const(DataType::int64(), s.depth);
        index = select(index < make_const(DataType::int64(), int64_t{0}), index + depth, index);
        Expr hit = index == cast(DataType::int64(), Expr(i[s.axis]));
        return select(hit, in[2](std::vector<Expr>{ops::index_const(1)}),
                      in[2](std::vector<Expr>{ops::index_const(0)}));
      },
      output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- GatherND and ScatterND

// indices[..., t] as an index into dimension `dim` of data: int32, a negative one counting
// from the end, clamped inside.
Expr nd_index(const Expr& raw, int64_t extent) {
  Expr index = cast(DataType::int32(), raw);
  index = select(index < ops::index_const(0), index + ops::index_const(extent), index);
  return min(max(index, ops::index_const(0)), ops::index_const(extent - 1));
}

// ScatterND's and ScatterElements' reduction: none, add and mul (opset 16), max and min (18).
void check_scatter_reduction(const Graph& graph, const Node& node) {
  std::string reduction = node.attrs.get_string_or("reduction", "none");
  bool known = reduction == "none" || reduction == "add" || reduction == "mul" ||
               (graph.opset >= 18 && (reduction == "max" || reduction == "min"));
  if (!known) {
    throw UserError(str("reduction=\"", reduction, "\" is not one ONNX defines at opset ", graph.opset,
                        " (none, add, mul; max and min from opset 18)"));
  }
}

// A scatter with a reduction, per output element p: the updates aimed at p reduced over
// their positions u (the axes `positions` makes), then combined with the data. Where an
// update does not aim at p the reduction's identity stands in: 0 for add, 1 for mul, the
// data itself for max and min. `aimed_update(u, p)` gives whether u aims at p and its update.
std::vector<te::Tensor> scatter_reduce(
    const te::Tensor& data, const std::string& reduction, const std::function<std::vector<IterVar>()>& positions,
    const std::function<std::pair<Expr, Expr>(const std::vector<IterVar>&, const std::vector<Var>&)>& aimed_update,
    const std::string& name) {
  Shape shape = static_shape(data);
  auto old = [&](const std::vector<Var>& p) { return data({p.begin(), p.end()}); };
  te::Tensor combined = te::compute(
      shape_exprs(shape),
      [&](const std::vector<Var>& p) {
        std::vector<IterVar> u = positions();
        auto [aimed, update] = aimed_update(u, p);
        DataType t = update.dtype();
        Expr identity = reduction == "add"   ? make_const(t, int64_t{0})
                        : reduction == "mul" ? make_const(t, int64_t{1})
                                             : old(p);
        Expr term = select(aimed, update, identity);
        if (reduction == "add") return te::sum(term, u);
        if (reduction == "mul") return te::prod(term, u);
        return reduction == "max" ? te::max(term, u) : te::min(term, u);
      },
      name + "_updates");
  return {te::compute(
      shape_exprs(shape),
      [&](const std::vector<Var>& p) {
        Expr c = combined({p.begin(), p.end()});
        if (reduction == "add") return old(p) + c;
        if (reduction == "mul") return old(p) * c;
        return reduction == "max" ? max(old(p), c) : min(old(p), c);
      },
      name)};
}

void check_nd_indices(const TensorType& indices) {
  if (indices.dtype != DataType::int64() && indices.dtype != DataType::int32()) {
    throw UserError(str("input indices is ", indices.to_string(), "; it must be int64 or int32"));
  }
  if (indices.shape.empty()) throw UserError("input indices is a scalar; it needs at least 1 dimension");
}

std::vector<TensorType> infer_gather_nd(const Graph& graph, const Node& node) {
  check_arity(node, 2, 2);
  const TensorType& data = input_type(graph, node, 0, "data");
  const TensorType& indices = input_type(graph, node, 1, "indices");
  check_nd_indices(indices);
  int64_t b = node.attrs.get_int_or("batch_dims", 0);
  int64_t m = indices.shape.back();
  int64_t r = static_cast<int64_t>(data.shape.size());
  int64_t q = static_cast<int64_t>(indices.shape.size());
  if (b < 0 || b >= std::min(r, q) || m < 1 || b + m > r) {
    throw UserError(str("indices ", indices.to_string(), " with batch_dims=", b, " do not index data ",
                        data.to_string(), ": the last extent of indices plus batch_dims must be at most data's rank"));
  }
  for (int64_t d = 0; d < b; ++d) {
    if (indices.shape[d] != data.shape[d]) {
      throw UserError(
          str("the batch dimensions of indices ", indices.to_string(), " and data ", data.to_string(), " differ"));
    }
  }
  Shape out(indices.shape.begin(), indices.shape.end() - 1);
  out.insert(out.end(), data.shape.begin() + b + m, data.shape.end());
  return {{out, data.dtype}};
}

// out[i..., j...] = data[i_0..i_{b-1}, indices[i..., 0..m-1], j...].
std::vector<te::Tensor> compute_gather_nd(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  Shape data = static_shape(in[0]);
  Shape indices = static_shape(in[1]);
  int64_t b = node.attrs.get_int_or("batch_dims", 0);
  int64_t m = indices.back();
  size_t lead = indices.size() - 1;
  return {te::compute(
      shape_exprs(infer_gather_nd(graph, node)[0].shape),
      [&](const std::vector<Var>& o) {
        std::vector<Expr> at(o.begin(), o.begin() + b);
        std::vector<Expr> index_at(o.begin(), o.begin() + lead);
        index_at.push_back(Expr());
        for (int64_t t = 0; t < m; ++t) {
          index_at.back() = ops::index_const(t);
          at.push_back(nd_index(in[1](index_at), data[b + t]));
        }
        at.insert(at.end(), o.begin() + lead, o.end());
        return in[0](at);
      },
      output_name(graph, node, 0))};
}

std::vector<TensorType> infer_scatter_nd(const Graph& graph, const Node& node) {
  check_arity(node, 3, 3);
  const TensorType& data = input_type(graph, node, 0, "data");
  const TensorType& indices = input_type(graph, node, 1, "indices");
  const TensorType& updates = input_type(graph, node, 2, "updates");
  check_nd_indices(indices);
  check_same_dtype(data, updates, "input data", "input updates");
  int64_t m = indices.shape.back();
  if (m < 1 || m > static_cast<int64_t>(data.shape.size())) {
    throw UserError(
        str("indices ", indices.to_string(), " index more dimensions than data ", data.to_string(), " has"));
  }
  Shape expected(indices.shape.begin(), indices.shape.end() - 1);
  expected.insert(expected.end(), data.shape.begin() + m, data.shape.end());
  if (updates.shape != expected) {
    throw UserError(str("updates ", updates.to_string(), " must be ", ints_str(expected),
                        " (indices' leading dimensions, then data's after the indexed ones)"));
  }
  check_scatter_reduction(graph, node);
  return {data};
}

// Each output element looks for the updates aimed at it: with reduction none the last one
// (the highest update position; ONNX leaves duplicates undefined), with add or mul all of
// them. A reduction over every update position: data's extent times the updates' count.
std::vector<te::Tensor> compute_scatter_nd(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  Shape data = static_shape(in[0]);
  Shape indices = static_shape(in[1]);
  size_t m = static_cast<size_t>(indices.back());
  size_t lead = indices.size() - 1;
  std::string reduction = node.attrs.get_string_or("reduction", "none");
  std::string name = output_name(graph, node, 0);
  // Whether update position u (the reduce axes) aims at output element p.
  auto aims_at = [&](const std::vector<IterVar>& u, const std::vector<Var>& p) {
    std::vector<Expr> index_at(u.begin(), u.end());
    index_at.push_back(Expr());
    Expr match = make_bool(true);
    for (size_t t = 0; t < m; ++t) {
      index_at.back() = ops::index_const(static_cast<int64_t>(t));
      match = match && nd_index(in[1](index_at), data[t]) == Expr(p[t]);
    }
    return match;
  };
  auto positions = [&]() {
    std::vector<IterVar> u;
    for (size_t d = 0; d < lead; ++d) {
      u.push_back(te::reduce_axis({0, ops::index_const(indices[d])}, "u" + std::to_string(d)));
    }
    return u;
  };
  auto update_at = [&](const std::vector<Expr>& u, const std::vector<Var>& p) {
    std::vector<Expr> at = u;
    at.insert(at.end(), p.begin() + m, p.end());
    return in[2](at);
  };
  if (reduction != "none") {
    return scatter_reduce(
        in[0], reduction, positions,
        [&](const std::vector<IterVar>& u, const std::vector<Var>& p) {
          return std::pair{aims_at(u, p), update_at({u.begin(), u.end()}, p)};
        },
        name);
  }
  // Without a reduction: the flat position of the last update aimed at each indexed
  // element (-1 where none is), then that update or the data.
  Shape head(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(m));
  te::Tensor last = te::compute(
      shape_exprs(head),
      [&](const std::vector<Var>& p) {
        std::vector<IterVar> u = positions();
        Expr flat = ops::index_const(0);
        for (size_t d = 0; d < lead; ++d) flat = flat * ops::index_const(indices[d]) + u[d];
        return te::max(select(aims_at(u, p), flat, ops::index_const(-1)), u);
      },
      name + "_last");
  return {te::compute(
      shape_exprs(data),
      [&](const std::vector<Var>& p) {
        Expr h = last(std::vector<Expr>(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(m)));
        std::vector<Expr> u(lead);
        Expr rest = max(h, ops::index_const(0));
        for (size_t d = lead; d-- > 0;) {
          u[d] = floormod(rest, ops::index_const(indices[d]));
          rest = floordiv(rest, ops::index_const(indices[d]));
        }
        return select(h >= ops::index_const(0), update_at(u, p), in[0]({p.begin(), p.end()}));
      },
      name)};
}

// ---------------------------------------------------------------- ScatterElements

// ScatterElements writes updates[u] to data at u with axis `axis` replaced by indices[u];
// indices and updates share a shape no larger than data's off the axis. The updates aimed
// at output element p are those at p with any position k along the axis (p inside
// indices' extent), so each output element reduces over that one axis only.
std::vector<TensorType> infer_scatter_elements(const Graph& graph, const Node& node) {
  check_arity(node, 3, 3);
  const TensorType& data = input_type(graph, node, 0, "data");
  const TensorType& indices = input_type(graph, node, 1, "indices");
  const TensorType& updates = input_type(graph, node, 2, "updates");
  check_nd_indices(indices);
  check_same_dtype(data, updates, "input data", "input updates");
  if (indices.shape.size() != data.shape.size() || updates.shape != indices.shape) {
    throw UserError(str("indices ", indices.to_string(), " and updates ", updates.to_string(),
                        " must have one shape, of data ", data.to_string(), "'s rank"));
  }
  int axis = normalize_axis(node.attrs.get_int_or("axis", 0), static_cast<int64_t>(data.shape.size()), "axis");
  for (size_t d = 0; d < data.shape.size(); ++d) {
    if (static_cast<int>(d) != axis && indices.shape[d] > data.shape[d]) {
      throw UserError(str("indices ", indices.to_string(), " are longer than data ", data.to_string(), " in dimension ",
                          d, " (off the axis ", axis, ")"));
    }
  }
  check_scatter_reduction(graph, node);
  return {data};
}

std::vector<te::Tensor> compute_scatter_elements(const Graph& graph, const Node& node,
                                                 const std::vector<te::Tensor>& in) {
  Shape data = static_shape(in[0]);
  Shape indices = static_shape(in[1]);
  int axis = normalize_axis(node.attrs.get_int_or("axis", 0), static_cast<int64_t>(data.size()), "axis");
  std::string reduction = node.attrs.get_string_or("reduction", "none");
  std::string name = output_name(graph, node, 0);
  // The update position of p at k along the axis (clamped inside indices' extent: where p is
  // outside it, inside(p) is false), and whether that update is aimed at p.
  auto at = [&](const std::vector<Var>& p, const Expr& k) {
    std::vector<Expr> u;
    for (size_t d = 0; d < data.size(); ++d) {
      u.push_back(static_cast<int>(d) == axis ? k : min(Expr(p[d]), ops::index_const(indices[d] - 1)));
    }
    return u;
  };
  auto aims_at = [&](const std::vector<Var>& p, const Expr& k) {
    Expr match = nd_index(in[1](at(p, k)), data[axis]) == Expr(p[axis]);
    for (size_t d = 0; d < data.size(); ++d) {
      if (static_cast<int>(d) != axis && indices[d] < data[d]) match = match && p[d] < ops::index_const(indices[d]);
    }
    return match;
  };
  auto along_axis = [&]() { return te::reduce_axis({0, ops::index_const(indices[axis])}, "k"); };
  auto old = [&](const std::vector<Var>& p) { return in[0]({p.begin(), p.end()}); };
  if (reduction != "none") {
    return scatter_reduce(
        in[0], reduction, [&] { return std::vector<IterVar>{along_axis()}; },
        [&](const std::vector<IterVar>& u, const std::vector<Var>& p) {
          return std::pair{aims_at(p, u[0]), in[2](at(p, u[0]))};
        },
        name);
  }
  // Without a reduction: the last update aimed at p (ONNX leaves duplicates undefined).
  te::Tensor last = te::compute(
      shape_exprs(data),
      [&](const std::vector<Var>& p) {
        IterVar k = along_axis();
        return te::max(select(aims_at(p, k), Expr(k), ops::index_const(-1)), {k});
      },
      name + "_last");
  return {te::compute(
      shape_exprs(data),
      [&](const std::vector<Var>& p) {
        Expr k = last({p.begin(), p.end()});
        return select(k >= ops::index_const(0), in[2](at(p, max(k, ops::index_const(0)))), old(p));
      },
      name)};
}

}  // namespace

std::vector<GraphOp> tensor_graph_ops() {
  GraphOp size{"Size", OpPattern::Opaque, infer_size, compute_size};
  size.evaluate = evaluate_size;
  GraphOp non_zero{"NonZero", OpPattern::Opaque, infer_non_zero,
                   [](const Graph&, const Node&, const std::vector<te::Tensor>&) -> std::vector<te::Tensor> {
                     throw UserError("a NonZero is evaluated (GraphOp::evaluate), not compiled");
                   }};
  non_zero.evaluate = evaluate_non_zero;
  return {
      {"ConstantOfShape", OpPattern::Opaque, infer_constant_of_shape, compute_constant_of_shape},
      {"Range", OpPattern::Opaque, infer_range, compute_range},
      size,
      non_zero,
      {"Expand", OpPattern::Broadcast, infer_expand, compute_expand},
      {"Tile", OpPattern::Injective, infer_tile, compute_tile},
      {"Split", OpPattern::Injective, infer_split, compute_split},
      {"Trilu", OpPattern::Elementwise, infer_trilu, compute_trilu},
      {"DepthToSpace", OpPattern::Injective, infer_depth_to_space, compute_depth_to_space},
      {"SpaceToDepth", OpPattern::Injective, infer_space_to_depth, compute_space_to_depth},
      {"GatherElements", OpPattern::Injective, infer_gather_elements, compute_gather_elements},
      {"EyeLike", OpPattern::Opaque, infer_eye_like, compute_eye_like},
      {"OneHot", OpPattern::Injective, infer_one_hot, compute_one_hot},
      {"GatherND", OpPattern::Injective, infer_gather_nd, compute_gather_nd},
      {"ScatterND", OpPattern::Opaque, infer_scatter_nd, compute_scatter_nd},
      {"ScatterElements", OpPattern::Opaque, infer_scatter_elements, compute_scatter_elements},
      {"Scatter", OpPattern::Opaque, infer_scatter_elements, compute_scatter_elements},
  };
}

}  // namespace temper::graph::detail
