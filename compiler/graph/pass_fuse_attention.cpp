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
  int last = -1;      // the node whose output the attention writes: the second MatMul, or the heads' transpose after it
  int64_t heads = 0;  // > 0: q, kt and v are the heads' layout before their transposes, kt then k (see the header)
  int q_reader = -1;  // the node reading q: the scores' MatMul, or the scale before it
};

// The input of v's producer when it is a Transpose by `perm` whose output only `reader`
// reads; kNoValue otherwise.
ValueId before_transpose(const Graph& graph, ValueId v, const std::vector<int64_t>& perm, int reader) {
  int producer = graph.value(v).producer;
  if (producer < 0 || only_reader(graph, v) != reader) return kNoValue;
  const Node& t = graph.nodes()[producer];
  if (t.op != "Transpose" || t.inputs.size() != 1 || t.attrs.get_ints_or("perm", {}) != perm) return kNoValue;
  return t.inputs[0];
}

// The heads' layout, when the chain's q, kt and v come out of the exporter's transposes to
// the heads ([N, S, H, D] -> [N, H, S, D], the keys to [N, H, D, T]) and its output goes
// through the transpose back ([N, H, S, E] -> [N, S, H, E]): the attention then reads and
// writes the arrays on the other side of them, and the transposes go.
void absorb_head_transposes(const Graph& graph, int first, AttentionMatch& match) {
  if (graph.value(match.q).type.shape.size() != 4) return;
  const std::vector<int64_t> to_heads = {0, 2, 1, 3};
  ValueId q = before_transpose(graph, match.q, to_heads, match.q_reader);
  ValueId k = before_transpose(graph, match.kt, {0, 2, 3, 1}, first);
  ValueId v = before_transpose(graph, match.v, to_heads, match.last);
  ValueId o = graph.nodes()[match.last].outputs[0];
  int back = only_reader(graph, o);
  if (q == kNoValue || k == kNoValue || v == kNoValue || back < 0) return;
  const Node& t = graph.nodes()[back];
  if (t.op != "Transpose" || t.attrs.get_ints_or("perm", {}) != to_heads) return;
  match.q = q;
  match.kt = k;
  match.v = v;
  match.last = back;
  match.heads = graph.value(q).type.shape[2];
}

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
  match.q_reader = first;
  // q scaled before the product (q / sqrt(D), as some exporters write it): the scale too.
  if (const Node* pre = node_as(graph, graph.value(match.q).producer, "Div", 2, q)) {
    std::optional<double> c = scalar_constant(graph, pre->inputs[1]);
    if (c && *c != 0 && only_reader(graph, match.q) == first) {
      match.scale = 1.0 / *c;
      match.q_reader = graph.value(match.q).producer;
      match.q = pre->inputs[0];
    }
  } else if (const Node* pre = node_as(graph, graph.value(match.q).producer, "Mul", 2, q)) {
    for (int side : {0, 1}) {
      std::optional<double> c = scalar_constant(graph, pre->inputs[side]);
      if (c && only_reader(graph, match.q) == first) {
        match.scale = *c;
        match.q_reader = graph.value(match.q).producer;
        match.q = pre->inputs[1 - side];
        break;
      }
    }
  }

  ValueId x = scores.outputs[0];
  int next = only_reader(graph, x);
  if (const Node* div = node_as(graph, next, "Div", 2, s)) {
    std::optional<double> c = scalar_constant(graph, div->inputs[1]);
    if (div->inputs[0] != x || !c || *c == 0) return std::nullopt;
    match.scale /= *c;
    x = div->outputs[0];
    next = only_reader(graph, x);
  } else if (const Node* mul = node_as(graph, next, "Mul", 2, s)) {
    std::optional<double> c = scalar_constant(graph, other_input(*mul, x));
    if (!c) return std::nullopt;
    match.scale *= *c;
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
  absorb_head_transposes(graph, first, match);
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
    if (match->heads > 0) node.attrs.set("heads", match->heads);
    node.inputs = {match->q, match->kt, match->v};
    if (match->mask != kNoValue) node.inputs.push_back(match->mask);
    ++fused;
  }
  graph.remove_dead();
  return fused;
}

}  // namespace temper::graph
