// GELU recognition: a graph pass that finds GELU written as elementwise ops, as exporters
// emit it, and puts one Gelu node (ONNX opset 20's op, graph_ops_elementwise.cpp) in its
// place. The decomposed form reads x twice (in the Erf branch and in the product), so
// fusion (fusion.h), which joins a node to its producer's group only when it is the
// value's only reader, would end a MatMul's epilogue before it; one Gelu node reads x once.
//
// The exact form, approximate="none":
//
//   f = Erf(Div(x, sqrt 2))             or Erf(Mul(x, 1/sqrt 2)), the constant on either side
//
// the tanh form, approximate="tanh":
//
//   f = Tanh(Mul(sqrt(2/pi), Add(x, Mul(0.044715, cube))))
//                                       cube = Pow(x, 3) or Mul(x, Mul(x, x)); every
//                                       constant and x on either side
//
// and then for both
//
//   p   = Add(f, 1)                     either order
//   out = Mul(Mul(x, p), 0.5)           PyTorch's (x * (1 + f)) * 0.5
//       | Mul(Mul(x, 0.5), p)           PyTorch's and TF's (x * 0.5) * (1 + f)
//       | Mul(x, Mul(p, 0.5))           each Mul in either order
//
// becomes out = Gelu(x) {approximate=...}, written by the node that wrote out, so out keeps
// its name (it may be a graph output or read elsewhere).
//
// It rewrites only when: the opset is 7 or later (numpy broadcasting); x's type is known
// and floating; every value of the pattern but x and out is read only by the pattern's own
// nodes and is no graph output; every value has x's type; the constants have one element
// each and lie within a relative 1e-4 of the values above (3 exactly). Anything else is
// left as it is.
//
// Expects a verified graph with inferred types; leaves one (remove_dead has run, so ids
// change).
#pragma once

#include "compiler/graph/graph.h"

namespace temper::graph {

// Returns how many GELUs were recognised.
int recognize_gelu(Graph& graph);

}  // namespace temper::graph
