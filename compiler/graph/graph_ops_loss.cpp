// The ONNX loss ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (the log-softmax
// of the scores, then the first), as a model that reports its loss at inference computes
// them. Both take class scores [N, C] or [N, C, d1, ..., dk], integer targets [N] or
// [N, d1, ..., dk] in [0, C), optional per-class weights [C], an optional ignore_index
// (its elements count for nothing) and reduction "none" (the per-element losses), "sum"
// or "mean" (the sum divided by the sum of the weights of the elements not ignored).
#include <functional>
#include <optional>

#include "compiler/graph/graph_ops_common.h"
#include "compiler/ops/shape.h"

namespace temper::graph::detail {

namespace {

struct LossInputs {
  TensorType scores;
  TensorType target;
  std::string reduction;
};

// Checks the inputs; input 0 is the scores ("input" or "scores"), 1 the targets, 2 the
// optional weights.
LossInputs loss_inputs(const Graph& graph, const Node& node, int max_outputs) {
  check_arity(node, 2, 3, max_outputs);
  bool softmax = node.op == "SoftmaxCrossEntropyLoss";
  const TensorType& scores = input_type(graph, node, 0, softmax ? "scores" : "input");
  const TensorType& target = input_type(graph, node, 1, softmax ? "labels" : "target");
  check_float(scores, "the scores");
  if (target.dtype != DataType::int32() && target.dtype != DataType::int64()) {
    throw UserError(str("the targets are ", target.to_string(), "; they must be int32 or int64"));
  }
  Shape expected = scores.shape;
  if (expected.size() >= 2) expected.erase(expected.begin() + 1);
  if (scores.shape.size() < 2 || target.shape != expected) {
    throw UserError(str("scores ", scores.to_string(), " and targets ", target.to_string(),
                        " do not fit: scores are [N, C, d...] and targets [N, d...]"));
  }
  if (has_input(node, 2)) {
    const TensorType& weight = input_type(graph, node, 2, "weights");
    check_same_dtype(scores, weight, "the scores", "the weights");
    if (weight.shape != Shape{scores.shape[1]}) {
      throw UserError(str("the weights are ", weight.to_string(), "; they must be [", scores.shape[1], "] (C)"));
    }
  }
  std::string reduction = node.attrs.get_string_or("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    throw UserError(str("attribute reduction=\"", reduction, "\" is none of \"none\", \"sum\" and \"mean\""));
  }
  return {scores, target, reduction};
}

std::vector<TensorType> infer_loss(const Graph& graph, const Node& node) {
  LossInputs in = loss_inputs(graph, node, node.op == "SoftmaxCrossEntropyLoss" ? 2 : 1);
  std::vector<TensorType> out = {{in.reduction == "none" ? in.target.shape : Shape{}, in.scores.dtype}, in.scores};
  out.resize(node.outputs.size());
  return out;
}

// The loss of log-probabilities log_p (scores [N, C, d...]) against the targets.
te::Tensor nll_loss(const Node& node, const te::Tensor& log_p, const te::Tensor& target, const te::Tensor& weight,
                    const std::string& name) {
  Shape scores = static_shape(log_p);
  Shape points = static_shape(target);
  DataType t = log_p.dtype();
  std::optional<int64_t> ignore;
  if (node.attrs.has("ignore_index")) ignore = node.attrs.get_int("ignore_index");
  std::string reduction = node.attrs.get_string_or("reduction", "mean");
  // Per element: the class's weight (0 where ignored) and the weighted loss.
  auto class_of = [&](const std::vector<Expr>& at) { return target(at); };
  auto element_weight = [&](const std::vector<Expr>& at) {
    Expr c = class_of(at);
    Expr w = weight.defined() ? weight(std::vector<Expr>{min(max(cast(DataType::int32(), c), ops::index_const(0)),
                                                             ops::index_const(scores[1] - 1))})
                              : make_const(t, 1.0);
    if (ignore) w = select(c == make_const(c.dtype(), *ignore), make_const(t, 0.0), w);
    return w;
  };
  auto element_loss = [&](const std::vector<Expr>& at) {
    Expr c = min(max(cast(DataType::int32(), class_of(at)), ops::index_const(0)), ops::index_const(scores[1] - 1));
    std::vector<Expr> source = {at[0], c};
    source.insert(source.end(), at.begin() + 1, at.end());
    return -log_p(source) * element_weight(at);
  };
  auto vars = [](const std::vector<Var>& i) { return std::vector<Expr>(i.begin(), i.end()); };
  if (reduction == "none") {
    return te::compute(
        shape_exprs(points), [&](const std::vector<Var>& i) { return element_loss(vars(i)); }, name);
  }
  // Sums over every element of the targets: rank-0 stages.
  auto total = [&](const std::function<Expr(const std::vector<Expr>&)>& f, const std::string& stage) {
    return te::compute(
        {},
        [&](const std::vector<Var>&) {
          std::vector<IterVar> axes;
          std::vector<Expr> at;
          for (size_t d = 0; d < points.size(); ++d) {
            axes.push_back(te::reduce_axis({0, ops::index_const(points[d])}, "r" + std::to_string(d)));
            at.push_back(axes.back());
          }
          return te::sum(f(at), axes);
        },
        stage);
  };
  if (reduction == "sum") return total(element_loss, name);
  te::Tensor loss = total(element_loss, name + "_sum");
  te::Tensor weights = total(element_weight, name + "_weights");
  return te::compute(
      {}, [&](const std::vector<Var>&) { return loss(std::vector<Expr>{}) / weights(std::vector<Expr>{}); }, name);
}

std::vector<te::Tensor> compute_nll(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  te::Tensor weight = has_input(node, 2) ? in[2] : te::Tensor();
  return {nll_loss(node, in[0], in[1], weight, output_name(graph, node, 0))};
}

std::vector<te::Tensor> compute_softmax_cross_entropy(const Graph& graph, const Node& node,
                                                      const std::vector<te::Tensor>& in) {
  std::string name = output_name(graph, node, 0);
  bool with_log_prob = node.outputs.size() > 1;
  te::Tensor log_p = log_softmax(in[0], 1, with_log_prob ? output_name(graph, node, 1) : name + "_log_prob");
  te::Tensor weight = has_input(node, 2) ? in[2] : te::Tensor();
  std::vector<te::Tensor> out = {nll_loss(node, log_p, in[1], weight, name)};
  if (with_log_prob) out.push_back(log_p);
  return out;
}

}  // namespace

std::vector<GraphOp> loss_graph_ops() {
  return {
      {"NegativeLogLikelihoodLoss", OpPattern::Opaque, infer_loss, compute_nll},
      {"SoftmaxCrossEntropyLoss", OpPattern::Opaque, infer_loss, compute_softmax_cross_entropy},
  };
}

}  // namespace temper::graph::detail
