// rfactor and decompose_reduction.
#include <gtest/gtest.h>

#include "test_schedule_workloads.h"

namespace temper {
namespace {

using testing::text;

TEST(ScheduleRFactor, PartialSumsOverTheInnerReductionLoop) {
  Schedule s(testing::row_sum(8, 64));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("B"));
  std::vector<LoopRV> k = s.split(loops[1], {std::nullopt, 4});
  BlockRV rf = s.rfactor(k[1], 0);
  EXPECT_EQ(s.block_name(rf), "B_rf");
  EXPECT_EQ(text(s), R"(func row_sum(A: float32[8, 64], B: float32[8]) {
  allocate B_rf: float32[4, 8]
  for (i, 0, 8) {
    for (k_o, 0, 16) {
      for (k_i, 0, 4) {
        block B_rf(vi in [0:8] = i, vk_o in reduce[0:16] = k_o, vk_i in [0:4] = k_i) {
          reads B_rf[vk_i, vi], A[vi, vk_o * 4 + vk_i]
          writes B_rf[vk_i, vi]
          init {
            B_rf[vk_i, vi] = 0.0f
          }
          B_rf[vk_i, vi] = B_rf[vk_i, vi] + A[vi, vk_o * 4 + vk_i]
        }
      }
    }
  }
  for (i_1, 0, 8) {
    for (k_i_1, 0, 4) {
      block B(vi_1 in [0:8] = i_1, vk_i_1 in reduce[0:4] = k_i_1) {
        reads B[vi_1], B_rf[vk_i_1, vi_1]
        writes B[vi_1]
        init {
          B[vi_1] = 0.0f
        }
        B[vi_1] = B[vi_1] + B_rf[vk_i_1, vi_1]
      }
    }
  }
}
)");
}

TEST(ScheduleRFactor, FactorAxisPlacesTheNewDimension) {
  Schedule s(testing::row_sum(8, 64));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("B"));
  std::vector<LoopRV> k = s.split(loops[1], {std::nullopt, 4});
  s.rfactor(k[1], -1);
  EXPECT_NE(text(s).find("allocate B_rf: float32[8, 4]"), std::string::npos);
  EXPECT_NE(text(s).find("B[vi_1] = B[vi_1] + B_rf[vi_1, vk_i_1]"), std::string::npos);
  // The rfactor loop now binds a spatial variable: it may run in parallel.
  s.parallel(k[1]);
}

TEST(ScheduleDecomposeReduction, InitMovesBeforeTheReductionLoop) {
  Schedule s(testing::matmul(16, 16, 4));
  BlockRV c = s.get_block("C");
  std::vector<LoopRV> loops = s.get_loops(c);
  std::vector<LoopRV> tiled = s.tile({loops[0], loops[1]}, {4, 8});
  s.reorder({loops[2], tiled[2]});
  s.vectorize(tiled[3]);
  BlockRV init = s.decompose_reduction(c, loops[2]);
  EXPECT_EQ(s.block_name(init), "C_init");
  EXPECT_EQ(text(s), R"(func matmul(A: float32[16, 4], B: float32[4, 16], C: float32[16, 16]) {
  for (i_o, 0, 4) {
    for (j_o, 0, 2) {
      vectorized for (j_i_init, 0, 8) {
        for (i_i_init, 0, 4) {
          block C_init(vi in [0:16] = i_o * 4 + i_i_init, vj in [0:16] = j_o * 8 + j_i_init) {
            writes C[vi, vj]
            C[vi, vj] = 0.0f
          }
        }
      }
      for (k, 0, 4) {
        vectorized for (j_i, 0, 8) {
          for (i_i, 0, 4) {
            block C(vi_1 in [0:16] = i_o * 4 + i_i, vj_1 in [0:16] = j_o * 8 + j_i, vk in reduce[0:4] = k) {
              reads C[vi_1, vj_1], A[vi_1, vk], B[vk, vj_1]
              writes C[vi_1, vj_1]
              C[vi_1, vj_1] = C[vi_1, vj_1] + A[vi_1, vk] * B[vk, vj_1]
            }
          }
        }
      }
    }
  }
}
)");
}

}  // namespace
}  // namespace temper
