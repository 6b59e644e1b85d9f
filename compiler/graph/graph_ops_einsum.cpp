// Einsum: the product of its inputs summed over the letters the output does not keep
// ("ij,jk->ik" is a matmul, "bhid,bhjd->bhij" attention's scores, "ii->i" a diagonal).
// Without "->" the output keeps the letters that appear once, in alphabetical order.
// A letter names one extent wherever it appears. An ellipsis ("...") stands for the
// dimensions a term's letters leave, aligned on the right and broadcast as numpy does
// (an extent of 1 stretches); without "->" they lead the output.
//
// Computed as one te reduction: out[kept letters] = sum over the others of the product
// of each input read at its letters.
#include <cctype>
#include <map>

#include "compiler/graph/graph_ops_common.h"
#include "compiler/ops/shape.h"

namespace temper::graph::detail {

namespace {

// The ellipsis' dimensions become the characters 1, 2, ... (never a letter), the first
// standing for the leftmost of the widest ellipsis.
constexpr char kFirstEllipsisDim = 1;

bool is_ellipsis_dim(char c) {
  return c >= kFirstEllipsisDim && c < kFirstEllipsisDim + 64;
}

std::string dim_name(char c) {
  return is_ellipsis_dim(c) ? str("e", static_cast<int>(c - kFirstEllipsisDim)) : std::string(1, c);
}

struct EinsumSpec {
  std::vector<std::string> inputs;  // one term per input, its ellipsis expanded
  std::string output;
  std::map<char, int64_t> extents;  // an ellipsis dimension's broadcast extent
};

std::vector<std::string> split_terms(const std::string& lhs) {
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return terms;
    start = comma + 1;
  }
}

// The number of dimensions term's ellipsis covers in an input of `rank` (0 without one).
int64_t ellipsis_rank(const std::string& equation, const std::string& term, size_t rank, size_t k) {
  size_t dots = term.find("...");
  if (dots != std::string::npos && term.find("...", dots + 3) != std::string::npos) {
    throw UserError(str("term \"", term, "\" of equation \"", equation, "\" has two ellipses"));
  }
  size_t letters = term.size() - (dots == std::string::npos ? 0 : 3);
  if (dots == std::string::npos ? letters != rank : letters > rank) {
    throw UserError(str("term \"", term, "\" of equation \"", equation, "\" has ", letters, " letters but input ", k,
                        " has rank ", rank));
  }
  return dots == std::string::npos ? 0 : static_cast<int64_t>(rank - letters);
}

// term with its "..." replaced by the last `n` of `width` ellipsis dimensions.
std::string expand_ellipsis(const std::string& term, int64_t n, int64_t width) {
  size_t dots = term.find("...");
  if (dots == std::string::npos) return term;
  std::string dims;
  for (int64_t j = width - n; j < width; ++j) dims += static_cast<char>(kFirstEllipsisDim + j);
  return term.substr(0, dots) + dims + term.substr(dots + 3);
}

EinsumSpec einsum_spec(const Graph& graph, const Node& node) {
  check_arity(node, 1, 1 << 10);
  std::string equation;
  for (char c : node.attrs.get_string_or("equation", "")) {
    if (c != ' ') equation += c;
  }
  if (equation.empty()) throw UserError("attribute equation is missing");
  EinsumSpec spec;
  size_t arrow = equation.find("->");
  std::vector<std::string> terms = split_terms(equation.substr(0, arrow));
  if (terms.size() != node.inputs.size()) {
    throw UserError(
        str("equation \"", equation, "\" has ", terms.size(), " terms for ", node.inputs.size(), " inputs"));
  }
  std::vector<int64_t> ellipses;
  int64_t width = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    const TensorType& t = input_type(graph, node, static_cast<int>(k), str("input ", k));
    ellipses.push_back(ellipsis_rank(equation, terms[k], t.shape.size(), k));
    width = std::max(width, ellipses.back());
  }
  if (width > 63) throw UnsupportedError(str("equation \"", equation, "\"'s ellipsis spans ", width, " dimensions"));
  std::map<char, int> count;
  for (size_t k = 0; k < terms.size(); ++k) {
    const TensorType& t = input_type(graph, node, static_cast<int>(k), str("input ", k));
    spec.inputs.push_back(expand_ellipsis(terms[k], ellipses[k], width));
    const std::string& term = spec.inputs.back();
    for (size_t d = 0; d < term.size(); ++d) {
      char c = term[d];
      if (is_ellipsis_dim(c)) {
        // Broadcast: 1 stretches to any extent; two other extents must agree.
        int64_t& e = spec.extents.emplace(c, 1).first->second;
        if (e != 1 && t.shape[d] != 1 && e != t.shape[d]) {
          throw UserError(str("the ellipsis of equation \"", equation, "\" covers extents ", e, " and ", t.shape[d],
                              ", which do not broadcast"));
        }
        e = std::max(e, t.shape[d]);
        continue;
      }
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
    std::string rhs = equation.substr(arrow + 2);
    if (rhs.find("...") != std::string::npos && rhs.find("...", rhs.find("...") + 3) != std::string::npos) {
      throw UserError(str("the output of equation \"", equation, "\" has two ellipses"));
    }
    spec.output = expand_ellipsis(rhs, width, width);
    for (char c : spec.output) {
      if (!spec.extents.count(c)) throw UserError(str("output letter '", c, "' appears in no input"));
    }
  } else {
    spec.output = expand_ellipsis("...", width, width);
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
          summed.push_back(te::reduce_axis({0, ops::index_const(extent)}, "r" + dim_name(c)));
          index[c] = summed.back();
        }
        Expr product;
        for (size_t k = 0; k < in.size(); ++k) {
          // An input's extent of 1 under a broadcast ellipsis dimension reads its one element.
          Shape shape = static_shape(in[k]);
          std::vector<Expr> at;
          for (size_t d = 0; d < shape.size(); ++d) {
            char c = spec.inputs[k][d];
            at.push_back(shape[d] == 1 && spec.extents.at(c) != 1 ? ops::index_const(0) : index.at(c));
          }
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
