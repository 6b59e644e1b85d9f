#include "compiler/graph/pass_recognize_layer_norm.h"

#include <optional>

#include "compiler/graph/graph_match.h"
#include "compiler/ir/error.h"

namespace temper::graph {
namespace {

// Whether node n is a ReduceMean of the given output type over exactly the last of `rank`
// dimensions (absent axes: all): the axes an attribute, or from opset 18 a constant input.
const Node* mean_of_last_axis(const Graph& graph, int n, const TensorType& type, int64_t rank) {
  const Node* reduce = node_as(graph, n, "ReduceMean", 1, type);
  if (reduce == nullptr && graph.opset >= 18) reduce = node_as(graph, n, "ReduceMean", 2, type);
  if (reduce == nullptr) return nullptr;
  std::vector<int64_t> axes = reduce->attrs.get_ints_or("axes", {});
  if (reduce->inputs.size() == 2) {
    if (reduce->inputs[1] == kNoValue) return nullptr;
    const Value& given = graph.value(reduce->inputs[1]);
    if (!given.constant) return nullptr;
    for (int64_t k = 0; k < given.constant->size(); ++k) axes.push_back(static_cast<int64_t>(given.constant->get(k)));
  }
  bool last = axes.empty() ? rank == 1 : axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1);
  return last ? reduce : nullptr;
}

// Whether constant v can serve as LayerNormalization's Scale or B over the last extent
// `extent` of x: x's dtype, every dimension 1 but the last, which is 1 or `extent`.
bool is_last_axis_parameter(const Graph& graph, ValueId v, const TensorType& x) {
  const Value& value = graph.value(v);
  if (!value.constant || value.type.dtype != x.dtype || value.type.shape.size() > x.shape.size()) return false;
  const std::vector<int64_t>& shape = value.type.shape;
  for (size_t d = 0; d + 1 < shape.size(); ++d) {
    if (shape[d] != 1) return false;
  }
  return shape.empty() || shape.back() == 1 || shape.back() == x.shape.back();
}

// Constant v as a [extent] array, a one-element one repeated.
NDArray as_last_axis_array(const NDArray& v, int64_t extent) {
  NDArray out = NDArray::empty({extent}, v.dtype());
  for (int64_t k = 0; k < extent; ++k) out.set(k, v.get(v.size() == 1 ? 0 : k));
  return out;
}

NDArray ones(int64_t extent, DataType dtype) {
  NDArray out = NDArray::empty({extent}, dtype);
  for (int64_t k = 0; k < extent; ++k) out.set(k, 1.0);
  return out;
}

struct LayerNormMatch {
  ValueId x = kNoValue;
  double epsilon = 0;
  ValueId gamma = kNoValue;  // kNoValue: no Mul
  ValueId beta = kNoValue;   // kNoValue: no Add
  int last = -1;             // the node writing the pattern's result
};

// The pattern of the file comment starting at ReduceMean node `first`, or nullopt.
std::optional<LayerNormMatch> match_layer_norm(const Graph& graph, int first) {
  const Node& first_node = graph.nodes()[first];
  if (first_node.op != "ReduceMean" || first_node.inputs.empty() || first_node.outputs.size() != 1) {
    return std::nullopt;
  }
  LayerNormMatch match;
  match.x = first_node.inputs[0];
  const TensorType& full = graph.value(match.x).type;
  if (!full.known() || !full.dtype.is_float() || full.shape.empty()) return std::nullopt;
  int64_t rank = static_cast<int64_t>(full.shape.size());
  TensorType stats = full;
  stats.shape.back() = 1;
  const Node* mean_node = mean_of_last_axis(graph, first, stats, rank);
  if (mean_node == nullptr) return std::nullopt;
  const Node& mean = *mean_node;

  ValueId mean_out = mean.outputs[0];
  const Node* sub = node_as(graph, only_reader(graph, mean_out), "Sub", 2, full);
  if (sub == nullptr || sub->inputs[0] != match.x || sub->inputs[1] != mean_out) return std::nullopt;
  ValueId d = sub->outputs[0];
  if (is_output(graph, d)) return std::nullopt;
  // d is read by the square (once as Pow's base, twice by Mul(d, d)) and then by the Div.
  std::vector<int> d_readers = readers(graph, d);
  if (d_readers.size() < 2) return std::nullopt;
  int square_index = d_readers[0];
  const Node* square = node_as(graph, square_index, "Pow", 2, full);
  size_t square_reads = 1;
  if (square != nullptr) {
    if (square->inputs[0] != d || scalar_constant(graph, square->inputs[1]) != 2.0) return std::nullopt;
  } else {
    square = node_as(graph, square_index, "Mul", 2, full);
    if (square == nullptr || square->inputs[0] != d || square->inputs[1] != d) return std::nullopt;
    square_reads = 2;
  }
  if (d_readers.size() != square_reads + 1) return std::nullopt;

  const Node* var = mean_of_last_axis(graph, only_reader(graph, square->outputs[0]), stats, rank);
  if (var == nullptr) return std::nullopt;
  const Node* add_eps = node_as(graph, only_reader(graph, var->outputs[0]), "Add", 2, stats);
  if (add_eps == nullptr) return std::nullopt;
  std::optional<double> epsilon = scalar_constant(graph, other_input(*add_eps, var->outputs[0]));
  if (!epsilon) return std::nullopt;
  match.epsilon = *epsilon;
  const Node* sqrt = node_as(graph, only_reader(graph, add_eps->outputs[0]), "Sqrt", 1, stats);
  if (sqrt == nullptr) return std::nullopt;
  ValueId s = sqrt->outputs[0];
  int div_index = only_reader(graph, s);
  const Node* div = node_as(graph, div_index, "Div", 2, full);
  if (div == nullptr || div->inputs[0] != d || div->inputs[1] != s || d_readers.back() != div_index) {
    return std::nullopt;
  }

  // The optional scale and shift: each a binary node reading the result so far and a
  // constant parameter, the result's only reader.
  match.last = div_index;
  auto extend = [&](const std::string& op, ValueId* parameter) {
    ValueId result = graph.nodes()[match.last].outputs[0];
    int next = only_reader(graph, result);
    const Node* node = node_as(graph, next, op, 2, full);
    if (node == nullptr) return;
    ValueId other = other_input(*node, result);
    if (other == kNoValue || !is_last_axis_parameter(graph, other, full)) return;
    *parameter = other;
    match.last = next;
  };
  extend("Mul", &match.gamma);
  extend("Add", &match.beta);
  return match;
}

}  // namespace

int recognize_layer_norm(Graph& graph) {
  if (graph.opset < 7) return 0;
  int recognized = 0;
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    std::optional<LayerNormMatch> match = match_layer_norm(graph, n);
    if (!match) continue;
    int64_t extent = graph.value(match->x).type.shape.back();
    DataType dtype = graph.value(match->x).type.dtype;
    std::string name = graph.nodes()[match->last].name;
    // Scale and B as [extent] arrays, as LayerNormalization over the last axis reads them.
    auto parameter = [&](ValueId v, const std::string& suffix) {
      if (graph.value(v).type.shape == std::vector<int64_t>{extent}) return v;
      return graph.add_constant(unused_name(graph, name + suffix),
                                as_last_axis_array(*graph.value(v).constant, extent));
    };
    ValueId scale = match->gamma != kNoValue
                        ? parameter(match->gamma, "_scale")
                        : graph.add_constant(unused_name(graph, name + "_scale"), ones(extent, dtype));
    std::vector<ValueId> inputs = {match->x, scale};
    if (match->beta != kNoValue) inputs.push_back(parameter(match->beta, "_bias"));

    // The pattern's last node computes the whole normalisation under its output's name;
    // the nodes before it are then read by nothing, and remove_dead drops them.
    Node& node = graph.nodes()[match->last];
    node.op = "LayerNormalization";
    node.attrs = Attributes();
    node.attrs.set("axis", int64_t{-1});
    node.attrs.set("epsilon", match->epsilon);
    node.inputs = inputs;
    ++recognized;
  }
  graph.remove_dead();
  return recognized;
}

}  // namespace temper::graph
