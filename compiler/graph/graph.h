// The graph IR: a model as a DAG of operator nodes over typed values (TVM Relay's role,
// kept small). The ONNX frontend (onnx_import.h) builds it; passes rewrite it; the
// executor compiles and runs it.
//
// A Graph owns its values and nodes by index. Every value has one producer: a graph input,
// a constant (its data held in the value), or exactly one output of one node. Nodes are
// kept in a topological order (a node's inputs are produced by earlier nodes, inputs or
// constants); verify() checks that and every other invariant below, and names the node or
// value at fault.
//
// Types are static: every value's shape and dtype is known once infer_types (shape
// inference, shape_inference.h) has run; the frontend runs it. Dimensions are concrete
// (a dynamic dimension the user did not bind is an import error).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compiler/ir/type.h"
#include "compiler/runtime/ndarray.h"

namespace temper::graph {

struct TensorType {
  std::vector<int64_t> shape;
  DataType dtype = DataType::handle();  // handle: not known yet (a node output before infer_types)
  bool known() const { return !dtype.is_handle(); }
  int64_t size() const;  // elements
  std::string to_string() const;  // "float32[1,3,224,224]"; "?" when not known
  bool operator==(const TensorType& other) const { return shape == other.shape && dtype == other.dtype; }
};

// An attribute as ONNX has them: an integer, a float, a string, lists of those, or a tensor.
using Attribute = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>, NDArray>;

class Attributes {
 public:
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  void set(const std::string& name, Attribute value) { values_[name] = std::move(value); }
  // The typed getters throw UserError naming the attribute and the kind found when the
  // attribute has another kind; the *_or forms return fallback when it is absent.
  int64_t get_int(const std::string& name) const;
  int64_t get_int_or(const std::string& name, int64_t fallback) const;
  double get_float_or(const std::string& name, double fallback) const;
  std::string get_string_or(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> get_ints_or(const std::string& name, std::vector<int64_t> fallback) const;
  std::vector<double> get_floats_or(const std::string& name, std::vector<double> fallback) const;
  const NDArray& get_tensor(const std::string& name) const;
  const std::map<std::string, Attribute>& all() const { return values_; }

 private:
  std::map<std::string, Attribute> values_;
};

using ValueId = int;
inline constexpr ValueId kNoValue = -1;  // an omitted optional input

struct Value {
  std::string name;  // unique in the graph
  TensorType type;   // valid after infer_types
  std::optional<NDArray> constant;  // the data of a constant (an initializer, a folded value)
  int producer = -1;                // the node making it, -1 for inputs and constants
};

struct Node {
  std::string name;  // unique; the ONNX node's name, or "<op_type>_<index>" when it had none
  std::string op;    // the ONNX op type: "Conv", "Relu", ...
  Attributes attrs;
  std::vector<ValueId> inputs;  // kNoValue for an omitted optional input
  std::vector<ValueId> outputs;
};

class Graph {
 public:
  std::string name;
  // The model's opset of the default ONNX domain: ops whose meaning changed between
  // opsets (Softmax's axis before 13) read it. Graphs built by hand get the newest.
  int opset = 17;

  ValueId add_input(const std::string& name, TensorType type);
  ValueId add_constant(const std::string& name, NDArray data);
  // Appends a node and its outputs (types unknown until inference). UserError when a name
  // is taken.
  int add_node(const std::string& name, const std::string& op, Attributes attrs, std::vector<ValueId> inputs,
               const std::vector<std::string>& output_names);
  void mark_output(ValueId v);

  const std::vector<Value>& values() const { return values_; }
  std::vector<Value>& values() { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& nodes() { return nodes_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  const Value& value(ValueId v) const { return values_.at(v); }
  Value& value(ValueId v) { return values_.at(v); }
  // kNoValue when no value has that name.
  ValueId find(const std::string& name) const;

  // Drops nodes whose outputs nothing uses (and values nothing refers to), renumbering
  // ids; keeps the order. Passes call it after rewriting.
  void remove_dead();
  // UserError naming the first broken invariant (see the file comment).
  void verify() const;
  // One line per input, constant (shape only), node and output: for tests and `temper show`.
  std::string to_string() const;

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::map<std::string, ValueId> by_name_;
  std::map<std::string, int> node_names_;
};

}  // namespace temper::graph
