// Matrix products: matmul, batch_matmul and dense (a fully connected layer).
//
//   matmul:        C[M, N] = sum_k A[M, K] B[K, N]; transpose_a reads A as [K, M],
//                  transpose_b reads B as [N, K].
//   batch_matmul:  C[b, M, N] = sum_k A[b, M, K] B[b, K, N], with the same flags on the
//                  last two dimensions.
//   dense:         Y[M, N] = act(sum_k X[M, K] W[N, K] + bias[N]), the weight stored as
//                  [N, K] (torch.nn.Linear, ONNX Gemm with transB=1).
//
// The product is one reduction stage over the reduce axis "rk". dense with a bias or an
// activation adds one injective epilogue stage: "<name>_matmul" then "<name>".
#pragma once

#include <optional>
#include <string>

#include "compiler/ops/elementwise.h"
#include "compiler/te/te.h"

namespace temper::ops {

te::Tensor matmul(const te::Tensor& a, const te::Tensor& b, bool transpose_a = false, bool transpose_b = false,
                  const std::string& name = "matmul");

te::Tensor batch_matmul(const te::Tensor& a, const te::Tensor& b, bool transpose_a = false, bool transpose_b = false,
                        const std::string& name = "batch_matmul");

// bias may be an undefined Tensor (no bias); activation nullopt means none.
te::Tensor dense(const te::Tensor& x, const te::Tensor& weight, const te::Tensor& bias,
                 std::optional<UnaryOp> activation = std::nullopt, const std::string& name = "dense");

struct Workload;
// The activation a dense workload's "act" key names (nullopt for "none").
std::optional<UnaryOp> dense_activation(const Workload& w);

}  // namespace temper::ops
