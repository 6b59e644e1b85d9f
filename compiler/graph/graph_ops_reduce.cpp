// The ONNX reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
// ReduceL2, ReduceSumSquare, ReduceLogSum and ReduceLogSumExp over the dimensions `axes`
// names (all when it is absent), keeping them as extent 1 with keepdims=1; ArgMax and
// ArgMin along one axis; GlobalMaxPool over the spatial dimensions; CumSum; TopK.
//
// The axes are an attribute, except ReduceSum's from opset 13 and every reduction's from
// opset 18: an optional input, which must be a constant, with noop_with_empty_axes=1
// making "no axes" the identity. A
// reduction is the whole body of its stage (te's rule), so a reduction with something
// after it (L2's square root, LogSum's log) is two stages.
#include <cmath>
#include <limits>

#include "compiler/graph/graph_ops_common.h"
#include "compiler/ops/shape.h"

namespace temper::graph::detail {

namespace {

enum class Reducer { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

struct ReduceKind {
  const char* op;
  Reducer reducer;
  bool float_only;
};

constexpr ReduceKind kReductions[] = {
    {"ReduceSum", Reducer::Sum, false},      {"ReduceMean", Reducer::Mean, true},
    {"ReduceMax", Reducer::Max, false},      {"ReduceMin", Reducer::Min, false},
    {"ReduceProd", Reducer::Prod, false},    {"ReduceL1", Reducer::L1, false},
    {"ReduceL2", Reducer::L2, true},         {"ReduceSumSquare", Reducer::SumSquare, false},
    {"ReduceLogSum", Reducer::LogSum, true}, {"ReduceLogSumExp", Reducer::LogSumExp, true},
};

const ReduceKind& reduce_kind(const std::string& op) {
  for (const ReduceKind& k : kReductions) {
    if (op == k.op) return k;
  }
  TEMPER_CHECK(false, "not a reduction: ", op);
  return kReductions[0];
}

// The reduced dimensions as flags per dimension; all false for ReduceSum's
// noop_with_empty_axes=1 with no axes (the output is the input).
std::vector<bool> reduced_dims(const Graph& graph, const Node& node, int64_t rank) {
  bool axes_input = graph.opset >= 18 || (node.op == "ReduceSum" && graph.opset >= 13);
  check_arity(node, 1, axes_input ? 2 : 1);
  std::vector<int64_t> axes =
      axes_input ? (has_input(node, 1) ? constant_ints(graph, node, 1, "axes") : std::vector<int64_t>{})
                 : node.attrs.get_ints_or("axes", {});
  bool noop = axes_input && node.attrs.get_int_or("noop_with_empty_axes", 0) != 0;
  std::vector<bool> reduced(rank, axes.empty() && !noop);
  for (int64_t a : axes) {
    int d = normalize_axis(a, rank, "axes entry");
    if (reduced[d]) throw UserError(str("axes ", ints_str(axes), " name dimension ", d, " twice"));
    reduced[d] = true;
  }
  return reduced;
}

Shape reduce_output_shape(const Shape& in, const std::vector<bool>& reduced, bool keepdims) {
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!reduced[d]) {
      out.push_back(in[d]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

bool keepdims(const Node& node) {
  return node.attrs.get_int_or("keepdims", 1) != 0;
}

std::vector<TensorType> infer_reduce(const Graph& graph, const Node& node) {
  const TensorType& x = input_type(graph, node, 0, "data");
  if (reduce_kind(node.op).float_only) check_float(x, "input data");
  if (x.dtype.is_bool()) throw UserError(str("input data is ", x.to_string(), "; ", node.op, " takes numbers"));
  std::vector<bool> reduced = reduced_dims(graph, node, static_cast<int64_t>(x.shape.size()));
  return {{reduce_output_shape(x.shape, reduced, keepdims(node)), x.dtype}};
}

// The stages of one reduction over the dimensions `reduced` of x.
class Reduction {
 public:
  Reduction(const te::Tensor& x, std::vector<bool> reduced, bool keepdims)
      : x_(x), shape_(static_shape(x)), reduced_(std::move(reduced)), keepdims_(keepdims) {}

  Shape output_shape() const { return reduce_output_shape(shape_, reduced_, keepdims_); }
  int64_t count() const {
    int64_t n = 1;
    for (size_t d = 0; d < shape_.size(); ++d) n *= reduced_[d] ? shape_[d] : 1;
    return n;
  }

  // A stage: combine(element) reduced by `op` (Sum, Max, Min, Prod) at each output point;
  // element(x_value, output index) may read other tensors at the output index.
  te::Tensor stage(ReduceOp op, const std::function<Expr(const Expr&, const std::vector<Var>&)>& element,
                   const std::string& name) const {
    return te::compute(
        shape_exprs(output_shape()),
        [&](const std::vector<Var>& i) {
          std::vector<IterVar> axes;
          std::vector<Expr> index;
          size_t next_out = 0;
          for (size_t d = 0; d < shape_.size(); ++d) {
            if (reduced_[d]) {
              axes.push_back(te::reduce_axis({0, ops::index_const(shape_[d])}, "r" + std::to_string(d)));
              index.push_back(axes.back());
              if (keepdims_) ++next_out;
            } else {
              index.push_back(i[next_out++]);
            }
          }
          Expr value = element(x_(index), i);
          switch (op) {
            case ReduceOp::Sum:
              return te::sum(value, axes);
            case ReduceOp::Max:
              return te::max(value, axes);
            case ReduceOp::Min:
              return te::min(value, axes);
            case ReduceOp::Prod:
              return te::prod(value, axes);
          }
          return Expr();
        },
        name);
  }

  // f of each element of an output-shaped stage.
  te::Tensor map(const te::Tensor& t, const std::function<Expr(const Expr&, const std::vector<Var>&)>& f,
                 const std::string& name) const {
    return te::compute(
        shape_exprs(output_shape()),
        [&](const std::vector<Var>& i) {
          return f(t({i.begin(), i.end()}), i);
        },
        name);
  }

 private:
  te::Tensor x_;
  Shape shape_;
  std::vector<bool> reduced_;
  bool keepdims_;
};

std::vector<te::Tensor> compute_reduce(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  std::vector<bool> reduced = reduced_dims(graph, node, x.ndim());
  std::string name = output_name(graph, node, 0);
  if (std::none_of(reduced.begin(), reduced.end(), [](bool r) { return r; })) return {x};
  Reduction r(x, reduced, keepdims(node));
  DataType t = x.dtype();
  auto same = [](const Expr& v, const std::vector<Var>&) { return v; };
  auto square = [](const Expr& v, const std::vector<Var>&) { return v * v; };
  switch (reduce_kind(node.op).reducer) {
    case Reducer::Sum:
      return {r.stage(ReduceOp::Sum, same, name)};
    case Reducer::Max:
      return {r.stage(ReduceOp::Max, same, name)};
    case Reducer::Min:
      return {r.stage(ReduceOp::Min, same, name)};
    case Reducer::Prod:
      return {r.stage(ReduceOp::Prod, same, name)};
    case Reducer::SumSquare:
      return {r.stage(ReduceOp::Sum, square, name)};
    case Reducer::L1: {
      auto magnitude = [](const Expr& v, const std::vector<Var>&) {
        if (v.dtype().is_float()) return te::fabs(v);
        return v.dtype().is_int() ? select(v < make_const(v.dtype(), int64_t{0}), -v, v) : v;
      };
      return {r.stage(ReduceOp::Sum, magnitude, name)};
    }
    case Reducer::Mean: {
      // Each element is scaled before the sum: the reduction stays the whole body.
      Expr inv_count = make_const(t, 1.0 / static_cast<double>(r.count()));
      return {r.stage(
          ReduceOp::Sum, [&](const Expr& v, const std::vector<Var>&) { return v * inv_count; }, name)};
    }
    case Reducer::L2: {
      te::Tensor sum = r.stage(ReduceOp::Sum, square, name + "_sumsq");
      return {r.map(
          sum, [](const Expr& s, const std::vector<Var>&) { return te::sqrt(s); }, name)};
    }
    case Reducer::LogSum: {
      te::Tensor sum = r.stage(ReduceOp::Sum, same, name + "_sum");
      return {r.map(
          sum, [](const Expr& s, const std::vector<Var>&) { return te::log(s); }, name)};
    }
    case Reducer::LogSumExp: {
      // log sum e^x = m + log sum e^(x - m) with m the maximum: no overflow.
      Reduction kept(x, reduced, true);
      te::Tensor m = kept.stage(ReduceOp::Max, same, name + "_max");
      auto m_at = [&, rank = x.ndim()](const std::vector<Var>& i) {
        // The maximum at an output index (of rank rank with keepdims, fewer without).
        std::vector<Expr> index;
        size_t next = 0;
        for (int d = 0; d < rank; ++d) {
          if (reduced[d]) {
            index.push_back(ops::index_const(0));
            if (keepdims(node)) ++next;
          } else {
            index.push_back(i[next++]);
          }
        }
        return m(index);
      };
      te::Tensor sum = r.stage(
          ReduceOp::Sum, [&](const Expr& v, const std::vector<Var>& i) { return te::exp(v - m_at(i)); },
          name + "_sumexp");
      return {r.map(
          sum, [&](const Expr& s, const std::vector<Var>& i) { return te::log(s) + m_at(i); }, name)};
    }
  }
  return {};
}

GraphOp reduce_op(const ReduceKind& kind) {
  return {kind.op, OpPattern::Reduction, infer_reduce, compute_reduce};
}

// ---------------------------------------------------------------- ArgMax, ArgMin

int arg_axis(const Node& node, int64_t rank) {
  return normalize_axis(node.attrs.get_int_or("axis", 0), rank, "axis");
}

std::vector<TensorType> infer_arg(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  const TensorType& x = input_type(graph, node, 0, "data");
  if (x.dtype.is_bool()) throw UserError(str("input data is ", x.to_string(), "; ", node.op, " takes numbers"));
  std::vector<bool> reduced(x.shape.size(), false);
  reduced[arg_axis(node, static_cast<int64_t>(x.shape.size()))] = true;
  return {{reduce_output_shape(x.shape, reduced, keepdims(node)), DataType::int64()}};
}

// The extreme along the axis, then the first (or with select_last_index=1 the last)
// index holding it.
std::vector<te::Tensor> compute_arg(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  int axis = arg_axis(node, x.ndim());
  std::vector<bool> reduced(x.ndim(), false);
  reduced[axis] = true;
  std::string name = output_name(graph, node, 0);
  bool is_max = node.op == "ArgMax";
  bool last = node.attrs.get_int_or("select_last_index", 0) != 0;
  Reduction kept(x, reduced, true);
  te::Tensor extreme = kept.stage(
      is_max ? ReduceOp::Max : ReduceOp::Min, [](const Expr& v, const std::vector<Var>&) { return v; },
      name + (is_max ? "_max" : "_min"));
  Shape shape = static_shape(x);
  bool keep = keepdims(node);
  Shape out = reduce_output_shape(shape, reduced, keep);
  DataType i64 = DataType::int64();
  return {te::compute(
      shape_exprs(out),
      [&](const std::vector<Var>& i) {
        IterVar k = te::reduce_axis({0, ops::index_const(shape[axis])}, "k");
        std::vector<Expr> at, at_extreme;
        size_t next = 0;
        for (int d = 0; d < x.ndim(); ++d) {
          if (d == axis) {
            at.push_back(k);
            at_extreme.push_back(ops::index_const(0));
            if (keep) ++next;
          } else {
            at.push_back(i[next]);
            at_extreme.push_back(i[next++]);
          }
        }
        Expr hit = x(at) == extreme(at_extreme);
        Expr index = cast(i64, Expr(k));
        if (last) return te::max(select(hit, index, make_const(i64, int64_t{-1})), {k});
        return te::min(select(hit, index, make_const(i64, std::numeric_limits<int64_t>::max())), {k});
      },
      name)};
}

// ---------------------------------------------------------------- GlobalMaxPool

std::vector<TensorType> infer_global_max_pool(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1);
  const TensorType& x = input_type(graph, node, 0, "X");
  if (x.shape.size() < 3) throw UserError(str("input X is ", x.to_string(), "; it must be [N, C, d1, ...]"));
  Shape out = x.shape;
  std::fill(out.begin() + 2, out.end(), 1);
  return {{out, x.dtype}};
}

std::vector<te::Tensor> compute_global_max_pool(const Graph& graph, const Node& node,
                                                const std::vector<te::Tensor>& in) {
  std::vector<bool> spatial(in[0].ndim(), true);
  spatial[0] = spatial[1] = false;
  return {
      Reduction(in[0], spatial, true)
          .stage(
              ReduceOp::Max, [](const Expr& v, const std::vector<Var>&) { return v; }, output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- CumSum

int cumsum_axis(const Graph& graph, const Node& node, int64_t rank) {
  std::vector<int64_t> axis = constant_ints(graph, node, 1, "axis");
  if (axis.size() != 1) throw UserError(str("input axis ", ints_str(axis), " must be one integer"));
  return normalize_axis(axis[0], rank, "axis");
}

std::vector<TensorType> infer_cumsum(const Graph& graph, const Node& node) {
  check_arity(node, 2, 2);
  const TensorType& x = input_type(graph, node, 0, "x");
  if (x.dtype.is_bool()) throw UserError(str("input x is ", x.to_string(), "; CumSum takes numbers"));
  cumsum_axis(graph, node, static_cast<int64_t>(x.shape.size()));
  return {x};
}

// y[.., i, ..] = the sum of x[.., k, ..] over k <= i (k < i with exclusive=1; k >= i, or
// k > i, with reverse=1): a reduction over the whole axis with a condition, which costs
// extent^2 additions -- the axes models sum over are short.
std::vector<te::Tensor> compute_cumsum(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  int axis = cumsum_axis(graph, node, x.ndim());
  bool exclusive = node.attrs.get_int_or("exclusive", 0) != 0;
  bool reverse = node.attrs.get_int_or("reverse", 0) != 0;
  int64_t extent = static_shape(x)[axis];
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        IterVar k = te::reduce_axis({0, ops::index_const(extent)}, "k");
        std::vector<Expr> at(i.begin(), i.end());
        at[axis] = k;
        Expr kk = k;
        Expr ii = i[axis];
        Expr in_range = reverse ? (exclusive ? kk > ii : kk >= ii) : (exclusive ? kk < ii : kk <= ii);
        return te::sum(x(at), {k}, in_range);
      },
      output_name(graph, node, 0))};
}

// ---------------------------------------------------------------- TopK

struct TopKShape {
  int axis;
  int64_t k;
};

TopKShape top_k_shape(const Graph& graph, const Node& node, const TensorType& x) {
  int axis = normalize_axis(node.attrs.get_int_or("axis", -1), static_cast<int64_t>(x.shape.size()), "axis");
  int64_t k = 0;
  if (graph.opset < 10) {
    k = node.attrs.get_int("k");
  } else {
    std::vector<int64_t> ks = constant_ints(graph, node, 1, "K");
    if (ks.size() != 1) throw UserError(str("input K ", ints_str(ks), " must hold one integer"));
    k = ks[0];
  }
  if (k < 1 || k > x.shape[axis]) {
    throw UserError(
        str("K=", k, " is outside [1, ", x.shape[axis], "], the extent of axis ", axis, " of ", x.to_string()));
  }
  return {axis, k};
}

std::vector<TensorType> infer_top_k(const Graph& graph, const Node& node) {
  int inputs = graph.opset < 10 ? 1 : 2;
  check_arity(node, inputs, inputs, 2);
  const TensorType& x = input_type(graph, node, 0, "X");
  if (x.dtype.is_bool()) throw UserError(str("input X is ", x.to_string(), "; TopK takes numbers"));
  TopKShape s = top_k_shape(graph, node, x);
  Shape out = x.shape;
  out[s.axis] = s.k;
  std::vector<TensorType> types = {{out, x.dtype}, {out, DataType::int64()}};
  types.resize(node.outputs.size());
  return types;
}

// By ranks: an element's rank along the axis is the number of elements before it in the
// order (larger first with largest=1, a tie going to the lower index, as ONNX orders
// them); output r is the element of rank r. Sorted whatever `sorted` says (any order is
// allowed with sorted=0). extent^2 comparisons: TopK's axes are short in models.
std::vector<te::Tensor> compute_top_k(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  Shape shape = static_shape(x);
  TopKShape s = top_k_shape(graph, node, input_type(graph, node, 0, "X"));
  bool largest = node.attrs.get_int_or("largest", 1) != 0;
  std::string name = output_name(graph, node, 0);
  auto along = [&](const std::vector<Var>& i, Expr at) {
    std::vector<Expr> index(i.begin(), i.end());
    index[s.axis] = at;
    return index;
  };
  te::Tensor rank = te::compute(
      shape_exprs(shape),
      [&](const std::vector<Var>& i) {
        IterVar j = te::reduce_axis({0, ops::index_const(shape[s.axis])}, "j");
        Expr mine = x({i.begin(), i.end()});
        Expr other = x(along(i, j));
        Expr before = largest ? other > mine : other < mine;
        before = before || (other == mine && Expr(j) < Expr(i[s.axis]));
        return te::sum(select(before, ops::index_const(1), ops::index_const(0)), {j});
      },
      name + "_rank");
  Shape out = shape;
  out[s.axis] = s.k;
  DataType i64 = DataType::int64();
  te::Tensor indices = te::compute(
      shape_exprs(out),
      [&](const std::vector<Var>& r) {
        IterVar j = te::reduce_axis({0, ops::index_const(shape[s.axis])}, "j");
        Expr hit = rank(along(r, j)) == Expr(r[s.axis]);
        return te::min(select(hit, cast(i64, Expr(j)), make_const(i64, shape[s.axis])), {j});
      },
      node.outputs.size() > 1 ? output_name(graph, node, 1) : name + "_indices");
  te::Tensor values = te::compute(
      shape_exprs(out),
      [&](const std::vector<Var>& r) {
        Expr at = min(cast(DataType::int32(), indices({r.begin(), r.end()})), ops::index_const(shape[s.axis] - 1));
        return x(along(r, at));
      },
      name);
  std::vector<te::Tensor> outputs = {values, indices};
  outputs.resize(node.outputs.size());
  return outputs;
}

}  // namespace

std::vector<GraphOp> reduce_graph_ops() {
  std::vector<GraphOp> ops;
  for (const ReduceKind& kind : kReductions) ops.push_back(reduce_op(kind));
  ops.push_back({"ArgMax", OpPattern::Reduction, infer_arg, compute_arg});
  ops.push_back({"ArgMin", OpPattern::Reduction, infer_arg, compute_arg});
  ops.push_back({"GlobalMaxPool", OpPattern::Reduction, infer_global_max_pool, compute_global_max_pool});
  ops.push_back({"CumSum", OpPattern::Opaque, infer_cumsum, compute_cumsum});
  ops.push_back({"TopK", OpPattern::Opaque, infer_top_k, compute_top_k});
  return ops;
}

}  // namespace temper::graph::detail
