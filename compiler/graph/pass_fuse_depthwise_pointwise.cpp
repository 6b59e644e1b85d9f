#include "compiler/graph/pass_fuse_depthwise_pointwise.h"

#include <optional>
#include <string>

#include "compiler/graph/graph_match.h"
#include "compiler/ir/error.h"

namespace temper::graph {
namespace {

bool all_equal(const std::vector<int64_t>& values, int64_t v) {
  for (int64_t x : values) {
    if (x != v) return false;
  }
  return true;
}

// A 1x1 stride-1 ungrouped blocked conv whose input and output blocks agree.
bool is_pointwise(const Graph& graph, const Node& node) {
  if (node.op != "NchwcConv" || node.attrs.get_int_or("group", 1) != 1) return false;
  const std::vector<int64_t>& w = graph.value(node.inputs[1]).type.shape;  // [Ko, Ci, R, S, cb, kb]
  return w.size() == 6 && w[2] == 1 && w[3] == 1 && w[4] == w[5] && all_equal(node.attrs.get_ints_or("strides", {}), 1) &&
         all_equal(node.attrs.get_ints_or("pads", {}), 0) && all_equal(node.attrs.get_ints_or("dilations", {}), 1);
}

// A Clip's bound: an attribute before opset 11, a constant scalar input after; nullopt when
// absent, and `unknown` set when it is not a constant.
std::optional<double> clip_bound(const Graph& graph, const Node& clip, int input, const char* attr, bool* unknown) {
  if (graph.opset < 11) {
    if (!clip.attrs.has(attr)) return std::nullopt;
    return clip.attrs.get_float_or(attr, 0);
  }
  if (clip.inputs.size() <= static_cast<size_t>(input) || clip.inputs[input] == kNoValue) return std::nullopt;
  std::optional<double> v = scalar_constant(graph, clip.inputs[input]);
  if (!v) *unknown = true;
  return v;
}

// The activation the fused op applies for node, or nullopt when it is none it can.
std::optional<std::string> activation_of(const Graph& graph, const Node& node) {
  if (node.op == "Relu" && node.inputs.size() == 1) return std::string("relu");
  if (node.op != "Clip") return std::nullopt;
  bool unknown = false;
  std::optional<double> low = clip_bound(graph, node, 1, "min", &unknown);
  std::optional<double> high = clip_bound(graph, node, 2, "max", &unknown);
  if (unknown || low != 0.0) return std::nullopt;
  if (!high) return std::string("relu");
  if (*high == 6.0) return std::string("relu6");
  return std::nullopt;
}

}  // namespace

int fuse_depthwise_pointwise(Graph& graph) {
  int fused = 0;
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    if (!is_pointwise(graph, graph.nodes()[n])) continue;
    const Node& pointwise = graph.nodes()[n];
    if (graph.value(pointwise.outputs[0]).type.shape[2] < kMinFusedRows) continue;
    ValueId mid = pointwise.inputs[0];
    if (only_reader(graph, mid) != n) continue;
    int producer = graph.value(mid).producer;
    if (producer < 0) continue;
    std::string activation = "none";
    const Node* act = &graph.nodes()[producer];
    if (act->op != "NchwcDepthwiseConv") {
      std::optional<std::string> a = activation_of(graph, *act);
      if (!a || act->inputs[0] == kNoValue || only_reader(graph, act->inputs[0]) != producer) continue;
      activation = *a;
      producer = graph.value(act->inputs[0]).producer;
      if (producer < 0) continue;
    }
    const Node& depthwise = graph.nodes()[producer];
    if (depthwise.op != "NchwcDepthwiseConv") continue;
    std::vector<int64_t> dw_weight = graph.value(depthwise.inputs[1]).type.shape;  // [Cb, R, S, b]
    if (dw_weight[3] != graph.value(pointwise.inputs[1]).type.shape[4]) continue;
    ValueId bias = depthwise.inputs.size() > 2 ? depthwise.inputs[2] : kNoValue;
    if (bias == kNoValue) {
      bias = graph.add_constant(unused_name(graph, depthwise.name + "_bias_zero"),
                                NDArray::zeros({dw_weight[0], dw_weight[3]}, DataType::float32()));
    }
    Attributes attrs;
    for (const char* key : {"strides", "pads", "dilations"}) {
      if (depthwise.attrs.has(key)) attrs.set(key, depthwise.attrs.get_ints_or(key, {}));
    }
    attrs.set("activation", activation);
    attrs.set("in_channels", depthwise.attrs.get_int("channels"));
    attrs.set("channels", pointwise.attrs.get_int("channels"));
    std::vector<ValueId> inputs = {depthwise.inputs[0], depthwise.inputs[1], bias, pointwise.inputs[1]};
    if (pointwise.inputs.size() > 2 && pointwise.inputs[2] != kNoValue) inputs.push_back(pointwise.inputs[2]);
    Node& node = graph.nodes()[n];
    node.op = "NchwcDepthwisePointwiseConv";
    node.attrs = std::move(attrs);
    node.inputs = std::move(inputs);
    ++fused;
  }
  graph.remove_dead();
  return fused;
}

}  // namespace temper::graph
