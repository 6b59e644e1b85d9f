// Resize (opsets 10-21) and Upsample (7-9): each dimension of X scaled, by nearest
// neighbour or (multi)linear interpolation. The upsampling of feature pyramids, U-Nets
// and detection heads.
//
// The output extents: `sizes` where given, else floor(extent * scale). Output index x maps
// to the input coordinate by coordinate_transformation_mode (s the scale, I and O the
// input's and output's extents):
//   half_pixel          (x + 0.5) / s - 0.5          (the default)
//   pytorch_half_pixel  as half_pixel, 0 where O = 1
//   align_corners       x * (I - 1) / (O - 1), 0 where O = 1
// (O is I * s before rounding down where scales are given, as ONNX's reference takes it)
//   asymmetric          x / s                        (Upsample's, and Resize's in opset 10)
//   tf_half_pixel_for_nn (x + 0.5) / s
//   half_pixel_symmetric half_pixel plus I/2 * (1 - floor(O) / O)   (opset 19)
// From opset 18 the attribute axes limits scales and sizes to some dimensions, and
// keep_aspect_ratio_policy not_larger / not_smaller takes one scale for all of them from
// sizes; antialias=1 is refused where it would change the result (a linear downscale).
// Nearest rounds that coordinate by nearest_mode (round_prefer_floor by default, in
// opset 11+; opset 10 and Upsample floor it), linear weighs the two neighbours of the
// coordinate clamped to [0, I - 1], cubic (opset 11+) the four around it by Keys' kernel
// (cubic_coeff_a), taps past an end reading the edge or, with exclude_outside, dropped and
// the others' weights renormalised. Coordinate mode tf_crop_and_resize is refused.
#include <cmath>
#include <optional>

#include "compiler/graph/graph_ops_common.h"
#include "compiler/ops/shape.h"

namespace temper::graph::detail {

namespace {

struct ResizePlan {
  std::vector<double> scales;
  Shape output;
  std::string mode, coordinates, nearest;
};

// The constant float input i (scales) or int input (sizes), empty when absent or empty.
std::vector<double> constant_values(const Graph& graph, const Node& node, int i, const std::string& role) {
  if (!has_input(node, i)) return {};
  const NDArray& a = constant_input(graph, node, i, role);
  std::vector<double> v;
  for (int64_t k = 0; k < a.size(); ++k) v.push_back(a.get(k));
  return v;
}

ResizePlan resize_plan(const Graph& graph, const Node& node) {
  bool upsample = node.op == "Upsample";
  bool opset10 = !upsample && graph.opset < 11;
  check_arity(node, 1, upsample || opset10 ? 2 : 4);
  const TensorType& x = input_type(graph, node, 0, "X");
  size_t rank = x.shape.size();
  ResizePlan p;
  p.mode = node.attrs.get_string_or("mode", "nearest");
  if (p.mode == "bilinear" && upsample) p.mode = "linear";  // opset 7's name
  if (p.mode != "nearest" && p.mode != "linear" && !(p.mode == "cubic" && !upsample && !opset10)) {
    throw UserError(str("attribute mode=\"", p.mode, "\" is none of ",
                        upsample || opset10 ? "\"nearest\" and \"linear\"" : "\"nearest\", \"linear\" and \"cubic\""));
  }
  p.coordinates =
      upsample || opset10 ? "asymmetric" : node.attrs.get_string_or("coordinate_transformation_mode", "half_pixel");
  if (p.coordinates == "tf_crop_and_resize") {
    throw UnsupportedError("coordinate_transformation_mode \"tf_crop_and_resize\" is not supported");
  }
  if (p.coordinates != "half_pixel" && p.coordinates != "pytorch_half_pixel" && p.coordinates != "align_corners" &&
      p.coordinates != "asymmetric" && p.coordinates != "tf_half_pixel_for_nn" &&
      !(graph.opset >= 19 && p.coordinates == "half_pixel_symmetric")) {
    throw UserError(str("attribute coordinate_transformation_mode=\"", p.coordinates, "\" is not one ONNX defines"));
  }
  p.nearest = upsample || opset10 ? "floor" : node.attrs.get_string_or("nearest_mode", "round_prefer_floor");
  if (p.nearest != "round_prefer_floor" && p.nearest != "round_prefer_ceil" && p.nearest != "floor" &&
      p.nearest != "ceil") {
    throw UserError(str("attribute nearest_mode=\"", p.nearest, "\" is not one ONNX defines"));
  }
  std::vector<double> scales;
  std::vector<double> sizes;
  if (upsample && graph.opset < 9) {
    scales = node.attrs.get_floats_or("scales", {});
  } else {
    scales = constant_values(graph, node, upsample || opset10 ? 1 : 2, "scales");
    if (!upsample && !opset10) sizes = constant_values(graph, node, 3, "sizes");
  }
  if (scales.empty() == sizes.empty()) {
    throw UserError("needs exactly one of scales and sizes");
  }
  std::vector<double>& given = scales.empty() ? sizes : scales;
  const char* role = scales.empty() ? "sizes" : "scales";
  // From opset 18 the attribute axes names the dimensions scales or sizes cover; the others
  // keep their extent.
  std::vector<int> axes;
  if (graph.opset >= 18 && node.attrs.has("axes")) {
    for (int64_t a : node.attrs.get_ints_or("axes", {})) axes.push_back(normalize_axis(a, rank, "axes entry"));
  } else {
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int>(d));
  }
  if (given.size() != axes.size()) {
    throw UserError(str(role, " has ", given.size(), " entries; ",
                        axes.size() == rank ? str("X ", x.to_string(), " has rank ", rank)
                                            : str("axes names ", axes.size(), " dimensions")));
  }
  for (double v : given) {
    if (v <= 0) throw UserError(str(role, " must be positive"));
  }
  // keep_aspect_ratio_policy (opset 18, with sizes): one scale for every axis, the
  // smallest (not_larger) or largest (not_smaller) that sizes asks for, extents rounded.
  std::string policy = graph.opset >= 18 ? node.attrs.get_string_or("keep_aspect_ratio_policy", "stretch") : "stretch";
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    throw UserError(str("attribute keep_aspect_ratio_policy=\"", policy,
                        "\" is none of \"stretch\", \"not_larger\" and \"not_smaller\""));
  }
  std::optional<double> kept;
  if (scales.empty() && policy != "stretch") {
    for (size_t k = 0; k < axes.size(); ++k) {
      double s = sizes[k] / static_cast<double>(x.shape[axes[k]]);
      kept = !kept ? s : policy == "not_larger" ? std::min(*kept, s) : std::max(*kept, s);
    }
  }
  p.output = x.shape;
  p.scales.assign(rank, 1.0);
  for (size_t k = 0; k < axes.size(); ++k) {
    int d = axes[k];
    auto extent = static_cast<double>(x.shape[d]);
    if (kept) {
      p.scales[d] = *kept;
      p.output[d] = static_cast<int64_t>(std::nearbyint(extent * *kept));
    } else if (scales.empty()) {
      p.scales[d] = sizes[k] / extent;
      p.output[d] = static_cast<int64_t>(sizes[k]);
    } else {
      p.scales[d] = scales[k];
      p.output[d] = static_cast<int64_t>(std::floor(extent * scales[k]));
    }
  }
  // antialias (opset 18) widens linear and cubic filters when downscaling.
  bool antialias = graph.opset >= 18 && node.attrs.get_int_or("antialias", 0) != 0;
  for (size_t d = 0; d < rank && antialias && p.mode != "nearest"; ++d) {
    if (p.scales[d] < 1.0) {
      throw UnsupportedError(str("antialias=1 with a downscaling ", p.mode, " resize (dimension ", d,
                                 ") is not supported; Temper resizes without the antialiasing filter"));
    }
  }
  return p;
}

std::vector<TensorType> infer_resize(const Graph& graph, const Node& node) {
  const TensorType& x = input_type(graph, node, 0, "X");
  return {{resize_plan(graph, node).output, x.dtype}};
}

// The input coordinate (float32) of output index i along a dimension.
Expr source_coordinate(const ResizePlan& p, const Expr& i, double scale, int64_t in) {
  double out = static_cast<double>(in) * scale;
  DataType f = DataType::float32();
  Expr x = cast(f, i);
  auto c = [&](double v) { return make_const(f, v); };
  if (p.coordinates == "half_pixel") return (x + c(0.5)) / c(scale) - c(0.5);
  if (p.coordinates == "pytorch_half_pixel") return out > 1 ? (x + c(0.5)) / c(scale) - c(0.5) : c(0.0);
  if (p.coordinates == "align_corners") return out > 1 ? x * c(static_cast<double>(in - 1) / (out - 1)) : c(0.0);
  if (p.coordinates == "tf_half_pixel_for_nn") return (x + c(0.5)) / c(scale);
  if (p.coordinates == "half_pixel_symmetric") {
    // half_pixel, shifted so that the output's rounding is shared by both ends.
    double adjustment = std::floor(out) / out;
    double offset = static_cast<double>(in) / 2 * (1 - adjustment);
    return c(offset) + (x + c(0.5)) / c(scale) - c(0.5);
  }
  return x / c(scale);  // asymmetric
}

Expr clamp_index(const Expr& index, int64_t extent) {
  return min(max(index, ops::index_const(0)), ops::index_const(extent - 1));
}

// Cubic convolution's weight of a tap at distance d from the coordinate (Keys' kernel with
// coefficient a; 0 from distance 2 on).
Expr cubic_weight(const Expr& d, double a) {
  DataType f = DataType::float32();
  auto c = [&](double v) { return make_const(f, v); };
  Expr near = ((c(a + 2) * d - c(a + 3)) * d) * d + c(1);
  Expr far = ((c(a) * d - c(5 * a)) * d + c(8 * a)) * d - c(4 * a);
  return select(d <= c(1), near, select(d < c(2), far, c(0)));
}

// One input position an output element reads along a dimension, and its weight (undefined
// for nearest and for a dimension kept as it is).
struct Tap {
  Expr index, weight;
};

std::vector<te::Tensor> compute_resize(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  Shape shape = static_shape(x);
  ResizePlan p = resize_plan(graph, node);
  DataType f = DataType::float32();
  DataType i32 = DataType::int32();
  double cubic_a = node.attrs.get_float_or("cubic_coeff_a", -0.75);
  bool exclude_outside = node.attrs.get_int_or("exclude_outside", 0) != 0;
  return {te::compute(
      shape_exprs(p.output),
      [&](const std::vector<Var>& o) {
        // Per dimension, the taps: the nearest index; linear's two neighbours; cubic's four.
        std::vector<std::vector<Tap>> taps(shape.size());
        std::vector<size_t> interpolated;
        for (size_t d = 0; d < shape.size(); ++d) {
          if (p.scales[d] == 1.0 && p.output[d] == shape[d] && p.coordinates != "tf_half_pixel_for_nn") {
            taps[d] = {{o[d], Expr()}};
            continue;
          }
          Expr coordinate = source_coordinate(p, o[d], p.scales[d], shape[d]);
          if (p.mode == "nearest") {
            Expr rounded;
            if (p.nearest == "floor") {
              rounded = te::floor(coordinate);
            } else if (p.nearest == "ceil") {
              rounded = te::ceil(coordinate);
            } else if (p.nearest == "round_prefer_ceil") {
              rounded = te::floor(coordinate + make_const(f, 0.5));
            } else {
              rounded = te::ceil(coordinate - make_const(f, 0.5));
            }
            taps[d] = {{clamp_index(cast(i32, rounded), shape[d]), Expr()}};
            continue;
          }
          interpolated.push_back(d);
          if (p.mode == "linear") {
            Expr clamped = min(max(coordinate, make_const(f, 0.0)), make_const(f, static_cast<double>(shape[d] - 1)));
            Expr base = te::floor(clamped);
            Expr w = clamped - base;
            taps[d] = {{clamp_index(cast(i32, base), shape[d]), make_const(f, 1.0) - w},
                       {clamp_index(cast(i32, base) + ops::index_const(1), shape[d]), w}};
            continue;
          }
          // cubic: taps at base - 1 .. base + 2, those past an end reading the edge, or with
          // exclude_outside weighing 0 and the others renormalised.
          Expr base = te::floor(coordinate);
          Expr t = coordinate - base;
          Expr total;
          for (int k = -1; k <= 2; ++k) {
            Expr index = cast(i32, base) + ops::index_const(k);
            Expr w = cubic_weight(te::fabs(t - make_const(f, static_cast<double>(k))), cubic_a);
            if (exclude_outside) {
              Expr inside = index >= ops::index_const(0) && index <= ops::index_const(shape[d] - 1);
              w = select(inside, w, make_const(f, 0.0));
              total = total.defined() ? total + w : w;
            }
            taps[d].push_back({clamp_index(index, shape[d]), w});
          }
          for (Tap& tap : taps[d]) {
            if (exclude_outside) tap.weight = tap.weight / total;
          }
        }
        // The sum over every combination of the interpolated dimensions' taps.
        Expr sum;
        size_t combinations = 1;
        for (size_t d : interpolated) combinations *= taps[d].size();
        for (size_t combination = 0; combination < combinations; ++combination) {
          std::vector<Expr> at;
          for (const std::vector<Tap>& dim : taps) at.push_back(dim[0].index);
          Expr w = make_const(f, 1.0);
          size_t rest = combination;
          for (size_t d : interpolated) {
            const Tap& tap = taps[d][rest % taps[d].size()];
            rest /= taps[d].size();
            at[d] = tap.index;
            w = w * tap.weight;
          }
          Expr term = interpolated.empty() ? x(at) : cast(f, x(at)) * w;
          sum = sum.defined() ? sum + term : term;
        }
        return interpolated.empty() ? sum : cast(x.dtype(), sum);
      },
      output_name(graph, node, 0))};
}

}  // namespace

std::vector<GraphOp> resize_graph_ops() {
  return {
      {"Resize", OpPattern::Injective, infer_resize, compute_resize},
      {"Upsample", OpPattern::Injective, infer_resize, compute_resize},
  };
}

}  // namespace temper::graph::detail
