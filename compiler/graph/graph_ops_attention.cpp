// Attention, the internal op pass_fuse_attention.h writes in place of an exporter's
// MatMul, scale, mask Add, Softmax, MatMul chain (ops/attention.h):
//
//   Attention  Q [.., S, D], KT [.., D, T], V [.., T, E], optional Mask (see
//              attention_mask_rows) -> [.., S, E]; attr scale (float). The leading
//              extents (batch, heads) are the same on Q, KT and V.
//
// Its compute reads the inputs as the [B, S, D], [B, D, T], [B, T, E] and [MB, T] arrays
// of the ops library (reshapes of the same elements): a build computes it with the
// attention task's kernel, which reads the arrays in those shapes directly.
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

struct AttentionShape {
  Shape batch;  // the leading extents
  int64_t B = 1, S = 0, T = 0, D = 0, E = 0;
  int64_t mask_rows = 0;  // 0: no mask
};

AttentionShape attention_shape(const Graph& graph, const Node& node) {
  check_arity(node, 3, 4);
  const TensorType& q = input_type(graph, node, 0, "Q");
  const TensorType& kt = input_type(graph, node, 1, "KT");
  const TensorType& v = input_type(graph, node, 2, "V");
  check_float(q, "input Q");
  check_same_dtype(q, kt, "Q", "KT");
  check_same_dtype(q, v, "Q", "V");
  size_t rank = q.shape.size();
  if (rank < 2 || kt.shape.size() != rank || v.shape.size() != rank) {
    throw UserError(str("Q ", q.to_string(), ", KT ", kt.to_string(), " and V ", v.to_string(),
                        " must have one rank, at least 2"));
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
    throw UserError(str("KT ", kt.to_string(), " must be [.., ", a.D, ", T] and V ", v.to_string(), " [.., T, E] for Q ",
                        q.to_string()));
  }
  if (has_input(node, 3)) {
    const TensorType& mask = input_type(graph, node, 3, "Mask");
    check_same_dtype(q, mask, "Q", "Mask");
    std::optional<int64_t> rows = attention_mask_rows(a.batch, a.T, mask.shape);
    if (!rows) {
      throw UserError(str("Mask ", mask.to_string(), " is no per-key mask [.., 1, ", a.T, "] for scores [",
                          ints_str(a.batch), ", ", a.S, ", ", a.T, "]"));
    }
    a.mask_rows = *rows;
  }
  return a;
}

std::vector<TensorType> infer_attention(const Graph& graph, const Node& node) {
  AttentionShape a = attention_shape(graph, node);
  Shape out = a.batch;
  out.insert(out.end(), {a.S, a.E});
  return {{out, input_type(graph, node, 0, "Q").dtype}};
}

std::vector<te::Tensor> compute_attention(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  AttentionShape a = attention_shape(graph, node);
  std::string name = output_name(graph, node, 0);
  te::Tensor q = ops::reshape(in[0], {a.B, a.S, a.D}, name + "_q");
  te::Tensor kt = ops::reshape(in[1], {a.B, a.D, a.T}, name + "_kt");
  te::Tensor v = ops::reshape(in[2], {a.B, a.T, a.E}, name + "_v");
  te::Tensor mask;
  if (a.mask_rows > 0) mask = ops::reshape(in[3], {a.mask_rows, a.T}, name + "_mask");
  double scale = node.attrs.get_float_or("scale", 1.0);
  te::Tensor out = ops::attention(q, kt, v, mask, scale, name + "_attention");
  return {ops::reshape(out, graph.value(node.outputs[0]).type.shape, name)};
}

}  // namespace

std::vector<GraphOp> attention_graph_ops() {
  GraphOp op{"Attention", OpPattern::OutFusable, infer_attention, compute_attention};
  op.internal = true;
  return {op};
}

}  // namespace temper::graph::detail
