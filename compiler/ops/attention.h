// Scaled dot-product attention as one operator: the two products of a head with the
// softmax over the keys between them, so that a kernel can keep a block of query rows'
// scores in its caches instead of writing the [B, S, T] scores and probabilities out and
// reading them back (onnxruntime's and FlashAttention's fused attention).
//
//   out[b, i, d] = sum_j p[b, i, j] v[b, j, d]
//   p[b, i, j]   = softmax over j of  scale * sum_k q[b, i, k] kt[b, k, j] + mask[b / (B / MB), j]
//
// q [B, S, D] (B: batch x heads), kt [B, D, T] (the keys transposed, as an exporter's
// Transpose writes them for Q K^T), v [B, T, E]. With heads = H > 0 the arrays are the
// projections' as an exporter reshapes them, before its transposes to the heads: q
// [N, S, H, D], k [N, T, H, D] (not transposed), v [N, T, H, E], the output [N, S, H, E]
// (B = N x H; head b is n = b / H, h = b % H), so no transpose runs before or after. mask,
// when given, is [MB, T] with MB
// dividing B: one row of additive key biases per MB-th of the batch (a key-padding mask,
// [N, 1, 1, T] in the model, read as [N, T] for the N x heads batch). A row whose every
// logit is -inf is NaN, as onnxruntime's Softmax makes it; a large finite mask (the
// exporters' -10000 or the float minimum) leaves every row finite.
//
// Stages, each over the full rank so a schedule can compute them at a block of rows:
//   "<name>_scores"  [B, S, T]  q kt, a reduction over "rk"
//   "<name>_max"     [B, S]     the row's largest logit (scale and mask applied), over "rj"
//   "<name>_exp"     [B, S, T]  exp(logit - max)
//   "<name>_sum"     [B, S]     over "rj"
//   "<name>_product" [B, S, E]  exp v, a reduction over "rj"
//   "<name>"         [B, S, E]  product / sum ([N, S, H, E] with heads)
#pragma once

#include <string>

#include "compiler/te/te.h"

namespace temper::ops {

// mask may be an undefined tensor (no mask); k is kt without heads.
te::Tensor attention(const te::Tensor& q, const te::Tensor& k, const te::Tensor& v, const te::Tensor& mask,
                     double scale, int64_t heads = 0, const std::string& name = "attention");

}  // namespace temper::ops
