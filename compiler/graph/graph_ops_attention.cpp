// Attention, the internal op pass_fuse_attention.h writes in place of an exporter's
// MatMul, scale, mask Add, Softmax, MatMul chain (ops/attention.h):
//
//   Attention  Q [.., S, D], KT [.., D, T], V [.., T, E], optional Mask (see
//              attention_mask_rows) -> [.., S, E]; attr scale (float). The leading
//              extents (batch, heads) are the same on Q, KT and V. With attr heads = H:
//              Q [N, S, H, D], K [N, T, H, D], V [N, T, H, E] -> [N, S, H, E], the arrays
//              before the exporter's transposes to the heads and after the one back.
//
// Its compute reads the inputs as the [B, S, D], [B, D, T], [B, T, E] (or the heads'
// layout) and [MB, T] arrays of the ops library (reshapes of the same elements): a build
// computes it with the attention task's kernel, which reads the arrays in those shapes.
#include "compiler/graph/graph_ops_common.h"
#include "compiler/ops/attention.h"
#include "compiler/ops/shape.h"
#include "compiler/ops/transform.h"

namespace temper::graph::detail {

std::optional<int64_t> attention_mask_rows(const Shape& batch, int64_t keys, const Shape& mask) {
  size_t rank = batch.size() + 2;
  if (mask.size() > rank || mask.empty() || mask.back() != keys) return std::nullopt;
  Shape m(rank - mask.size(), 1);
  m.insert(m.end(), mask.begin(), mask.end());
  if (m[rank - 2] != 1) return std::nullopt;
  int64_t rows = 1;
  bool broadcast = false;  // past the dimensions the mask has in full
  for (size_t d = 0; d < batch.size(); ++d) {
    if (m[d] == batch[d] && !broadcast) {
      rows *= m[d];
    } else if (m[d] == 1) {
      broadcast = true;
    } else {
      return std::nullopt;
    }
  }
  return rows;
}

namespace {

struct AttentionShape;
int64_t mask_rows_of(const Graph& graph, const Node& node, const AttentionShape& a, const TensorType& q);

struct AttentionShape {
  Shape batch;  // the leading extents of the scores: [N, H] in the heads' layout
  int64_t B = 1, S = 0, T = 0, D = 0, E = 0;
  int64_t heads = 0;      // > 0: the heads' layout
  int64_t mask_rows = 0;  // 0: no mask
};

// Q [N, S, H, D], K [N, T, H, D], V [N, T, H, E].
AttentionShape heads_shape(const TensorType& q, const TensorType& k, const TensorType& v, int64_t heads) {
  if (q.shape.size() != 4 || k.shape.size() != 4 || v.shape.size() != 4 || q.shape[2] != heads ||
      k.shape != Shape{q.shape[0], k.shape[1], heads, q.shape[3]} || v.shape[0] != q.shape[0] ||
      v.shape[1] != k.shape[1] || v.shape[2] != heads) {
    throw UserError(str("with heads=", heads, ", Q ", q.to_string(), ", K ", k.to_string(), " and V ", v.to_string(),
                        " must be [N, S, ", heads, ", D], [N, T, ", heads, ", D] and [N, T, ", heads, ", E]"));
  }
  AttentionShape a;
  a.batch = {q.shape[0], heads};
  a.B = q.shape[0] * heads;
  a.S = q.shape[1];
  a.D = q.shape[3];
  a.T = k.shape[1];
  a.E = v.shape[3];
  a.heads = heads;
  return a;
}

AttentionShape attention_shape(const Graph& graph, const Node& node) {
  check_arity(node, 3, 4);
  const TensorType& q = input_type(graph, node, 0, "Q");
  const TensorType& kt = input_type(graph, node, 1, "KT");
  const TensorType& v = input_type(graph, node, 2, "V");
  check_float(q, "input Q");
  check_same_dtype(q, kt, "Q", "KT");
  check_same_dtype(q, v, "Q", "V");
  int64_t heads = node.attrs.get_int_or("heads", 0);
  if (heads > 0) {
    AttentionShape a = heads_shape(q, kt, v, heads);
    if (has_input(node, 3)) a.mask_rows = mask_rows_of(graph, node, a, q);
    return a;
  }
  size_t rank = q.shape.size();
  if (rank < 2 || kt.shape.size() != rank || v.shape.size() != rank) {
    throw UserError(
        str("Q ", q.to_string(), ", KT ", kt.to_string(), " and V ", v.to_string(), " must have one rank, at least 2"));
  }
  AttentionShape a;
  a.batch = Shape(q.shape.begin(), q.shape.end() - 2);
  if (Shape(kt.shape.begin(), kt.shape.end() - 2) != a.batch || Shape(v.shape.begin(), v.shape.end() - 2) != a.batch) {
    throw UserError(str("Q ", q.to_string(), ", KT ", kt.to_string(), " and V ", v.to_string(),
                        " must have the same leading extents"));
  }
  for (int64_t e : a.batch) a.B *= e;
  a.S = q.shape[rank - 2];
  a.D = q.shape[rank - 1];
  a.T = kt.shape[rank - 1];
  a.E = v.shape[rank - 1];
  if (kt.shape[rank - 2] != a.D || v.shape[rank - 2] != a.T) {
    throw UserError(str("KT ", kt.to_string(), " must be [.., ", a.D, ", T] and V ", v.to_string(),
                        " [.., T, E] for Q ", q.to_string()));
  }
  if (has_input(node, 3)) a.mask_rows = mask_rows_of(graph, node, a, q);
  return a;
}

// The mask's rows (attention_mask_rows) for scores [a.batch, S, T]; UserError for a mask
// of another shape.
int64_t mask_rows_of(const Graph& graph, const Node& node, const AttentionShape& a, const TensorType& q) {
  const TensorType& mask = input_type(graph, node, 3, "Mask");
  check_same_dtype(q, mask, "Q", "Mask");
  std::optional<int64_t> rows = attention_mask_rows(a.batch, a.T, mask.shape);
  if (!rows) {
    throw UserError(str("Mask ", mask.to_string(), " is no per-key mask [.., 1, ", a.T, "] for scores [",
                        ints_str(a.batch), ", ", a.S, ", ", a.T, "]"));
  }
  return *rows;
}

std::vector<TensorType> infer_attention(const Graph& graph, const Node& node) {
  AttentionShape a = attention_shape(graph, node);
  Shape out = a.heads > 0 ? Shape{a.batch[0], a.S, a.heads, a.E} : a.batch;
  if (a.heads == 0) out.insert(out.end(), {a.S, a.E});
  return {{out, input_type(graph, node, 0, "Q").dtype}};
}

std::vector<te::Tensor> compute_attention(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  AttentionShape a = attention_shape(graph, node);
  std::string name = output_name(graph, node, 0);
  double scale = node.attrs.get_float_or("scale", 1.0);
  te::Tensor mask;
  if (a.mask_rows > 0) mask = ops::reshape(in[3], {a.mask_rows, a.T}, name + "_mask");
  if (a.heads > 0) return {ops::attention(in[0], in[1], in[2], mask, scale, a.heads, name)};
  te::Tensor q = ops::reshape(in[0], {a.B, a.S, a.D}, name + "_q");
  te::Tensor kt = ops::reshape(in[1], {a.B, a.D, a.T}, name + "_kt");
  te::Tensor v = ops::reshape(in[2], {a.B, a.T, a.E}, name + "_v");
  te::Tensor out = ops::attention(q, kt, v, mask, scale, 0, name + "_attention");
  return {ops::reshape(out, graph.value(node.outputs[0]).type.shape, name)};
}

}  // namespace

std::vector<GraphOp> attention_graph_ops() {
  GraphOp op{"Attention", OpPattern::OutFusable, infer_attention, compute_attention};
  op.internal = true;
  return {op};
}

}  // namespace temper::graph::detail
