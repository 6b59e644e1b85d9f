// The ONNX frontend (see onnx_import.h). Reading a model goes in four steps, each of
// which names the file and the node or value it rejects:
//   1. parse the ModelProto and check its opset;
//   2. graph inputs and initializers become inputs and constants (dynamic dims bound);
//   3. nodes are checked (domain, op, attributes, names) and sorted topologically, since
//      a model may list them out of order;
//   4. graph outputs are marked, constant subgraphs folded and types inferred.
#include "compiler/graph/onnx_import.h"

#include <onnx/onnx_pb.h>  // defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML=1)

#include <algorithm>
#include <fstream>
#include <map>
#include <queue>
#include <set>
#include <sstream>

#include "compiler/graph/constant_folding.h"
#include "compiler/graph/graph_ops.h"
#include "compiler/graph/onnx_tensor.h"
#include "compiler/graph/shape_inference.h"
#include "compiler/ir/error.h"
#include "compiler/ir/text.h"

namespace temper::graph {

namespace {

constexpr int kMinOpset = 6;
constexpr int kMaxOpset = 21;

bool is_default_domain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

// The default domain's opset version the model imports; 0 when it imports none.
int64_t default_opset(const onnx::ModelProto& model) {
  int64_t version = 0;
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (is_default_domain(opset.domain())) version = std::max(version, opset.version());
  }
  return version;
}

std::string node_label(const std::string& name, const onnx::NodeProto& node) {
  return str("node '", name, "' (", node.op_type(), ")");
}

Attribute convert_attribute(const onnx::AttributeProto& a, const std::string& node) {
  using onnx::AttributeProto;
  AttributeProto::AttributeType type = a.type();
  // Models from before IR version 3 leave the type out: read it off the field that is set.
  if (type == AttributeProto::UNDEFINED) {
    if (a.has_f()) type = AttributeProto::FLOAT;
    if (a.has_i()) type = AttributeProto::INT;
    if (a.has_s()) type = AttributeProto::STRING;
    if (a.has_t()) type = AttributeProto::TENSOR;
    if (a.floats_size() > 0) type = AttributeProto::FLOATS;
    if (a.ints_size() > 0) type = AttributeProto::INTS;
    if (a.strings_size() > 0) type = AttributeProto::STRINGS;
  }
  switch (type) {
    case AttributeProto::INT:
      return a.i();
    case AttributeProto::FLOAT:
      return static_cast<double>(a.f());
    case AttributeProto::STRING:
      return a.s();
    case AttributeProto::INTS:
      return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case AttributeProto::FLOATS:
      return std::vector<double>(a.floats().begin(), a.floats().end());
    case AttributeProto::STRINGS:
      return std::vector<std::string>(a.strings().begin(), a.strings().end());
    case AttributeProto::TENSOR:
      return tensor_from_proto(a.t(), str(node, ": attribute '", a.name(), "'"));
    default:
      throw UnsupportedError(str(node, ": attribute '", a.name(), "' is of kind ",
                                 AttributeProto::AttributeType_Name(type), ", which Temper does not support"));
  }
}

// The sizes of the named dynamic dimensions: options.dims, and those read off the full
// shapes options.input_shapes gives and options.data_shapes (the shapes of the data the
// caller will pass some inputs); one name bound to two sizes is an error naming both.
std::map<std::string, int64_t> bound_dims(const onnx::GraphProto& g, const ImportOptions& options) {
  std::map<std::string, int64_t> dims = options.dims;
  std::map<std::string, std::string> bound_by;
  for (const auto& [name, size] : options.dims) bound_by[name] = str("given as ", size);
  // what: "data" or "shape", the thing given for the input.
  auto bind = [&](const onnx::ValueInfoProto& input, const std::vector<int64_t>& shape, const std::string& what) {
    const onnx::TensorShapeProto& declared = input.type().tensor_type().shape();
    bool dynamic = std::any_of(declared.dim().begin(), declared.dim().end(),
                               [](const auto& dim) { return !dim.dim_param().empty() && !dim.has_dim_value(); });
    if (!dynamic) return;  // nothing to bind; static dimensions are checked elsewhere
    if (declared.dim_size() != static_cast<int>(shape.size())) {
      throw UserError(str("input '", input.name(), "' is given ", what == "data" ? "data of shape" : "the shape", " ",
                          shape_to_string(shape), ", but the model declares ",
                          plural(declared.dim_size(), "dimension")));
    }
    for (int axis = 0; axis < declared.dim_size(); ++axis) {
      const std::string& param = declared.dim(axis).dim_param();
      if (param.empty() || declared.dim(axis).has_dim_value()) continue;
      std::string source = str(shape[axis], " in the ", what, " given for '", input.name(), "' (axis ", axis, ")");
      auto [it, inserted] = dims.emplace(param, shape[axis]);
      if (inserted) {
        bound_by[param] = source;
      } else if (it->second != shape[axis]) {
        throw UserError(
            str("the dynamic dimension '", param, "' is ", bound_by[param], " but ", source, ": give it one size"));
      }
    }
  };
  for (const onnx::ValueInfoProto& input : g.input()) {
    if (!input.type().tensor_type().has_shape()) continue;
    if (auto it = options.input_shapes.find(input.name()); it != options.input_shapes.end()) {
      bind(input, it->second, "shape");
    }
    if (auto it = options.data_shapes.find(input.name()); it != options.data_shapes.end()) {
      bind(input, it->second, "data");
    }
  }
  return dims;
}

// A graph input's shape: the declared dims, dynamic ones bound by dims (or the full
// shape given in options.input_shapes).
std::vector<int64_t> input_shape(const onnx::ValueInfoProto& input, const ImportOptions& options,
                                 const std::map<std::string, int64_t>& dims) {
  const std::string& name = input.name();
  const onnx::TypeProto_Tensor& tensor = input.type().tensor_type();
  bool declared = tensor.has_shape();
  if (auto it = options.input_shapes.find(name); it != options.input_shapes.end()) {
    if (declared && tensor.shape().dim_size() != static_cast<int>(it->second.size())) {
      throw UserError(str("input '", name, "' is given the shape ", shape_to_string(it->second),
                          ", but the model declares ", plural(tensor.shape().dim_size(), "dimension")));
    }
    return it->second;
  }
  if (!declared)
    throw UserError(str("input '", name, "' declares no shape: give its full shape (on the command line --shape ", name,
                        "=D0xD1x...)"));
  std::vector<int64_t> shape;
  for (int axis = 0; axis < tensor.shape().dim_size(); ++axis) {
    const onnx::TensorShapeProto_Dimension& dim = tensor.shape().dim(axis);
    if (dim.has_dim_value() && dim.dim_value() > 0) {
      shape.push_back(dim.dim_value());
      continue;
    }
    if (dim.has_dim_value() && dim.dim_value() == 0) {
      throw UnsupportedError(
          str("input '", name, "' has an empty dimension (axis ", axis, ", extent 0): Temper has no empty tensors"));
    }
    if (dim.has_dim_param() && !dim.dim_param().empty()) {
      auto it = dims.find(dim.dim_param());
      if (it == dims.end()) {
        throw UserError(str("input '", name, "' has the dynamic dimension '", dim.dim_param(), "' (axis ", axis,
                            "), which nothing binds: give the size of '", dim.dim_param(),
                            "' (on the command line --dim ", dim.dim_param(), "=N) or the full shape of '", name,
                            "' (--shape ", name, "=D0xD1x...)"));
      }
      shape.push_back(it->second);
      continue;
    }
    throw UserError(str("input '", name, "' has an unnamed dynamic dimension (axis ", axis,
                        "): give the full shape of '", name, "' (on the command line --shape ", name, "=D0xD1x...)"));
  }
  return shape;
}

DataType input_dtype(const onnx::ValueInfoProto& input) {
  if (!input.type().has_tensor_type()) {
    throw UnsupportedError(
        str("input '", input.name(), "' is not a tensor (sequences, maps and optionals are not supported)"));
  }
  int elem_type = input.type().tensor_type().elem_type();
  std::optional<DataType> dtype = dtype_from_onnx(elem_type);
  if (!dtype) {
    throw UnsupportedError(str("input '", input.name(), "' has element type ", onnx_type_name(elem_type),
                               ", which Temper does not support"));
  }
  return *dtype;
}

void add_inputs_and_constants(const onnx::GraphProto& g, const ImportOptions& options, Graph& graph) {
  std::set<std::string> input_names;
  for (const onnx::ValueInfoProto& input : g.input()) input_names.insert(input.name());
  for (const auto& [name, data] : options.constants) {
    if (!input_names.count(name)) throw UserError(str("cannot bind '", name, "': the model has no input of that name"));
  }
  for (const auto& [name, shape] : options.input_shapes) {
    if (!input_names.count(name)) {
      throw UserError(str("cannot give a shape to '", name, "': the model has no input of that name"));
    }
  }

  std::map<std::string, int64_t> dims = bound_dims(g, options);

  std::set<std::string> initializer_names;
  for (const onnx::TensorProto& init : g.initializer()) {
    if (!initializer_names.insert(init.name()).second) {
      throw UserError(str("the initializer name '", init.name(), "' is used twice"));
    }
  }
  for (const onnx::ValueInfoProto& input : g.input()) {
    const std::string& name = input.name();
    if (graph.find(name) != kNoValue) throw UserError(str("the graph input name '", name, "' is used twice"));
    if (auto bound = options.constants.find(name); bound != options.constants.end()) {
      graph.add_constant(name, bound->second);
    } else if (!initializer_names.count(name)) {
      DataType dtype = input_dtype(input);  // first: a sequence or optional has no tensor shape to read
      graph.add_input(name, TensorType{input_shape(input, options, dims), dtype});
    }
  }
  for (const onnx::TensorProto& init : g.initializer()) {
    if (graph.find(init.name()) != kNoValue) continue;  // bound by the caller instead
    graph.add_constant(init.name(), tensor_from_proto(init, str("initializer '", init.name(), "'")));
  }
}

// Node names as the graph will hold them: the model's, "<op>_<index>" where it has none,
// and a suffix where a name repeats (ONNX does not require them to be unique).
std::vector<std::string> node_names(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  std::set<std::string> taken;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& node = g.node(i);
    std::string base = node.name().empty() ? str(node.op_type(), "_", i) : node.name();
    std::string name = base;
    for (int suffix = 1; taken.count(name); ++suffix) name = str(base, "_", suffix);
    taken.insert(name);
    names.push_back(name);
  }
  return names;
}

// The domain and op of every node must be ones Temper serves. An unsupported op is
// refused with every unsupported op of the model, each with its count and first node, so
// that one message tells a user all that is missing.
void check_ops(const onnx::GraphProto& g, const std::vector<std::string>& names) {
  std::map<std::string, std::pair<int, int>> missing;  // op -> (count, first node)
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& node = g.node(i);
    if (!is_default_domain(node.domain())) {
      throw UnsupportedError(str(node_label(names[i], node), " is in the domain '", node.domain(),
                                 "': Temper supports only the default ONNX domain"));
    }
    const GraphOp* op = find_graph_op(node.op_type());
    if (op == nullptr || op->internal) {
      auto [it, first] = missing.emplace(node.op_type(), std::make_pair(0, i));
      ++it->second.first;
    }
  }
  if (missing.empty()) return;
  std::vector<std::string> listed;
  for (const auto& [op, seen] : missing) {
    listed.push_back(str("'", op, "' (", plural(seen.first, "node"), ", first ",
                         node_label(names[seen.second], g.node(seen.second)), ")"));
  }
  throw UnsupportedError(str("Temper does not support the ONNX op", missing.size() > 1 ? "s " : " ", join(listed, ", "),
                             "; supported: ", join(supported_graph_ops(), ", ")));
}

// The nodes in an order where each reads only values produced before it: the model's
// order where that works (Kahn's algorithm, taking the earliest ready node first).
std::vector<int> topological_order(const onnx::GraphProto& g, const std::vector<std::string>& names,
                                   const Graph& graph) {
  int n = g.node_size();
  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const std::string& out : g.node(i).output()) {
      if (out.empty()) continue;
      if (graph.find(out) != kNoValue) {
        throw UserError(
            str(node_label(names[i], g.node(i)), " writes '", out, "', which is already a graph input or initializer"));
      }
      auto [it, inserted] = producer.emplace(out, i);
      if (!inserted) {
        throw UserError(str("the name '", out, "' is written twice: by ",
                            node_label(names[it->second], g.node(it->second)), " and by ",
                            node_label(names[i], g.node(i))));
      }
    }
  }
  std::vector<std::vector<int>> users(n);
  std::vector<int> pending(n, 0);  // inputs not yet produced
  for (int i = 0; i < n; ++i) {
    for (const std::string& in : g.node(i).input()) {
      if (in.empty()) continue;
      auto it = producer.find(in);
      if (it != producer.end()) {
        users[it->second].push_back(i);
        ++pending[i];
      } else if (graph.find(in) == kNoValue) {
        throw UserError(str("node '", names[i], "' reads '", in, "', which no node, input or initializer produces"));
      }
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int user : users[i]) {
      if (--pending[user] == 0) ready.push(user);
    }
  }
  if (static_cast<int>(order.size()) == n) return order;

  // Every node left waits on another node left: walking from one to a producer that is
  // still waiting must come back to a node already seen, which lies on a cycle.
  auto waiting_producer = [&](int node) {
    for (const std::string& in : g.node(node).input()) {
      auto it = producer.find(in);
      if (!in.empty() && it != producer.end() && pending[it->second] > 0) return it->second;
    }
    TEMPER_CHECK(false, "node '", names[node], "' is left unsorted but waits on no unsorted node");
    return -1;
  };
  std::vector<int> seen_at(n, -1);
  std::vector<int> path;  // each entry's producer follows it
  int i = 0;
  while (pending[i] == 0) ++i;
  while (seen_at[i] == -1) {
    seen_at[i] = static_cast<int>(path.size());
    path.push_back(i);
    i = waiting_producer(i);
  }
  // In data-flow order: i, then the path back from its last entry to i.
  std::vector<std::string> cycle = {"'" + names[i] + "'"};
  for (int k = static_cast<int>(path.size()) - 1; k >= seen_at[i]; --k) cycle.push_back("'" + names[path[k]] + "'");
  throw UserError(str("the graph has a cycle through node '", names[i], "': ", join(cycle, " -> ")));
}

void add_nodes(const onnx::GraphProto& g, Graph& graph) {
  std::vector<std::string> names = node_names(g);
  check_ops(g, names);
  for (int i : topological_order(g, names, graph)) {
    const onnx::NodeProto& node = g.node(i);
    std::string label = node_label(names[i], node);
    Attributes attrs;
    for (const onnx::AttributeProto& a : node.attribute()) attrs.set(a.name(), convert_attribute(a, label));
    std::vector<ValueId> inputs;
    for (const std::string& in : node.input()) inputs.push_back(in.empty() ? kNoValue : graph.find(in));
    // An empty output name omits an optional output: trailing ones are dropped, and one
    // before a used output gets a name of its own.
    std::vector<std::string> outputs(node.output().begin(), node.output().end());
    while (!outputs.empty() && outputs.back().empty()) outputs.pop_back();
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (outputs[k].empty()) outputs[k] = str(names[i], ":unused_output_", k);
    }
    graph.add_node(names[i], node.op_type(), std::move(attrs), std::move(inputs), outputs);
  }
}

// A declared output type with every dimension static, or nullopt.
std::optional<TensorType> declared_type(const onnx::ValueInfoProto& info) {
  if (!info.type().has_tensor_type()) return std::nullopt;
  const onnx::TypeProto_Tensor& tensor = info.type().tensor_type();
  std::optional<DataType> dtype = dtype_from_onnx(tensor.elem_type());
  if (!dtype || !tensor.has_shape()) return std::nullopt;
  TensorType type{{}, *dtype};
  for (const onnx::TensorShapeProto_Dimension& dim : tensor.shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() <= 0) return std::nullopt;
    type.shape.push_back(dim.dim_value());
  }
  return type;
}

// keep_declared: whether the declared output types stand (not where the caller gave the
// inputs other shapes, options.input_shapes: they describe the model at its own).
void mark_outputs(const onnx::GraphProto& g, Graph& graph, bool keep_declared) {
  for (const onnx::ValueInfoProto& output : g.output()) {
    ValueId v = graph.find(output.name());
    if (v == kNoValue) {
      throw UserError(str("graph output '", output.name(), "' is produced by no node, input or initializer"));
    }
    // Kept for infer_types to check against what it computes.
    std::optional<TensorType> type = declared_type(output);
    if (type && keep_declared && graph.value(v).producer != -1) graph.value(v).type = *type;
    graph.mark_output(v);
  }
}

}  // namespace

Graph import_onnx_bytes(const std::string& bytes, const std::string& source, const ImportOptions& options) {
  std::string not_a_model = str(source, " is not an ONNX model (cannot parse it as a ModelProto): ");
  if (bytes.empty()) throw UserError(not_a_model + "the file is empty");
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) throw UserError(not_a_model + "it is truncated or not protobuf data");
  if (!model.has_graph()) throw UserError(not_a_model + "it has no graph");
  int64_t opset = default_opset(model);
  if (opset == 0) throw UnsupportedError(str(source, " imports no opset of the default ONNX domain"));
  if (opset < kMinOpset || opset > kMaxOpset) {
    throw UnsupportedError(str(source, " uses ONNX opset ", opset, "; Temper supports opsets ", kMinOpset, " to ",
                               kMaxOpset, " (convert the model with onnx.version_converter)"));
  }

  const onnx::GraphProto& g = model.graph();
  Graph graph;
  graph.name = g.name();
  graph.opset = static_cast<int>(opset);
  try {
    add_inputs_and_constants(g, options, graph);
    add_nodes(g, graph);
    mark_outputs(g, graph, options.input_shapes.empty());
    graph.verify();
    // Folding types each node as it reaches it: a Reshape's target shape is known only
    // once the Shape chain computing it has folded. Inference then types what is left.
    if (options.fold_constants) fold_constants(graph);
    infer_types(graph);
  } catch (const ConstantRequiredError& e) {
    throw ConstantRequiredError(str(source, ": ", e.what()), e.value());
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(str(source, ": ", e.what()));
  } catch (const UserError& e) {
    throw UserError(str(source, ": ", e.what()));
  }
  return graph;
}

Graph import_onnx(const std::string& path, const ImportOptions& options) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw UserError(str("cannot read ONNX model '", path, "': no such file or not readable"));
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return import_onnx_bytes(bytes.str(), path, options);
}

}  // namespace temper::graph
