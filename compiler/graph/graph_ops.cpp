// The op table: the families of graph_ops_*.cpp joined and sorted, each op's infer and
// compute wrapped so that their errors name the node; and the helpers the families share
// (graph_ops_common.h).
#include "compiler/graph/graph_ops.h"

#include <algorithm>
#include <cctype>

#include "compiler/graph/graph_ops_common.h"
#include "compiler/graph/onnx_tensor.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/text.h"

namespace temper::graph {

namespace {

// f(), with every UserError it throws prefixed by "<op> node '<name>': ", keeping its type.
template <typename F>
auto naming(const Node& node, F&& f) {
  std::string context = str(node.op, " node '", node.name, "': ");
  try {
    return f();
  } catch (const ConstantRequiredError& e) {
    throw ConstantRequiredError(context + e.what(), e.value());
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(context + e.what());
  } catch (const UserError& e) {
    throw UserError(context + e.what());
  }
}

// The op with every UserError its infer, compute or evaluate throws naming the node.
GraphOp naming_the_node(GraphOp op) {
  op.infer = [infer = std::move(op.infer)](const Graph& graph, const Node& node) {
    return naming(node, [&] { return infer(graph, node); });
  };
  op.compute = [compute = std::move(op.compute)](const Graph& graph, const Node& node,
                                                 const std::vector<te::Tensor>& inputs) {
    return naming(node, [&] { return compute(graph, node, inputs); });
  };
  if (op.evaluate) {
    op.evaluate = [evaluate = std::move(op.evaluate)](const Graph& graph, const Node& node) {
      return naming(node, [&] { return evaluate(graph, node); });
    };
  }
  return op;
}

const std::vector<GraphOp>& table() {
  static const std::vector<GraphOp> ops = [] {
    std::vector<GraphOp> all;
    for (auto family :
         {detail::elementwise_graph_ops, detail::logical_graph_ops, detail::nn_graph_ops, detail::reduce_graph_ops,
          detail::shape_graph_ops, detail::tensor_graph_ops, detail::loss_graph_ops, detail::conv_transpose_graph_ops,
          detail::resize_graph_ops, detail::einsum_graph_ops, detail::nchwc_graph_ops, detail::attention_graph_ops}) {
      for (GraphOp& op : family()) all.push_back(naming_the_node(std::move(op)));
    }
    std::sort(all.begin(), all.end(), [](const GraphOp& a, const GraphOp& b) { return a.op < b.op; });
    for (size_t i = 1; i < all.size(); ++i) TEMPER_CHECK(all[i - 1].op != all[i].op, "op ", all[i].op, " twice");
    return all;
  }();
  return ops;
}

}  // namespace

const GraphOp* find_graph_op(const std::string& op) {
  const std::vector<GraphOp>& ops = table();
  auto it =
      std::lower_bound(ops.begin(), ops.end(), op, [](const GraphOp& a, const std::string& b) { return a.op < b; });
  return it != ops.end() && it->op == op ? &*it : nullptr;
}

std::vector<std::string> supported_graph_ops() {
  std::vector<std::string> names;
  for (const GraphOp& op : table()) {
    if (!op.internal) names.push_back(op.op);
  }
  return names;
}

namespace detail {

void check_arity(const Node& node, int min_inputs, int max_inputs, int max_outputs) {
  int inputs = static_cast<int>(node.inputs.size());
  if (inputs < min_inputs || inputs > max_inputs) {
    std::string expected = min_inputs == max_inputs ? str(min_inputs) : str(min_inputs, " to ", max_inputs);
    throw UserError(str("has ", plural(inputs, "input"), "; ", node.op, " takes ", expected));
  }
  if (static_cast<int>(node.outputs.size()) > max_outputs) {
    throw UnsupportedError(str("has ", plural(static_cast<int64_t>(node.outputs.size()), "output"),
                               "; Temper computes ", node.op, "'s first ", max_outputs, " only"));
  }
}

bool has_input(const Node& node, int i) {
  return i < static_cast<int>(node.inputs.size()) && node.inputs[i] != kNoValue;
}

const TensorType& input_type(const Graph& graph, const Node& node, int i, const std::string& role) {
  if (!has_input(node, i)) throw UserError(str("input ", i, " (", role, ") is missing"));
  const Value& value = graph.value(node.inputs[i]);
  if (!value.type.known()) {
    throw UserError(str("input ", i, " (", role, ") '", value.name, "' has no type yet: its producer must come first"));
  }
  return value.type;
}

const NDArray& constant_input(const Graph& graph, const Node& node, int i, const std::string& role) {
  input_type(graph, node, i, role);
  const Value& value = graph.value(node.inputs[i]);
  if (!value.constant) {
    throw ConstantRequiredError(
        str("input ", i, " (", role, ") '", value.name,
            "' must be a constant: Temper needs its value at compile time (bind the graph input as a "
            "constant, or let constant folding compute it)"),
        value.name);
  }
  return *value.constant;
}

std::vector<int64_t> constant_ints(const Graph& graph, const Node& node, int i, const std::string& role) {
  const NDArray& data = constant_input(graph, node, i, role);
  if (!data.dtype().is_integer()) {
    throw UserError(str("input ", i, " (", role, ") '", graph.value(node.inputs[i]).name, "' is ", data.dtype(),
                        "; it must hold integers"));
  }
  std::vector<int64_t> values(data.size());
  if (data.dtype() == DataType::int64()) {
    std::copy_n(data.data_as<int64_t>(), data.size(), values.begin());
  } else {
    for (int64_t k = 0; k < data.size(); ++k) values[k] = static_cast<int64_t>(data.get(k));
  }
  return values;
}

std::vector<int64_t> ints_attr(const Node& node, const std::string& name, size_t count, int64_t fallback) {
  if (!node.attrs.has(name)) return std::vector<int64_t>(count, fallback);
  std::vector<int64_t> values = node.attrs.get_ints_or(name, {});
  if (values.size() != count) {
    throw UserError(str("attribute ", name, "=", ints_str(values), " has ",
                        plural(static_cast<int64_t>(values.size()), "value"), " but must have ", count));
  }
  return values;
}

int normalize_axis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank) {
    throw UserError(
        str(what, " ", axis, " is out of range for rank ", rank, " (accepted: ", -rank, " to ", rank - 1, ")"));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

Shape broadcast_shapes(const TensorType& a, const TensorType& b) {
  size_t rank = std::max(a.shape.size(), b.shape.size());
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d) {
    // The inputs align at their last dimension; a missing leading one counts as 1.
    int64_t ea = d + a.shape.size() >= rank ? a.shape[d + a.shape.size() - rank] : 1;
    int64_t eb = d + b.shape.size() >= rank ? b.shape[d + b.shape.size() - rank] : 1;
    if (ea != eb && ea != 1 && eb != 1) {
      throw UserError(str("inputs ", a.to_string(), " and ", b.to_string(), " do not broadcast: dimension ", d,
                          " of the result would be both ", ea, " and ", eb, "; extents must be equal or 1"));
    }
    out[d] = ea == 1 ? eb : ea;
  }
  return out;
}

Expr broadcast_load(const te::Tensor& t, const std::vector<Var>& i) {
  Shape shape = static_shape(t);
  size_t offset = i.size() - shape.size();
  std::vector<Expr> index;
  for (size_t d = 0; d < shape.size(); ++d) {
    index.push_back(shape[d] == 1 ? make_const(DataType::int32(), int64_t{0}) : Expr(i[d + offset]));
  }
  return t(index);
}

void check_float(const TensorType& type, const std::string& what) {
  if (!type.dtype.is_float()) throw UserError(str(what, " must be floating point, got ", type.to_string()));
}

void check_same_dtype(const TensorType& a, const TensorType& b, const std::string& a_role, const std::string& b_role) {
  if (a.dtype != b.dtype) {
    throw UserError(str(a_role, " is ", a.to_string(), " but ", b_role, " is ", b.to_string(),
                        "; they must have one element type"));
  }
}

std::string output_name(const Graph& graph, const Node& node, int o) {
  std::string name;
  for (char c : graph.value(node.outputs.at(o)).name) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  // Exporters name values "0", "123": an identifier starts with a letter.
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "v" + name;
  return name;
}

std::vector<Expr> shape_exprs(const Shape& shape) {
  std::vector<Expr> exprs;
  for (int64_t extent : shape) exprs.push_back(make_const(DataType::int32(), extent));
  return exprs;
}

Shape static_shape(const te::Tensor& t) {
  Shape shape;
  for (const Expr& e : t.shape()) {
    const int64_t* extent = as_const_int(e);
    TEMPER_CHECK(extent, "tensor ", t.name(), " has a non-constant extent ", e);
    shape.push_back(*extent);
  }
  return shape;
}

decltype(GraphOp::compute) map_elements(ElementFn f) {
  return [f = std::move(f)](const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
    const te::Tensor& x = in[0];
    return std::vector<te::Tensor>{te::compute(
        x.shape(),
        [&](const std::vector<Var>& i) {
          return f(node, x({i.begin(), i.end()}));
        },
        output_name(graph, node, 0))};
  };
}

DataType onnx_dtype(int64_t code, const std::string& attribute) {
  if (std::optional<DataType> t = dtype_from_onnx(static_cast<int>(code))) return *t;
  throw UnsupportedError(str("attribute ", attribute, "=", code, " (", onnx_type_name(static_cast<int>(code)),
                             ") is a type Temper does not compute"));
}

std::string ints_str(const std::vector<int64_t>& values) {
  std::vector<std::string> parts;
  for (int64_t v : values) parts.push_back(std::to_string(v));
  return "[" + join(parts, ",") + "]";
}

}  // namespace detail

}  // namespace temper::graph
