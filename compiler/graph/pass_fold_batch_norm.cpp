#include "compiler/graph/pass_fold_batch_norm.h"

#include <algorithm>
#include <cmath>

#include "compiler/ir/error.h"

namespace temper::graph {
namespace {

int count_uses(const Graph& graph, ValueId v) {
  int uses = 0;
  for (const Node& node : graph.nodes())
    uses += static_cast<int>(std::count(node.inputs.begin(), node.inputs.end(), v));
  return uses;
}

bool is_constant(const Graph& graph, const Node& node, size_t i) {
  return i < node.inputs.size() && node.inputs[i] != kNoValue && graph.value(node.inputs[i]).constant.has_value();
}

// base, or base with the first free "_<k>" suffix.
std::string unused_name(const Graph& graph, const std::string& base) {
  std::string name = base;
  for (int k = 1; graph.find(name) != kNoValue; ++k) name = str(base, "_", k);
  return name;
}

// The conv node whose output `bn` may absorb, or -1.
int foldable_conv(const Graph& graph, const Node& bn) {
  if (bn.inputs.size() != 5 || bn.outputs.size() != 1 || bn.inputs[0] == kNoValue) return -1;
  for (size_t i = 1; i < 5; ++i) {
    if (!is_constant(graph, bn, i)) return -1;
  }
  ValueId x = bn.inputs[0];
  int conv_index = graph.value(x).producer;
  if (conv_index < 0) return -1;
  const Node& conv = graph.nodes()[conv_index];
  if (conv.op != "Conv" || conv.outputs.size() != 1) return -1;
  bool is_output = std::find(graph.outputs().begin(), graph.outputs().end(), x) != graph.outputs().end();
  if (is_output || count_uses(graph, x) != 1) return -1;
  if (!is_constant(graph, conv, 1)) return -1;
  bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != kNoValue;
  if (has_bias && !is_constant(graph, conv, 2)) return -1;
  DataType dtype = graph.value(x).type.dtype;
  if (!dtype.is_float()) return -1;
  for (size_t i = 1; i < 5; ++i) {
    if (graph.value(bn.inputs[i]).type.dtype != dtype) return -1;
  }
  if (graph.value(conv.inputs[1]).type.dtype != dtype) return -1;
  return conv_index;
}

}  // namespace

BatchNormAffine batch_norm_affine(const Graph& graph, const Node& bn) {
  auto param = [&](int i) -> const NDArray& {
    TEMPER_CHECK(is_constant(graph, bn, i), "BatchNormalization '", bn.name, "': input ", i, " is not a constant");
    return *graph.value(bn.inputs[i]).constant;
  };
  const NDArray &gamma = param(1), &beta = param(2), &mean = param(3), &var = param(4);
  double epsilon = bn.attrs.get_float_or("epsilon", 1e-5);
  BatchNormAffine affine;
  for (int64_t c = 0; c < gamma.size(); ++c) {
    double s = gamma.get(c) / std::sqrt(var.get(c) + epsilon);
    affine.scale.push_back(s);
    affine.shift.push_back(beta.get(c) - mean.get(c) * s);
  }
  return affine;
}

int fold_batch_norm(Graph& graph) {
  int folded = 0;
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    if (graph.nodes()[n].op != "BatchNormalization") continue;
    int c = foldable_conv(graph, graph.nodes()[n]);
    if (c < 0) continue;
    const Node& bn = graph.nodes()[n];
    BatchNormAffine affine = batch_norm_affine(graph, bn);

    const Node& conv = graph.nodes()[c];
    const NDArray& weights = *graph.value(conv.inputs[1]).constant;
    int64_t channels = weights.shape()[0];
    TEMPER_CHECK(static_cast<int64_t>(affine.scale.size()) == channels, "BatchNormalization '", bn.name, "' has ",
                 affine.scale.size(), " channels after a conv with ", channels, " output channels");
    bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != kNoValue;
    int64_t per_channel = weights.size() / channels;
    NDArray new_weights = NDArray::empty(weights.shape(), weights.dtype());
    NDArray new_bias = NDArray::empty({channels}, weights.dtype());
    for (int64_t m = 0; m < channels; ++m) {
      double s = affine.scale[m];
      for (int64_t i = m * per_channel; i < (m + 1) * per_channel; ++i) new_weights.set(i, weights.get(i) * s);
      double bias = has_bias ? graph.value(conv.inputs[2]).constant->get(m) : 0.0;
      new_bias.set(m, bias * s + affine.shift[m]);
    }
    std::string conv_name = conv.name;
    ValueId w = graph.add_constant(unused_name(graph, conv_name + "_bn_weight"), new_weights);
    ValueId b = graph.add_constant(unused_name(graph, conv_name + "_bn_bias"), new_bias);

    // The conv writes BN's output; BN is left computing the old conv output from it,
    // which nothing reads, so remove_dead drops it.
    Node& conv_node = graph.nodes()[c];
    Node& bn_node = graph.nodes()[n];
    ValueId conv_out = conv_node.outputs[0];
    ValueId bn_out = bn_node.outputs[0];
    conv_node.inputs.resize(3);
    conv_node.inputs[1] = w;
    conv_node.inputs[2] = b;
    conv_node.outputs[0] = bn_out;
    graph.value(bn_out).producer = c;
    bn_node.inputs[0] = bn_out;
    bn_node.outputs[0] = conv_out;
    graph.value(conv_out).producer = n;
    ++folded;
  }
  graph.remove_dead();
  return folded;
}

}  // namespace temper::graph
