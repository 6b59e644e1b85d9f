#include "compiler/graph/pass_fuse_attention.h"

#include <optional>

#include "compiler/graph/graph_match.h"
#include "compiler/graph/graph_ops_common.h"

namespace temper::graph {
namespace {

struct AttentionMatch {
  ValueId q = kNoValue, kt = kNoValue, v = kNoValue;
  ValueId mask = kNoValue;  // kNoValue: no mask
  double scale = 1.0;
  int last = -1;  // the second MatMul
};

// The leading extents of a [.., rows, columns] type.
std::vector<int64_t> leading(const TensorType& t) {
  return {t.shape.begin(), t.shape.end() - 2};
}

// The pattern of the file comment starting at MatMul node `first`, or nullopt.
std::optional<AttentionMatch> match_attention(const Graph& graph, int first) {
  const Node& scores = graph.nodes()[first];
  if (scores.op != "MatMul" || scores.inputs.size() != 2 || scores.outputs.size() != 1) return std::nullopt;
  AttentionMatch match;
  match.q = scores.inputs[0];
  match.kt = scores.inputs[1];
  const TensorType& q = graph.value(match.q).type;
  const TensorType& kt = graph.value(match.kt).type;
  if (q.dtype != DataType::float32() || kt.dtype != q.dtype || q.shape.size() < 2 ||
      kt.shape.size() != q.shape.size() || leading(q) != leading(kt)) {
    return std::nullopt;
  }
  TensorType s = graph.value(scores.outputs[0]).type;
  int64_t keys = kt.shape.back();

  ValueId x = scores.outputs[0];
  int next = only_reader(graph, x);
  if (const Node* div = node_as(graph, next, "Div", 2, s)) {
    std::optional<double> c = scalar_constant(graph, div->inputs[1]);
    if (div->inputs[0] != x || !c || *c == 0) return std::nullopt;
    match.scale = 1.0 / *c;
    x = div->outputs[0];
    next = only_reader(graph, x);
  } else if (const Node* mul = node_as(graph, next, "Mul", 2, s)) {
    std::optional<double> c = scalar_constant(graph, other_input(*mul, x));
    if (!c) return std::nullopt;
    match.scale = *c;
    x = mul->outputs[0];
    next = only_reader(graph, x);
  }
  if (const Node* add = node_as(graph, next, "Add", 2, s)) {
    ValueId m = other_input(*add, x);
    if (m == kNoValue || m == x) return std::nullopt;
    const TensorType& mask = graph.value(m).type;
    if (mask.dtype != q.dtype || !detail::attention_mask_rows(leading(s), keys, mask.shape)) return std::nullopt;
    match.mask = m;
    x = add->outputs[0];
    next = only_reader(graph, x);
  }
  const Node* softmax = node_as(graph, next, "Softmax", 1, s);
  if (softmax == nullptr) return std::nullopt;
  int64_t axis = softmax->attrs.get_int_or("axis", graph.opset >= 13 ? -1 : 1);
  if (axis != -1 && axis != static_cast<int64_t>(s.shape.size()) - 1) return std::nullopt;

  int last = only_reader(graph, softmax->outputs[0]);
  if (last < 0) return std::nullopt;
  const Node& product = graph.nodes()[last];
  if (product.op != "MatMul" || product.inputs.size() != 2 || product.inputs[0] != softmax->outputs[0]) {
    return std::nullopt;
  }
  match.v = product.inputs[1];
  const TensorType& v = graph.value(match.v).type;
  if (v.dtype != q.dtype || v.shape.size() != q.shape.size() || leading(v) != leading(q) ||
      v.shape[v.shape.size() - 2] != keys) {
    return std::nullopt;
  }
  match.last = last;
  return match;
}

}  // namespace

int fuse_attention(Graph& graph) {
  int fused = 0;
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    std::optional<AttentionMatch> match = match_attention(graph, n);
    if (!match) continue;
    // The second MatMul computes the whole attention under its output's name; the nodes
    // before it are then read by nothing, and remove_dead drops them.
    Node& node = graph.nodes()[match->last];
    node.op = "Attention";
    node.attrs = Attributes();
    node.attrs.set("scale", match->scale);
    node.inputs = {match->q, match->kt, match->v};
    if (match->mask != kNoValue) node.inputs.push_back(match->mask);
    ++fused;
  }
  graph.remove_dead();
  return fused;
}

}  // namespace temper::graph
