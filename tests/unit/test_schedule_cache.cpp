// cache_read and cache_write: full-size copies through a new buffer, then moved into
// the tiles that use them.
#include <gtest/gtest.h>

#include "test_schedule_workloads.h"

namespace temper {
namespace {

using testing::text;

TEST(ScheduleCache, ReadAndWriteCopiesAroundTheBlock) {
  Schedule s(testing::matmul(16, 8, 4));
  BlockRV c = s.get_block("C");
  BlockRV a_shared = s.cache_read(c, 1, "shared");
  BlockRV c_local = s.cache_write(c, 0, "local");
  EXPECT_EQ(s.block_name(a_shared), "A_shared");
  EXPECT_EQ(s.block_name(c_local), "C_local");
  EXPECT_EQ(text(s), R"(func matmul(A: float32[16, 4], B: float32[4, 8], C: float32[16, 8]) {
  allocate A_shared: float32[16, 4] in shared
  allocate C_local: float32[16, 8] in local
  for (ax0, 0, 16) {
    for (ax1, 0, 4) {
      block A_shared(v0 in [0:16] = ax0, v1 in [0:4] = ax1) {
        reads A[v0, v1]
        writes A_shared[v0, v1]
        A_shared[v0, v1] = A[v0, v1]
      }
    }
  }
  for (i, 0, 16) {
    for (j, 0, 8) {
      for (k, 0, 4) {
        block C(vi in [0:16] = i, vj in [0:8] = j, vk in reduce[0:4] = k) {
          reads C_local[vi, vj], A_shared[vi, vk], B[vk, vj]
          writes C_local[vi, vj]
          init {
            C_local[vi, vj] = 0.0f
          }
          C_local[vi, vj] = C_local[vi, vj] + A_shared[vi, vk] * B[vk, vj]
        }
      }
    }
  }
  for (ax0_1, 0, 16) {
    for (ax1_1, 0, 8) {
      block C_local(v0_1 in [0:16] = ax0_1, v1_1 in [0:8] = ax1_1) {
        reads C_local[v0_1, v1_1]
        writes C[v0_1, v1_1]
        C[v0_1, v1_1] = C_local[v0_1, v1_1]
      }
    }
  }
}
)");
}

TEST(ScheduleCache, CopiesMoveIntoTheTiles) {
  Schedule s(testing::matmul(16, 8, 4));
  BlockRV c = s.get_block("C");
  BlockRV a_shared = s.cache_read(c, 1, "shared");
  BlockRV c_local = s.cache_write(c, 0, "local");
  std::vector<LoopRV> loops = s.get_loops(c);
  std::vector<LoopRV> tiled = s.tile({loops[0], loops[1]}, {4, 4});
  s.reverse_compute_at(c_local, tiled[1]);
  s.compute_at(a_shared, tiled[0]);
  EXPECT_EQ(text(s), R"(func matmul(A: float32[16, 4], B: float32[4, 8], C: float32[16, 8]) {
  allocate A_shared: float32[16, 4] in shared
  allocate C_local: float32[16, 8] in local
  for (i_o, 0, 4) {
    for (ax0, 0, 4) {
      for (ax1, 0, 4) {
        block A_shared(v0 in [0:16] = i_o * 4 + ax0, v1 in [0:4] = ax1) {
          reads A[v0, v1]
          writes A_shared[v0, v1]
          A_shared[v0, v1] = A[v0, v1]
        }
      }
    }
    for (j_o, 0, 2) {
      for (i_i, 0, 4) {
        for (j_i, 0, 4) {
          for (k, 0, 4) {
            block C(vi in [0:16] = i_o * 4 + i_i, vj in [0:8] = j_o * 4 + j_i, vk in reduce[0:4] = k) {
              reads C_local[vi, vj], A_shared[vi, vk], B[vk, vj]
              writes C_local[vi, vj]
              init {
                C_local[vi, vj] = 0.0f
              }
              C_local[vi, vj] = C_local[vi, vj] + A_shared[vi, vk] * B[vk, vj]
            }
          }
        }
      }
      for (ax0_1, 0, 4) {
        for (ax1_1, 0, 4) {
          block C_local(v0_1 in [0:16] = i_o * 4 + ax0_1, v1_1 in [0:8] = j_o * 4 + ax1_1) {
            reads C_local[v0_1, v1_1]
            writes C[v0_1, v1_1]
            C[v0_1, v1_1] = C_local[v0_1, v1_1]
          }
        }
      }
    }
  }
}
)");
}

// A layout rewrite: the copies' dimensions permuted, the block's accesses with them, and
// the copy nests still over the original buffer's dimensions.
TEST(ScheduleCache, LayoutPermutesTheCopiesDimensions) {
  Schedule s(testing::matmul(16, 8, 4));
  BlockRV c = s.get_block("C");
  s.cache_read(c, 1, "global", {1, 0});
  s.cache_write(c, 0, "local", {1, 0});
  EXPECT_EQ(text(s), R"(func matmul(A: float32[16, 4], B: float32[4, 8], C: float32[16, 8]) {
  allocate A_global: float32[4, 16]
  allocate C_local: float32[8, 16] in local
  for (ax0, 0, 16) {
    for (ax1, 0, 4) {
      block A_global(v0 in [0:16] = ax0, v1 in [0:4] = ax1) {
        reads A[v0, v1]
        writes A_global[v1, v0]
        A_global[v1, v0] = A[v0, v1]
      }
    }
  }
  for (i, 0, 16) {
    for (j, 0, 8) {
      for (k, 0, 4) {
        block C(vi in [0:16] = i, vj in [0:8] = j, vk in reduce[0:4] = k) {
          reads C_local[vj, vi], A_global[vk, vi], B[vk, vj]
          writes C_local[vj, vi]
          init {
            C_local[vj, vi] = 0.0f
          }
          C_local[vj, vi] = C_local[vj, vi] + A_global[vk, vi] * B[vk, vj]
        }
      }
    }
  }
  for (ax0_1, 0, 16) {
    for (ax1_1, 0, 8) {
      block C_local(v0_1 in [0:16] = ax0_1, v1_1 in [0:8] = ax1_1) {
        reads C_local[v1_1, v0_1]
        writes C[v0_1, v1_1]
        C[v0_1, v1_1] = C_local[v1_1, v0_1]
      }
    }
  }
}
)");
  // The trace keeps the layout: replayed, it makes the same program.
  Schedule replayed = s.trace().replay(testing::matmul(16, 8, 4));
  EXPECT_EQ(text(replayed), text(s));
}

TEST(ScheduleCache, ALayoutThatIsNoPermutationIsRefused) {
  Schedule s(testing::matmul(16, 8, 4));
  BlockRV c = s.get_block("C");
  try {
    s.cache_read(c, 1, "global", {0, 0});
    FAIL() << "expected a ScheduleError";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("layout [0,0] is not a permutation of the 2 dimensions of A"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(s.cache_write(c, 0, "local", {1}), ScheduleError);
}

}  // namespace
}  // namespace temper
