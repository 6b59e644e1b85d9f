// Einsum: the product of its inputs summed over the letters the output does not keep
// ("ij,jk->ik" is a matmul, "bhid,bhjd->bhij" attention's scores, "ii->i" a diagonal).
// Without "->" the output keeps the letters that appear once, in alphabetical order.
// A letter names one extent wherever it appears; an ellipsis ("...") is refused.
//
// Computed as one te reduction: out[kept letters] = sum over the others of the product
// of each input read at its letters.
#include <cctype>
#include <map>

#include "compiler/graph/graph_ops_common.h"
#include "compiler/ops/shape.h"

namespace temper::graph::detail {

namespace {

struct EinsumSpec {
  std::vector<std::string> inputs;  // one term of letters per input
  std::string output;
  std::map<char, int64_t> extents;
};

EinsumSpec einsum_spec(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1 << 10);
  std::string equation;
  for (char c : node.attrs.get_string_or("equation", "")) {
    if (c != ' ') equation += c;
  }
  if (equation.empty()) throw UserError("attribute equation is missing");
  if (equation.find("...") != std::string::npos) {
    throw UnsupportedError(str("equation \"", equation, "\" has an ellipsis, which Temper does not support"));
  }
  EinsumSpec spec;
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    spec.inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (spec.inputs.size() != node.inputs.size()) {
    throw UserError(
        str("equation \"", equation, "\" has ", spec.inputs.size(), " terms for ", node.inputs.size(), " inputs"));
  }
  std::map<char, int> count;
  for (size_t k = 0; k < spec.inputs.size(); ++k) {
    const TensorType& t = input_type(graph, node, static_cast<int>(k), str("input ", k));
    const std::string& term = spec.inputs[k];
    if (term.size() != t.shape.size()) {
      throw UserError(str("term \"", term, "\" of equation \"", equation, "\" has ", term.size(), " letters but input ",
                          k, " is ", t.to_string()));
    }
    for (size_t d = 0; d < term.size(); ++d) {
      char c = term[d];
      if (!std::isalpha(static_cast<unsigned char>(c))) {
        throw UserError(str("equation \"", equation, "\" has '", c, "', not a letter"));
      }
      ++count[c];
      auto [it, inserted] = spec.extents.emplace(c, t.shape[d]);
      if (!inserted && it->second != t.shape[d]) {
        throw UserError(
            str("letter '", c, "' of equation \"", equation, "\" stands for both ", it->second, " and ", t.shape[d]));
      }
    }
  }
  if (arrow != std::string::npos) {
    spec.output = equation.substr(arrow + 2);
    for (char c : spec.output) {
      if (!spec.extents.count(c)) throw UserError(str("output letter '", c, "' appears in no input"));
    }
  } else {
    for (const auto& [c, n] : count) {
      if (n == 1) spec.output += c;
    }
  }
  return spec;
}

std::vector<TensorType> infer_einsum(const Graph& graph, const Node& node) {
  EinsumSpec spec = einsum_spec(graph, node);
  const TensorType& first = input_type(graph, node, 0, "input 0");
  for (size_t k = 1; k < node.inputs.size(); ++k) {
    check_same_dtype(first, input_type(graph, node, static_cast<int>(k), str("input ", k)), "input 0",
                     str("input ", k));
  }
  Shape out;
  for (char c : spec.output) out.push_back(spec.extents.at(c));
  return {{out, first.dtype}};
}

std::vector<te::Tensor> compute_einsum(const Graph& graph, const Node& node, const std::vector<te::Tensor>& in) {
  EinsumSpec spec = einsum_spec(graph, node);
  Shape out;
  for (char c : spec.output) out.push_back(spec.extents.at(c));
  return {te::compute(
      shape_exprs(out),
      [&](const std::vector<Var>& i) {
        std::map<char, Expr> index;
        for (size_t d = 0; d < spec.output.size(); ++d) index[spec.output[d]] = i[d];
        std::vector<IterVar> summed;
        for (const auto& [c, extent] : spec.extents) {
          if (index.count(c)) continue;
          summed.push_back(te::reduce_axis({0, ops::index_const(extent)}, std::string("r") + c));
          index[c] = summed.back();
        }
        Expr product;
        for (size_t k = 0; k < in.size(); ++k) {
          std::vector<Expr> at;
          for (char c : spec.inputs[k]) at.push_back(index.at(c));
          product = product.defined() ? product * in[k](at) : in[k](at);
        }
        return summed.empty() ? product : te::sum(product, summed);
      },
      output_name(graph, node, 0))};
}

}  // namespace

std::vector<GraphOp> einsum_graph_ops() {
  return {{"Einsum", OpPattern::Opaque, infer_einsum, compute_einsum}};
}

}  // namespace temper::graph::detail
