// tensorize on the expert GEMM schedule, and the micro-kernels it calls, run directly
// on both code paths against a double-precision reference.
#include <gtest/gtest.h>

#include <random>

#include "compiler/runtime/ukernels.h"
#include "compiler/schedule/tensor_intrin.h"
#include "test_schedule_workloads.h"

namespace temper {
namespace {

using testing::text;

// i_o, j_o / init / k, i_i (6), j_i (32): the form tensorize("sgemm_6x32") expects.
Schedule gemm_6x32(int m, int n, int k) {
  return testing::gemm_tiles(testing::matmul(m, n, k), 6, 32);
}

TEST(ScheduleTensorize, GemmTileBecomesAMicroKernelCall) {
  Schedule s = gemm_6x32(12, 64, 16);
  s.tensorize(s.get_loops(s.get_block("C"))[2], "sgemm_6x32");
  EXPECT_EQ(text(s), R"(func matmul(A: float32[12, 16], B: float32[16, 64], C: float32[12, 64]) {
  for (i_o, 0, 2) {
    for (j_o, 0, 2) {
      for (i_i_init, 0, 6) {
        for (j_i_init, 0, 32) {
          block C_init(vi in [0:12] = i_o * 6 + i_i_init, vj in [0:64] = j_o * 32 + j_i_init) {
            writes C[vi, vj]
            C[vi, vj] = 0.0f
          }
        }
      }
      block C() {
        reads C[i_o * 6:i_o * 6 + 6, j_o * 32:j_o * 32 + 32], A[i_o * 6:i_o * 6 + 6, 0:16], B[0:16, j_o * 32:j_o * 32 + 32]
        writes C[i_o * 6:i_o * 6 + 6, j_o * 32:j_o * 32 + 32]
        extern temper_ukernel_sgemm_6x32(address_of(C[i_o * 6, j_o * 32]), address_of(A[i_o * 6, 0]), address_of(B[0, j_o * 32]), 16, 16, 64, 64)
      }
    }
  }
}
)");
}

TEST(ScheduleTensorize, RegistryListsTheKernels) {
  ASSERT_NE(find_tensor_intrin("sgemm_6x32"), nullptr);
  ASSERT_NE(find_tensor_intrin("sgemm_6x16"), nullptr);
  EXPECT_EQ(find_tensor_intrin("sgemm_7x7"), nullptr);
  std::vector<std::pair<std::string, void*>> symbols = ukernel_symbols();
  ASSERT_EQ(symbols.size(), 2u);
  EXPECT_EQ(symbols[0].first, "temper_ukernel_sgemm_6x32");
  EXPECT_EQ(symbols[0].second, reinterpret_cast<void*>(&temper_ukernel_sgemm_6x32));
  EXPECT_EQ(symbols[1].first, "temper_ukernel_sgemm_6x16");
}

// C (6 x nr, leading dimension ldc) += A (6 x k, lda) * B (k x nr, ldb) on one path.
void check_kernel(int nr, UKernelIsa isa) {
  SgemmUKernel kernel = sgemm_ukernel(6, nr, isa);
  if (!kernel) GTEST_SKIP() << "this CPU has no AVX-512";
  const int k = 37, lda = 41, ldb = nr + 5, ldc = nr + 3;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(6 * lda), b(k * ldb), c(6 * ldc);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  for (float& x : c) x = dist(rng);
  std::vector<float> before = c;
  EXPECT_EQ(kernel(c.data(), a.data(), b.data(), k, lda, ldb, ldc), 0);
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < ldc; ++j) {
      if (j >= nr) {
        EXPECT_EQ(c[i * ldc + j], before[i * ldc + j]) << "wrote outside the tile at " << i << ", " << j;
        continue;
      }
      double ref = before[i * ldc + j];
      for (int p = 0; p < k; ++p) ref += double{a[i * lda + p]} * b[p * ldb + j];
      EXPECT_NEAR(c[i * ldc + j], ref, 1e-4) << "at " << i << ", " << j;
    }
  }
}

TEST(UKernels, Sgemm6x32Scalar) {
  check_kernel(32, UKernelIsa::Scalar);
}
TEST(UKernels, Sgemm6x32Avx512) {
  check_kernel(32, UKernelIsa::Avx512);
}
TEST(UKernels, Sgemm6x16Scalar) {
  check_kernel(16, UKernelIsa::Scalar);
}
TEST(UKernels, Sgemm6x16Avx512) {
  check_kernel(16, UKernelIsa::Avx512);
}

TEST(UKernels, ExportedSymbolUsesThisCpusPath) {
  float a[6] = {1, 2, 3, 4, 5, 6};
  float b[32];
  float c[6 * 32] = {};
  for (int j = 0; j < 32; ++j) b[j] = static_cast<float>(j);
  EXPECT_EQ(temper_ukernel_sgemm_6x32(c, a, b, 1, 1, 32, 32), 0);
  EXPECT_EQ(c[5 * 32 + 31], 6.0f * 31.0f);
  EXPECT_EQ(c[2 * 32 + 7], 3.0f * 7.0f);
}

}  // namespace
}  // namespace temper
