// The graph IR's containers: attribute access, construction, dead-node removal, the
// invariant check and the printed form (see graph.h).
#include "compiler/graph/graph.h"

#include <algorithm>
#include <sstream>

#include "compiler/ir/error.h"
#include "compiler/ir/text.h"
#include "compiler/ops/shape.h"

namespace temper::graph {

namespace {

// The ONNX names of the attribute kinds, in the order of the Attribute variant.
const char* kind_name(const Attribute& a) {
  static const char* const names[] = {"int", "float", "string", "ints", "floats", "strings", "tensor"};
  return names[a.index()];
}

// The attribute called name, which must hold a T; nullptr when absent.
template <typename T>
const T* find_as(const std::map<std::string, Attribute>& values, const std::string& name, const char* wanted) {
  auto it = values.find(name);
  if (it == values.end()) return nullptr;
  const T* v = std::get_if<T>(&it->second);
  if (v == nullptr) {
    throw UserError(str("attribute '", name, "' is ", kind_name(it->second), ", expected ", wanted));
  }
  return v;
}

std::string format_double(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

template <typename T, typename F>
std::string format_list(const std::vector<T>& items, F format) {
  std::vector<std::string> parts;
  for (const T& item : items) parts.push_back(format(item));
  return "[" + join(parts, ",") + "]";
}

std::string format_attribute(const Attribute& a) {
  struct Formatter {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return format_double(v); }
    std::string operator()(const std::string& v) const { return "\"" + v + "\""; }
    std::string operator()(const std::vector<int64_t>& v) const {
      return format_list(v, [](int64_t x) { return std::to_string(x); });
    }
    std::string operator()(const std::vector<double>& v) const { return format_list(v, format_double); }
    std::string operator()(const std::vector<std::string>& v) const {
      return format_list(v, [](const std::string& x) { return "\"" + x + "\""; });
    }
    std::string operator()(const NDArray& v) const { return "tensor " + TensorType{v.shape(), v.dtype()}.to_string(); }
  };
  return std::visit(Formatter{}, a);
}

}  // namespace

int64_t TensorType::size() const {
  return ops::num_elements(shape);
}

std::string TensorType::to_string() const {
  if (!known()) return "?";
  std::vector<std::string> extents;
  for (int64_t extent : shape) extents.push_back(std::to_string(extent));
  return dtype.to_string() + "[" + join(extents, ",") + "]";
}

int64_t Attributes::get_int(const std::string& name) const {
  const int64_t* v = find_as<int64_t>(values_, name, "int");
  if (v == nullptr) throw UserError(str("missing attribute '", name, "' (an int)"));
  return *v;
}

int64_t Attributes::get_int_or(const std::string& name, int64_t fallback) const {
  const int64_t* v = find_as<int64_t>(values_, name, "int");
  return v ? *v : fallback;
}

double Attributes::get_float_or(const std::string& name, double fallback) const {
  const double* v = find_as<double>(values_, name, "float");
  return v ? *v : fallback;
}

std::string Attributes::get_string_or(const std::string& name, const std::string& fallback) const {
  const std::string* v = find_as<std::string>(values_, name, "string");
  return v ? *v : fallback;
}

std::vector<int64_t> Attributes::get_ints_or(const std::string& name, std::vector<int64_t> fallback) const {
  const std::vector<int64_t>* v = find_as<std::vector<int64_t>>(values_, name, "ints");
  return v ? *v : fallback;
}

std::vector<double> Attributes::get_floats_or(const std::string& name, std::vector<double> fallback) const {
  const std::vector<double>* v = find_as<std::vector<double>>(values_, name, "floats");
  return v ? *v : fallback;
}

const NDArray& Attributes::get_tensor(const std::string& name) const {
  const NDArray* v = find_as<NDArray>(values_, name, "tensor");
  if (v == nullptr) throw UserError(str("missing attribute '", name, "' (a tensor)"));
  return *v;
}

ValueId Graph::add_input(const std::string& name, TensorType type) {
  if (by_name_.count(name)) throw UserError(str("graph '", this->name, "': the name '", name, "' is used twice"));
  ValueId id = static_cast<ValueId>(values_.size());
  values_.push_back(Value{name, std::move(type), std::nullopt, -1});
  by_name_[name] = id;
  inputs_.push_back(id);
  return id;
}

ValueId Graph::add_constant(const std::string& name, NDArray data) {
  if (by_name_.count(name)) throw UserError(str("graph '", this->name, "': the name '", name, "' is used twice"));
  TEMPER_CHECK(data.defined(), "constant '", name, "' has no data");
  ValueId id = static_cast<ValueId>(values_.size());
  TensorType type{data.shape(), data.dtype()};
  values_.push_back(Value{name, std::move(type), std::move(data), -1});
  by_name_[name] = id;
  return id;
}

int Graph::add_node(const std::string& name, const std::string& op, Attributes attrs, std::vector<ValueId> inputs,
                    const std::vector<std::string>& output_names) {
  int index = static_cast<int>(nodes_.size());
  std::string node_name = name.empty() ? str(op, "_", index) : name;
  if (node_names_.count(node_name)) {
    throw UserError(str("graph '", this->name, "': two nodes are named '", node_name, "'"));
  }
  for (ValueId v : inputs) {
    TEMPER_CHECK(v == kNoValue || (v >= 0 && v < static_cast<ValueId>(values_.size())), "node '", node_name,
                 "' reads value id ", v, ", which does not exist");
  }
  for (size_t i = 0; i < output_names.size(); ++i) {
    const std::string& out = output_names[i];
    bool repeated = std::find(output_names.begin(), output_names.begin() + i, out) != output_names.begin() + i;
    if (by_name_.count(out) || repeated) {
      throw UserError(str("graph '", this->name, "': node '", node_name, "' (", op, ") writes '", out,
                          "', a name already produced by another node, input or initializer"));
    }
  }
  Node node{node_name, op, std::move(attrs), std::move(inputs), {}};
  for (const std::string& out : output_names) {
    ValueId id = static_cast<ValueId>(values_.size());
    values_.push_back(Value{out, TensorType{}, std::nullopt, index});
    by_name_[out] = id;
    node.outputs.push_back(id);
  }
  nodes_.push_back(std::move(node));
  node_names_[node_name] = index;
  return index;
}

void Graph::mark_output(ValueId v) {
  TEMPER_CHECK(v >= 0 && v < static_cast<ValueId>(values_.size()), "graph output id ", v, " does not exist");
  outputs_.push_back(v);
}

ValueId Graph::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? kNoValue : it->second;
}

void Graph::remove_dead() {
  // Walk backwards from the outputs: a node lives when one of its outputs is used.
  std::vector<bool> used(values_.size(), false);
  for (ValueId v : outputs_) used[v] = true;
  std::vector<bool> live_node(nodes_.size(), false);
  for (int n = static_cast<int>(nodes_.size()) - 1; n >= 0; --n) {
    const Node& node = nodes_[n];
    live_node[n] = std::any_of(node.outputs.begin(), node.outputs.end(), [&](ValueId v) { return used[v]; });
    if (!live_node[n]) continue;
    for (ValueId v : node.inputs) {
      if (v != kNoValue) used[v] = true;
    }
  }
  // Graph inputs stay (callers bind them by position), and so does every output of a live node.
  std::vector<bool> keep = used;
  for (ValueId v : inputs_) keep[v] = true;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (!live_node[n]) continue;
    for (ValueId v : nodes_[n].outputs) keep[v] = true;
  }

  std::vector<ValueId> new_id(values_.size(), kNoValue);
  std::vector<Value> values;
  for (size_t v = 0; v < values_.size(); ++v) {
    if (!keep[v]) continue;
    new_id[v] = static_cast<ValueId>(values.size());
    values.push_back(std::move(values_[v]));
  }
  std::vector<Node> nodes;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (!live_node[n]) continue;
    Node node = std::move(nodes_[n]);
    for (ValueId& v : node.inputs) {
      if (v != kNoValue) v = new_id[v];
    }
    for (ValueId& v : node.outputs) {
      v = new_id[v];
      values[v].producer = static_cast<int>(nodes.size());
    }
    nodes.push_back(std::move(node));
  }
  for (ValueId& v : inputs_) v = new_id[v];
  for (ValueId& v : outputs_) v = new_id[v];
  values_ = std::move(values);
  nodes_ = std::move(nodes);
  by_name_.clear();
  for (size_t v = 0; v < values_.size(); ++v) by_name_[values_[v].name] = static_cast<ValueId>(v);
  node_names_.clear();
  for (size_t n = 0; n < nodes_.size(); ++n) node_names_[nodes_[n].name] = static_cast<int>(n);
}

void Graph::verify() const {
  std::string where = str("graph '", name, "': ");
  auto valid = [&](ValueId v) { return v >= 0 && v < static_cast<ValueId>(values_.size()); };
  std::map<std::string, ValueId> names;
  for (size_t v = 0; v < values_.size(); ++v) {
    const Value& value = values_[v];
    if (value.name.empty()) throw UserError(str(where, "value ", v, " has no name"));
    if (!names.emplace(value.name, static_cast<ValueId>(v)).second) {
      throw UserError(str(where, "the name '", value.name, "' is used by two values"));
    }
    if (value.constant && value.producer != -1) {
      throw UserError(str(where, "constant '", value.name, "' also has a producer node"));
    }
    if (value.constant && value.type.known() &&
        TensorType{value.constant->shape(), value.constant->dtype()} != value.type) {
      throw UserError(str(where, "constant '", value.name, "' holds ",
                          TensorType{value.constant->shape(), value.constant->dtype()}.to_string(),
                          " but its type says ", value.type.to_string()));
    }
    if (value.producer < -1 || value.producer >= static_cast<int>(nodes_.size())) {
      throw UserError(
          str(where, "value '", value.name, "' names producer node ", value.producer, ", which does not exist"));
    }
  }
  std::vector<bool> is_input(values_.size(), false);
  for (ValueId v : inputs_) {
    if (!valid(v)) throw UserError(str(where, "graph input id ", v, " does not exist"));
    const Value& value = values_[v];
    if (value.constant || value.producer != -1) {
      throw UserError(str(where, "graph input '", value.name, "' is also a constant or a node output"));
    }
    is_input[v] = true;
  }
  for (size_t v = 0; v < values_.size(); ++v) {
    const Value& value = values_[v];
    if (value.producer == -1 && !value.constant && !is_input[v]) {
      throw UserError(str(where, "value '", value.name, "' has no producer: it is no input, constant or node output"));
    }
  }

  std::map<std::string, int> node_names;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    const Node& node = nodes_[n];
    std::string at = str(where, "node '", node.name, "' (", node.op, ")");
    if (!node_names.emplace(node.name, static_cast<int>(n)).second) {
      throw UserError(str(where, "two nodes are named '", node.name, "'"));
    }
    for (ValueId v : node.inputs) {
      if (v == kNoValue) continue;
      if (!valid(v)) throw UserError(str(at, " reads value id ", v, ", which does not exist"));
      int producer = values_[v].producer;
      if (producer >= static_cast<int>(n)) {
        throw UserError(str(at, " reads '", values_[v].name, "', which node '", nodes_[producer].name,
                            "' produces later: the nodes are not in topological order"));
      }
    }
    if (node.outputs.empty()) throw UserError(str(at, " has no outputs"));
    for (ValueId v : node.outputs) {
      if (!valid(v)) throw UserError(str(at, " writes value id ", v, ", which does not exist"));
      if (values_[v].producer != static_cast<int>(n)) {
        throw UserError(str(at, " writes '", values_[v].name, "', whose producer is recorded as another node"));
      }
    }
  }
  // Every producer link must be matched by the node's output list.
  for (size_t v = 0; v < values_.size(); ++v) {
    int producer = values_[v].producer;
    if (producer == -1) continue;
    const std::vector<ValueId>& outs = nodes_[producer].outputs;
    if (std::find(outs.begin(), outs.end(), static_cast<ValueId>(v)) == outs.end()) {
      throw UserError(str(where, "value '", values_[v].name, "' names node '", nodes_[producer].name,
                          "' as its producer, but that node does not write it"));
    }
  }
  for (ValueId v : outputs_) {
    if (!valid(v)) throw UserError(str(where, "graph output id ", v, " does not exist"));
  }
}

std::string Graph::to_string() const {
  auto ref = [&](ValueId v) { return v == kNoValue ? std::string("_") : "%" + values_[v].name; };
  std::ostringstream os;
  os << "graph " << name << "\n";
  for (ValueId v : inputs_) os << "input " << ref(v) << " : " << values_[v].type.to_string() << "\n";
  for (size_t v = 0; v < values_.size(); ++v) {
    if (values_[v].constant)
      os << "const " << ref(static_cast<ValueId>(v)) << " : " << values_[v].type.to_string() << "\n";
  }
  for (const Node& node : nodes_) {
    std::vector<std::string> outs;
    std::vector<std::string> types;
    for (ValueId v : node.outputs) {
      outs.push_back(ref(v));
      types.push_back(values_[v].type.to_string());
    }
    std::vector<std::string> ins;
    for (ValueId v : node.inputs) ins.push_back(ref(v));
    os << join(outs, ", ") << " = " << node.op << "(" << join(ins, ", ") << ")";
    if (!node.attrs.all().empty()) {
      std::vector<std::string> attrs;
      for (const auto& [key, value] : node.attrs.all()) attrs.push_back(key + "=" + format_attribute(value));
      os << " {" << join(attrs, ", ") << "}";
    }
    os << " : " << join(types, ", ") << "\n";
  }
  for (ValueId v : outputs_) os << "output " << ref(v) << "\n";
  return os.str();
}

}  // namespace temper::graph
