#include "compiler/graph/pass_recognize_gelu.h"

#include <cmath>
#include <numbers>
#include <optional>

#include "compiler/graph/graph_match.h"

namespace temper::graph {
namespace {

// Whether v is a one-element constant within a relative 1e-4 of target: exporters write
// sqrt(2) and friends rounded to float32, or to fewer digits.
bool is_constant_near(const Graph& graph, ValueId v, double target) {
  std::optional<double> c = scalar_constant(graph, v);
  return c && std::abs(*c - target) <= 1e-4 * std::abs(target);
}

// The input of binary node `node` (either side) that is not the constant near `target`;
// kNoValue when neither input is such a constant.
ValueId beside_constant(const Graph& graph, const Node& node, double target) {
  if (is_constant_near(graph, node.inputs[1], target)) return node.inputs[0];
  if (is_constant_near(graph, node.inputs[0], target)) return node.inputs[1];
  return kNoValue;
}

// The node writing v when it is `op` with `arity` inputs, of type `type`, and v is read
// only by node `reader`; nullptr otherwise.
const Node* producer_for(const Graph& graph, ValueId v, const std::string& op, size_t arity, const TensorType& type,
                         int reader) {
  if (only_reader(graph, v) != reader) return nullptr;
  return node_as(graph, graph.value(v).producer, op, arity, type);
}

// x when Erf node `erf` reads x / sqrt(2) (see the file comment); kNoValue otherwise.
ValueId erf_source(const Graph& graph, int erf, const TensorType& type) {
  ValueId scaled = graph.nodes()[erf].inputs[0];
  if (const Node* div = producer_for(graph, scaled, "Div", 2, type, erf)) {
    return is_constant_near(graph, div->inputs[1], std::numbers::sqrt2) ? div->inputs[0] : kNoValue;
  }
  if (const Node* mul = producer_for(graph, scaled, "Mul", 2, type, erf)) {
    return beside_constant(graph, *mul, 1.0 / std::numbers::sqrt2);
  }
  return kNoValue;
}

// Whether `term` is 0.044715 x^3, read only by node `reader` (see the file comment).
bool is_cubic_term(const Graph& graph, ValueId term, ValueId x, int reader, const TensorType& type) {
  const Node* scale = producer_for(graph, term, "Mul", 2, type, reader);
  if (scale == nullptr) return false;
  ValueId cube = beside_constant(graph, *scale, 0.044715);
  if (cube == kNoValue) return false;
  int scale_index = graph.value(term).producer;
  if (const Node* pow = producer_for(graph, cube, "Pow", 2, type, scale_index)) {
    const std::optional<NDArray>& exponent = graph.value(pow->inputs[1]).constant;
    return pow->inputs[0] == x && exponent && exponent->size() == 1 && exponent->get(0) == 3.0;
  }
  const Node* cube_mul = producer_for(graph, cube, "Mul", 2, type, scale_index);
  if (cube_mul == nullptr) return false;
  ValueId square = other_input(*cube_mul, x);
  if (square == kNoValue) return false;
  const Node* square_mul = producer_for(graph, square, "Mul", 2, type, graph.value(cube).producer);
  return square_mul != nullptr && square_mul->inputs[0] == x && square_mul->inputs[1] == x;
}

// x when Tanh node `tanh` reads sqrt(2/pi) (x + 0.044715 x^3); kNoValue otherwise.
ValueId tanh_source(const Graph& graph, int tanh, const TensorType& type) {
  ValueId argument = graph.nodes()[tanh].inputs[0];
  const Node* scale = producer_for(graph, argument, "Mul", 2, type, tanh);
  if (scale == nullptr) return kNoValue;
  ValueId sum = beside_constant(graph, *scale, std::sqrt(2.0 / std::numbers::pi));
  if (sum == kNoValue) return kNoValue;
  const Node* add = producer_for(graph, sum, "Add", 2, type, graph.value(argument).producer);
  if (add == nullptr) return kNoValue;
  int add_index = graph.value(sum).producer;
  for (int side : {0, 1}) {
    ValueId x = add->inputs[side];
    if (graph.value(x).type == type && is_cubic_term(graph, add->inputs[1 - side], x, add_index, type)) return x;
  }
  return kNoValue;
}

// The node writing 0.5 x (1 + f) from f, the output of node `squash` (see the file
// comment); -1 when it is not there.
int gelu_product(const Graph& graph, int squash, ValueId x, const TensorType& type) {
  ValueId f = graph.nodes()[squash].outputs[0];
  const Node* add = node_as(graph, only_reader(graph, f), "Add", 2, type);
  if (add == nullptr || !is_constant_near(graph, other_input(*add, f), 1.0)) return -1;
  ValueId shifted = add->outputs[0];
  int mul_index = only_reader(graph, shifted);
  const Node* mul = node_as(graph, mul_index, "Mul", 2, type);
  if (mul == nullptr) return -1;
  ValueId factor = other_input(*mul, shifted);
  if (factor == kNoValue) return -1;
  if (factor == x || is_constant_near(graph, factor, 0.5)) {
    // (x * p) * 0.5 or x * (p * 0.5): one more Mul by the factor not yet read.
    ValueId product = mul->outputs[0];
    int last = only_reader(graph, product);
    const Node* outer = node_as(graph, last, "Mul", 2, type);
    if (outer == nullptr) return -1;
    ValueId rest = other_input(*outer, product);
    bool completes = factor == x ? is_constant_near(graph, rest, 0.5) : rest == x;
    return completes ? last : -1;
  }
  // (x * 0.5) * p
  const Node* half = producer_for(graph, factor, "Mul", 2, type, mul_index);
  if (half == nullptr || beside_constant(graph, *half, 0.5) != x) return -1;
  return mul_index;
}

struct GeluMatch {
  ValueId x = kNoValue;
  std::string approximate;  // Gelu's attribute: "none" (Erf) or "tanh"
  int last = -1;            // the node writing the pattern's result
};

// The pattern of the file comment around Erf or Tanh node `squash`, or nullopt.
std::optional<GeluMatch> match_gelu(const Graph& graph, int squash) {
  const Node& node = graph.nodes()[squash];
  if ((node.op != "Erf" && node.op != "Tanh") || node.inputs.size() != 1 || node.outputs.size() != 1) {
    return std::nullopt;
  }
  const TensorType& type = graph.value(node.inputs[0]).type;
  if (!type.known() || !type.dtype.is_float() || graph.value(node.outputs[0]).type != type) return std::nullopt;
  GeluMatch match;
  match.approximate = node.op == "Erf" ? "none" : "tanh";
  match.x = node.op == "Erf" ? erf_source(graph, squash, type) : tanh_source(graph, squash, type);
  if (match.x == kNoValue || graph.value(match.x).type != type) return std::nullopt;
  match.last = gelu_product(graph, squash, match.x, type);
  if (match.last < 0) return std::nullopt;
  return match;
}

}  // namespace

int recognize_gelu(Graph& graph) {
  if (graph.opset < 7) return 0;
  int recognized = 0;
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    std::optional<GeluMatch> match = match_gelu(graph, n);
    if (!match) continue;
    // The pattern's last node computes the whole GELU under its output's name; the nodes
    // before it are then read by nothing, and remove_dead drops them.
    Node& node = graph.nodes()[match->last];
    node.op = "Gelu";
    node.attrs = Attributes();
    node.attrs.set("approximate", match->approximate);
    node.inputs = {match->x};
    ++recognized;
  }
  graph.remove_dead();
  return recognized;
}

}  // namespace temper::graph
