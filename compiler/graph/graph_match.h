// What the pattern-recognition passes (pass_recognize_*, pass_fuse_attention) ask of a
// graph while they match a chain of nodes: who reads a value, whether a node is the op and
// type a pattern expects, and the constants beside it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"

namespace temper::graph {

bool is_output(const Graph& graph, ValueId v);

// The nodes reading v, in node order, once per read (Mul(d, d) appears twice).
std::vector<int> readers(const Graph& graph, ValueId v);

// The node reading v when it is v's only read and v is no graph output; -1 otherwise.
int only_reader(const Graph& graph, ValueId v);

// Node n when it is `op` with `arity` inputs and one output of type `type`; nullptr otherwise.
const Node* node_as(const Graph& graph, int n, const std::string& op, size_t arity, const TensorType& type);

// The value of a one-element constant; nullopt for anything else.
std::optional<double> scalar_constant(const Graph& graph, ValueId v);

// The input of a binary node that is not `known`, when the other one is `known`; kNoValue otherwise.
ValueId other_input(const Node& node, ValueId known);

// base, or base with the first free "_<k>" suffix.
std::string unused_name(const Graph& graph, const std::string& base);

}  // namespace temper::graph
