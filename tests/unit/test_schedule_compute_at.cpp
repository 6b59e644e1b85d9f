// compute_at, reverse_compute_at and compute_inline, compared with expected programs.
#include <gtest/gtest.h>

#include "test_schedule_workloads.h"

namespace temper {
namespace {

using testing::text;

TEST(ScheduleComputeAt, ProducerCoversTheConsumersTile) {
  Schedule s(testing::matmul_relu(64, 16, 32));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("D"));
  std::vector<LoopRV> tiled = s.tile({loops[0], loops[1]}, {8, 4});
  s.compute_at(s.get_block("C"), tiled[1]);
  EXPECT_EQ(text(s), R"(func matmul_relu(A: float32[64, 32], B: float32[32, 16], D: float32[64, 16]) {
  allocate C: float32[64, 16]
  for (i_o, 0, 8) {
    for (j_o, 0, 4) {
      for (ax0, 0, 8) {
        for (ax1, 0, 4) {
          for (ax2, 0, 32) {
            block C(vi in [0:64] = i_o * 8 + ax0, vj in [0:16] = j_o * 4 + ax1, vk in reduce[0:32] = ax2) {
              reads C[vi, vj], A[vi, vk], B[vk, vj]
              writes C[vi, vj]
              init {
                C[vi, vj] = 0.0f
              }
              C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
            }
          }
        }
      }
      for (i_i, 0, 8) {
        for (j_i, 0, 4) {
          block D(vi_1 in [0:64] = i_o * 8 + i_i, vj_1 in [0:16] = j_o * 4 + j_i) {
            reads C[vi_1, vj_1]
            writes D[vi_1, vj_1]
            D[vi_1, vj_1] = max(C[vi_1, vj_1], 0.0f)
          }
        }
      }
    }
  }
}
)");
}

TEST(ScheduleComputeAt, InnermostLoopLeavesOnlyTheReduction) {
  Schedule s(testing::matmul_relu(64, 16, 32));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("D"));
  s.compute_at(s.get_block("C"), loops[1]);
  EXPECT_EQ(text(s), R"(func matmul_relu(A: float32[64, 32], B: float32[32, 16], D: float32[64, 16]) {
  allocate C: float32[64, 16]
  for (i, 0, 64) {
    for (j, 0, 16) {
      for (ax0, 0, 32) {
        block C(vi in [0:64] = i, vj in [0:16] = j, vk in reduce[0:32] = ax0) {
          reads C[vi, vj], A[vi, vk], B[vk, vj]
          writes C[vi, vj]
          init {
            C[vi, vj] = 0.0f
          }
          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        }
      }
      block D(vi_1 in [0:64] = i, vj_1 in [0:16] = j) {
        reads C[vi_1, vj_1]
        writes D[vi_1, vj_1]
        D[vi_1, vj_1] = max(C[vi_1, vj_1], 0.0f)
      }
    }
  }
}
)");
}

TEST(ScheduleComputeAt, TailOfTheConsumerBecomesAPredicate) {
  Schedule s(testing::scale_add(10, 8));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  std::vector<LoopRV> parts = s.split(loops[0], {std::nullopt, 4});
  s.compute_at(s.get_block("B"), parts[0]);
  EXPECT_EQ(text(s), R"(func scale_add(A: float32[10, 8], C: float32[10, 8]) {
  allocate B: float32[10, 8]
  for (i_o, 0, 3) {
    for (ax0, 0, 4) {
      for (ax1, 0, 8) {
        block B(vi in [0:10] = i_o * 4 + ax0, vj in [0:8] = ax1) where i_o * 4 + ax0 < 10 {
          reads A[vi, vj]
          writes B[vi, vj]
          B[vi, vj] = A[vi, vj] * 2.0f
        }
      }
    }
    for (i_i, 0, 4) {
      for (j, 0, 8) {
        block C(vi_1 in [0:10] = i_o * 4 + i_i, vj_1 in [0:8] = j) where i_o * 4 + i_i < 10 {
          reads B[vi_1, vj_1]
          writes C[vi_1, vj_1]
          C[vi_1, vj_1] = B[vi_1, vj_1] + 1.0f
        }
      }
    }
  }
}
)");
}

TEST(ScheduleReverseComputeAt, ConsumerFollowsTheProducersTile) {
  Schedule s(testing::matmul_relu(64, 16, 32));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  std::vector<LoopRV> tiled = s.tile({loops[0], loops[1]}, {8, 8});
  s.reverse_compute_at(s.get_block("D"), tiled[1]);
  EXPECT_EQ(text(s), R"(func matmul_relu(A: float32[64, 32], B: float32[32, 16], D: float32[64, 16]) {
  allocate C: float32[64, 16]
  for (i_o, 0, 8) {
    for (j_o, 0, 2) {
      for (i_i, 0, 8) {
        for (j_i, 0, 8) {
          for (k, 0, 32) {
            block C(vi in [0:64] = i_o * 8 + i_i, vj in [0:16] = j_o * 8 + j_i, vk in reduce[0:32] = k) {
              reads C[vi, vj], A[vi, vk], B[vk, vj]
              writes C[vi, vj]
              init {
                C[vi, vj] = 0.0f
              }
              C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
            }
          }
        }
      }
      for (ax0, 0, 8) {
        for (ax1, 0, 8) {
          block D(vi_1 in [0:64] = i_o * 8 + ax0, vj_1 in [0:16] = j_o * 8 + ax1) {
            reads C[vi_1, vj_1]
            writes D[vi_1, vj_1]
            D[vi_1, vj_1] = max(C[vi_1, vj_1], 0.0f)
          }
        }
      }
    }
  }
}
)");
}

TEST(ScheduleComputeInline, ElementwiseProducerDisappears) {
  Schedule s(testing::scale_add(16, 8));
  s.compute_inline(s.get_block("B"));
  EXPECT_EQ(text(s), R"(func scale_add(A: float32[16, 8], C: float32[16, 8]) {
  for (i, 0, 16) {
    for (j, 0, 8) {
      block C(vi in [0:16] = i, vj in [0:8] = j) {
        reads A[vi, vj]
        writes C[vi, vj]
        C[vi, vj] = A[vi, vj] * 2.0f + 1.0f
      }
    }
  }
}
)");
}

}  // namespace
}  // namespace temper
