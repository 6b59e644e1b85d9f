// Normalisations: softmax, layer norm and batch norm (inference).
//
// Reductions keep the reduced dimensions with extent 1, so every stage has the rank of
// the input and a 1-D input needs no special case.
//   softmax:    "<name>_max" (max over the axis), "<name>_exp" (exp(x - max)),
//               "<name>_sum", "<name>" (exp / sum): the numerically stable form.
//   layer_norm: "<name>_mean", "<name>_var" (mean of (x - mean)^2: two passes, stable),
//               "<name>" = (x - mean) / sqrt(var + eps) * gamma + beta.
//   batch_norm: one stage, (x - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c].
#pragma once

#include <string>

#include "compiler/te/te.h"

namespace temper::ops {

// Softmax along `axis` (negative counts from the end).
te::Tensor softmax(const te::Tensor& x, int64_t axis, const std::string& name = "softmax");

// Normalises over the dimensions [axis, rank) (ONNX LayerNormalization); gamma and beta
// have the shape of those dimensions.
te::Tensor layer_norm(const te::Tensor& x, const te::Tensor& gamma, const te::Tensor& beta, int64_t axis,
                      double eps = 1e-5, const std::string& name = "layer_norm");

// Inference batch norm with statistics given per channel along `axis`; mean, var,
// gamma and beta are 1-D with x.shape[axis] elements.
te::Tensor batch_norm(const te::Tensor& x, const te::Tensor& mean, const te::Tensor& var, const te::Tensor& gamma,
                      const te::Tensor& beta, int64_t axis = 1, double eps = 1e-5,
                      const std::string& name = "batch_norm");

}  // namespace temper::ops
