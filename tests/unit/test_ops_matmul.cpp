// matmul, batch_matmul and dense: the IR their definitions produce, and their reference
// implementations against hand-computed values and against Eigen.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <random>

#include "compiler/ir/printer.h"
#include "compiler/ops/matmul.h"
#include "compiler/ops/reference.h"
#include "compiler/ops/workload.h"

namespace temper::ops {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

RowMajor random_matrix(int64_t rows, int64_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  RowMajor m(rows, cols);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) m(i, j) = dist(rng);
  }
  return m;
}

TEST(MatmulDefinition, PrintsOneReductionBlock) {
  OpInstance inst = instantiate(Workload::parse("matmul:M=4,N=8,K=16"));
  EXPECT_EQ(to_string(inst.func), R"(func matmul(A: float32[4, 16], B: float32[16, 8], matmul: float32[4, 8]) {
  for (i, 0, 4) {
    for (j, 0, 8) {
      for (rk, 0, 16) {
        block matmul(vi in [0:4] = i, vj in [0:8] = j, vrk in reduce[0:16] = rk) {
          reads matmul[vi, vj], A[vi, vrk], B[vrk, vj]
          writes matmul[vi, vj]
          init {
            matmul[vi, vj] = 0.0f
          }
          matmul[vi, vj] = matmul[vi, vj] + A[vi, vrk] * B[vrk, vj]
        }
      }
    }
  }
}
)");
}

TEST(MatmulDefinition, TransposeFlagsSwapTheOperandIndices) {
  std::string ir = to_string(instantiate(Workload::parse("matmul:M=2,N=3,K=4,transpose_a=1,transpose_b=1")).func);
  EXPECT_NE(ir.find("func matmul(A: float32[4, 2], B: float32[3, 4], matmul: float32[2, 3])"), std::string::npos) << ir;
  EXPECT_NE(ir.find("matmul[vi, vj] = matmul[vi, vj] + A[vrk, vi] * B[vj, vrk]"), std::string::npos) << ir;
}

TEST(MatmulDefinition, BatchMatmulReducesWithinEachBatch) {
  std::string ir = to_string(instantiate(Workload::parse("batch_matmul:B=2,M=3,N=4,K=5,transpose_b=1")).func);
  EXPECT_NE(ir.find("block batch_matmul(vi in [0:2] = i, vj in [0:3] = j, vk in [0:4] = k, vrk in reduce[0:5] = rk)"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("batch_matmul[vi, vj, vk] + A[vi, vj, vrk] * B[vi, vk, vrk]"), std::string::npos) << ir;
}

TEST(MatmulDefinition, DenseWithEpilogueHasTwoStages) {
  std::string ir = to_string(instantiate(Workload::parse("dense:M=2,N=3,K=4,bias=1,act=relu")).func);
  EXPECT_NE(ir.find("allocate dense_matmul: float32[2, 3]"), std::string::npos) << ir;
  EXPECT_NE(ir.find("dense_matmul[vi, vj] = dense_matmul[vi, vj] + X[vi, vrk] * W[vj, vrk]"), std::string::npos) << ir;
  EXPECT_NE(ir.find("dense[vi_1, vj_1] = max(dense_matmul[vi_1, vj_1] + bias[vj_1], 0.0f)"), std::string::npos) << ir;
  // Without bias or activation the product is the output.
  std::string plain = to_string(instantiate(Workload::parse("dense:M=2,N=3,K=4")).func);
  EXPECT_EQ(plain.find("dense_matmul"), std::string::npos) << plain;
  EXPECT_NE(plain.find("block dense("), std::string::npos) << plain;
}

TEST(MatmulReference, HandComputed) {
  // [1 2 3; 4 5 6] x [7 8; 9 10; 11 12]
  std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9, 10, 11, 12}, c(4);
  reference::matmul(a.data(), b.data(), c.data(), 2, 2, 3, false, false);
  EXPECT_EQ(c, (std::vector<float>{58, 64, 139, 154}));
  // The same product with A stored transposed ([3, 2]) and B stored transposed ([2, 3]).
  std::vector<float> at = {1, 4, 2, 5, 3, 6}, bt = {7, 9, 11, 8, 10, 12};
  reference::matmul(at.data(), bt.data(), c.data(), 2, 2, 3, true, true);
  EXPECT_EQ(c, (std::vector<float>{58, 64, 139, 154}));
  std::vector<int32_t> ai = {1, -2, 3, 4}, bi = {5, 6, -7, 8}, ci(4);
  reference::matmul(ai.data(), bi.data(), ci.data(), 2, 2, 2, false, false);
  EXPECT_EQ(ci, (std::vector<int32_t>{19, -10, -13, 50}));
}

TEST(MatmulReference, MatchesEigenForEveryTransposition) {
  const int64_t M = 13, N = 9, K = 17;
  RowMajor a = random_matrix(M, K, 1), b = random_matrix(K, N, 2);
  RowMajor expected = a * b;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      RowMajor a_stored = ta ? RowMajor(a.transpose()) : a;
      RowMajor b_stored = tb ? RowMajor(b.transpose()) : b;
      RowMajor c(M, N);
      reference::matmul(a_stored.data(), b_stored.data(), c.data(), M, N, K, ta, tb);
      EXPECT_TRUE(c.isApprox(expected, 1e-5f)) << "transpose_a=" << ta << " transpose_b=" << tb;
    }
  }
}

TEST(MatmulReference, BatchMatmulMatchesEigenPerBatch) {
  const int64_t B = 3, M = 5, N = 7, K = 6;
  std::vector<float> a(B * M * K), b(B * K * N), c(B * M * N);
  std::vector<RowMajor> as, bs;
  for (int64_t n = 0; n < B; ++n) {
    as.push_back(random_matrix(M, K, 10 + n));
    bs.push_back(random_matrix(N, K, 20 + n));  // stored transposed: [N, K]
    std::copy(as[n].data(), as[n].data() + M * K, a.begin() + n * M * K);
    std::copy(bs[n].data(), bs[n].data() + N * K, b.begin() + n * K * N);
  }
  reference::batch_matmul(a.data(), b.data(), c.data(), B, M, N, K, false, true);
  for (int64_t n = 0; n < B; ++n) {
    RowMajor expected = as[n] * bs[n].transpose();
    Eigen::Map<RowMajor> got(c.data() + n * M * N, M, N);
    EXPECT_TRUE(got.isApprox(expected, 1e-5f)) << "batch " << n;
  }
}

TEST(MatmulReference, DenseMatchesEigenWithBiasAndActivation) {
  const int64_t M = 6, N = 5, K = 8;
  RowMajor x = random_matrix(M, K, 3), w = random_matrix(N, K, 4), bias = random_matrix(1, N, 5);
  RowMajor linear = (x * w.transpose()).rowwise() + bias.row(0);
  RowMajor y(M, N);
  reference::dense(x.data(), w.data(), bias.data(), y.data(), M, N, K, std::nullopt);
  EXPECT_TRUE(y.isApprox(linear, 1e-5f));
  reference::dense(x.data(), w.data(), bias.data(), y.data(), M, N, K, UnaryOp::Relu);
  EXPECT_TRUE(y.isApprox(RowMajor(linear.cwiseMax(0.0f)), 1e-5f));
  reference::dense<float>(x.data(), w.data(), nullptr, y.data(), M, N, K, UnaryOp::Tanh);
  EXPECT_TRUE(y.isApprox(RowMajor((x * w.transpose()).array().tanh()), 1e-5f));
}

}  // namespace
}  // namespace temper::ops
