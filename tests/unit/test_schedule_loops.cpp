// Loop primitives on small te workloads: split, tile, fuse, reorder, loop kinds and
// annotations, each compared with the expected printed program.
#include <gtest/gtest.h>

#include "test_schedule_workloads.h"

namespace temper {
namespace {

using testing::scale_add;
using testing::text;

TEST(ScheduleSplit, ExactFactorsNeedNoGuard) {
  Schedule s(scale_add(16, 8));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("B"));
  std::vector<LoopRV> parts = s.split(loops[0], {std::nullopt, 4});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(to_string(s.loop(parts[0])->extent), "4");
  EXPECT_EQ(to_string(s.loop(parts[1])->extent), "4");
  EXPECT_EQ(text(s), R"(func scale_add(A: float32[16, 8], C: float32[16, 8]) {
  allocate B: float32[16, 8]
  for (i_o, 0, 4) {
    for (i_i, 0, 4) {
      for (j, 0, 8) {
        block B(vi in [0:16] = i_o * 4 + i_i, vj in [0:8] = j) {
          reads A[vi, vj]
          writes B[vi, vj]
          B[vi, vj] = A[vi, vj] * 2.0f
        }
      }
    }
  }
  for (i, 0, 16) {
    for (j_1, 0, 8) {
      block C(vi_1 in [0:16] = i, vj_1 in [0:8] = j_1) {
        reads B[vi_1, vj_1]
        writes C[vi_1, vj_1]
        C[vi_1, vj_1] = B[vi_1, vj_1] + 1.0f
      }
    }
  }
}
)");
}

TEST(ScheduleSplit, NonDividingFactorGuardsTheTail) {
  Schedule s(scale_add(10, 8));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  std::vector<LoopRV> parts = s.split(loops[0], {-1, 4});
  EXPECT_EQ(to_string(s.loop(parts[0])->extent), "3");
  EXPECT_EQ(text(s), R"(func scale_add(A: float32[10, 8], C: float32[10, 8]) {
  allocate B: float32[10, 8]
  for (i, 0, 10) {
    for (j, 0, 8) {
      block B(vi in [0:10] = i, vj in [0:8] = j) {
        reads A[vi, vj]
        writes B[vi, vj]
        B[vi, vj] = A[vi, vj] * 2.0f
      }
    }
  }
  for (i_o, 0, 3) {
    for (i_i, 0, 4) {
      for (j_1, 0, 8) {
        block C(vi_1 in [0:10] = i_o * 4 + i_i, vj_1 in [0:8] = j_1) where i_o * 4 + i_i < 10 {
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

TEST(ScheduleSplit, NestedSplitsFlattenIntoOneSum) {
  Schedule s(testing::row_sum(64, 8));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("B"));
  std::vector<LoopRV> three = s.split(loops[0], {2, std::nullopt, 4});
  EXPECT_EQ(to_string(s.loop(three[1])->extent), "8");
  s.split(three[1], {std::nullopt, 2});
  EXPECT_EQ(text(s), R"(func row_sum(A: float32[64, 8], B: float32[64]) {
  for (i_0, 0, 2) {
    for (i_1_o, 0, 4) {
      for (i_1_i, 0, 2) {
        for (i_2, 0, 4) {
          for (k, 0, 8) {
            block B(vi in [0:64] = i_0 * 32 + i_1_o * 8 + i_1_i * 4 + i_2, vk in reduce[0:8] = k) {
              reads B[vi], A[vi, vk]
              writes B[vi]
              init {
                B[vi] = 0.0f
              }
              B[vi] = B[vi] + A[vi, vk]
            }
          }
        }
      }
    }
  }
}
)");
}

TEST(ScheduleSplit, TakesSampledFactors) {
  Schedule s(scale_add(16, 8));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("B"));
  std::vector<ExprRV> tiles = s.sample_perfect_tile(loops[1], 2, 4, std::vector<int64_t>{4, 2});
  std::vector<LoopRV> parts = s.split(loops[1], {tiles[0], tiles[1]});
  EXPECT_EQ(to_string(s.loop(parts[0])->extent), "4");
  EXPECT_EQ(to_string(s.loop(parts[1])->extent), "2");
  EXPECT_NE(text(s).find("vj in [0:8] = j_o * 2 + j_i"), std::string::npos);
}

TEST(ScheduleTile, SplitsAndPutsOuterLoopsFirst) {
  Schedule s(testing::matmul(64, 32, 16));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  std::vector<LoopRV> tiled = s.tile({loops[0], loops[1]}, {8, 16});
  ASSERT_EQ(tiled.size(), 4u);
  EXPECT_EQ(s.loop_var(tiled[1])->name, "j_o");
  EXPECT_EQ(text(s), R"(func matmul(A: float32[64, 16], B: float32[16, 32], C: float32[64, 32]) {
  for (i_o, 0, 8) {
    for (j_o, 0, 2) {
      for (i_i, 0, 8) {
        for (j_i, 0, 16) {
          for (k, 0, 16) {
            block C(vi in [0:64] = i_o * 8 + i_i, vj in [0:32] = j_o * 16 + j_i, vk in reduce[0:16] = k) {
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
    }
  }
}
)");
}

TEST(ScheduleFuse, FusedLoopRecoversItsParts) {
  Schedule s(scale_add(16, 8));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("B"));
  LoopRV fused = s.fuse(loops);
  EXPECT_EQ(to_string(s.loop(fused)->extent), "128");
  std::vector<LoopRV> parts = s.split(fused, {std::nullopt, 4});
  s.parallel(parts[0]);
  s.vectorize(parts[1]);
  EXPECT_EQ(text(s), R"(func scale_add(A: float32[16, 8], C: float32[16, 8]) {
  allocate B: float32[16, 8]
  parallel for (i_j_fused_o, 0, 32) {
    vectorized for (i_j_fused_i, 0, 4) {
      block B(vi in [0:16] = (i_j_fused_o * 4 + i_j_fused_i) // 8, vj in [0:8] = (i_j_fused_o * 4 + i_j_fused_i) % 8) {
        reads A[vi, vj]
        writes B[vi, vj]
        B[vi, vj] = A[vi, vj] * 2.0f
      }
    }
  }
  for (i, 0, 16) {
    for (j, 0, 8) {
      block C(vi_1 in [0:16] = i, vj_1 in [0:8] = j) {
        reads B[vi_1, vj_1]
        writes C[vi_1, vj_1]
        C[vi_1, vj_1] = B[vi_1, vj_1] + 1.0f
      }
    }
  }
}
)");
}

TEST(ScheduleReorder, NamedLoopsSwapAndOthersStay) {
  Schedule s(testing::matmul(8, 4, 2));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  s.reorder({loops[2], loops[0]});
  EXPECT_EQ(text(s), R"(func matmul(A: float32[8, 2], B: float32[2, 4], C: float32[8, 4]) {
  for (k, 0, 2) {
    for (j, 0, 4) {
      for (i, 0, 8) {
        block C(vi in [0:8] = i, vj in [0:4] = j, vk in reduce[0:2] = k) {
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
}
)");
}

TEST(ScheduleLoopKinds, KindsTagsAndAnnotations) {
  Schedule s(testing::matmul(8, 4, 2));
  BlockRV c = s.get_block("C");
  std::vector<LoopRV> loops = s.get_loops(c);
  s.bind(loops[0], "threadIdx.x");
  s.unroll(loops[1]);
  s.annotate(loops[1], "pragma_auto_unroll_max_step", 64);
  s.annotate(c, "schedule_rule", "gemm");
  EXPECT_EQ(text(s), R"(func matmul(A: float32[8, 2], B: float32[2, 4], C: float32[8, 4]) {
  thread_binding for (i, 0, 8) bind("threadIdx.x") {
    unrolled for (j, 0, 4) [pragma_auto_unroll_max_step=64] {
      for (k, 0, 2) {
        block C(vi in [0:8] = i, vj in [0:4] = j, vk in reduce[0:2] = k) [schedule_rule="gemm"] {
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
}
)");
}

TEST(ScheduleLoopKinds, AnnotationFromASampledValue) {
  Schedule s(testing::matmul(8, 4, 2));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  ExprRV step = s.sample_categorical({0, 16, 64}, {1, 1, 1}, 2);
  s.annotate(loops[0], "pragma_auto_unroll_max_step", step);
  EXPECT_EQ(std::get<int64_t>(s.loop(loops[0])->annotations.at("pragma_auto_unroll_max_step")), 64);
}

}  // namespace
}  // namespace temper
