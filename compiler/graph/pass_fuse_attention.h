// Attention fusion: a graph pass that finds scaled dot-product attention written node by
// node, as exporters emit it, and puts one Attention node (graph_ops_attention.cpp,
// ops/attention.h) in its place, so that a build computes the scores, the softmax and the
// product by V in one kernel, a block of query rows at a time, and the [.., S, T] scores
// and probabilities never go out to memory.
//
//   q = Div(q0, c) | Mul(q0, c)   optional: q scaled first (read by the MatMul alone;
//     | Mul(c, q0)                scale 1/c or c)
//   s = MatMul(q, kt)             q [.., S, D], kt [.., D, T], the same leading extents
//   s = Div(s, c)                 optional: c a one-element nonzero constant (scale 1/c),
//     | Mul(s, c) | Mul(c, s)     or a product by one (scale c)
//   s = Add(s, m) | Add(m, s)     optional: m a per-key mask [.., 1, T] that broadcasts
//                                 over the rows (graph_ops_common.h: attention_mask_rows)
//   p = Softmax(s)                over the last axis
//   o = MatMul(p, v)              v [.., T, E], the same leading extents
//
// becomes o = Attention(q, kt, v[, m]) {scale}, written by the node that wrote o, so o
// keeps its name. Where q, kt and v are the exporter's transposes to the heads -- q =
// Transpose(q4, perm 0,2,1,3) of a [N, S, H, D] q4, kt = Transpose(k4, 0,2,3,1), v =
// Transpose(v4, 0,2,1,3) -- and o is read by the transpose back, o4 = Transpose(o, 0,2,1,3),
// each value read by the chain alone, the attention takes the heads' layout instead:
// o4 = Attention(q4, k4, v4[, m]) {scale, heads=H}, and the four transposes go (the kernel
// reads and writes the projections' arrays as they are). It rewrites only when every value
// between q and o is float32, read by the next node of the chain alone and no graph output.
// Anything else is left as it is.
//
// Expects a verified graph with inferred types; leaves one (remove_dead has run, so ids
// change).
#pragma once

#include "compiler/graph/graph.h"

namespace temper::graph {

// Returns how many attentions were fused.
int fuse_attention(Graph& graph);

}  // namespace temper::graph
