// Layer-norm recognition: a graph pass that finds the layer normalisation over the last
// axis that exporters (PyTorch, tf2onnx) write as elementwise ops and reductions, and puts
// one LayerNormalization node in its place, which computes the statistics in one kernel
// instead of six.
//
//   mean = ReduceMean(x, axes=[-1] or [rank-1], keepdims=1)
//   d    = Sub(x, mean)
//   sq   = Pow(d, 2) or Mul(d, d)
//   var  = ReduceMean(sq, the same axis, keepdims=1)
//   s    = Sqrt(Add(var, eps))          eps on either side of the Add
//   n    = Div(d, s)
//   y    = Mul(n, gamma)                optional; gamma on either side
//   out  = Add(y, beta)                 optional; beta on either side
//
// becomes out = LayerNormalization(x, gamma, beta) {axis=-1, epsilon=eps}, written by the
// node that wrote out, so out keeps its name (it may be a graph output or read elsewhere).
// Without a Mul the scale is a new constant of ones; without an Add, B is omitted.
//
// It rewrites only when: the opset is 7 or later (numpy broadcasting: before, Mul and Add
// could align gamma with another axis); x's type is known and floating; ReduceMean has its
// axes as an attribute (opsets before 18) naming the last axis only; every value of the
// pattern but x and out is read only by the pattern's own nodes and is no graph output;
// every value has x's type (the statistics with the last extent 1); 2 and eps are constants
// of one element; gamma and beta are constants of x's dtype whose dimensions are all 1 but
// the last, which is 1 or x's last extent. Anything else is left as it is.
//
// Expects a verified graph with inferred types; leaves one (remove_dead has run, so ids
// change).
#pragma once

#include "compiler/graph/graph.h"

namespace temper::graph {

// Returns how many layer normalisations were recognised.
int recognize_layer_norm(Graph& graph);

}  // namespace temper::graph
