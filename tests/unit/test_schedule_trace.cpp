// Traces: a non-trivial schedule survives a JSON round trip and replays to the same
// program; sampling is seeded and decisions can be forced and mutated.
#include <gtest/gtest.h>

#include "compiler/ir/structural_equal.h"
#include "test_schedule_workloads.h"

namespace temper {
namespace {

using testing::text;

// Tiles C by sampled factors, stages A through shared memory and C through a local
// buffer, fuses D into C's tile, and annotates.
Schedule tiled_matmul_relu(uint64_t seed) {
  Schedule s(testing::matmul_relu(48, 64, 32), seed);
  BlockRV c = s.get_block("C");
  BlockRV d = s.get_block("D");
  BlockRV a_shared = s.cache_read(c, 1, "shared");
  BlockRV c_local = s.cache_write(c, 0, "local");
  std::vector<LoopRV> loops = s.get_loops(c);
  std::vector<ExprRV> ti = s.sample_perfect_tile(loops[0], 2, 16);
  std::vector<ExprRV> tj = s.sample_perfect_tile(loops[1], 2, 16);
  std::vector<LoopRV> i = s.split(loops[0], {ti[0], ti[1]});
  std::vector<LoopRV> j = s.split(loops[1], {tj[0], tj[1]});
  std::vector<LoopRV> k = s.split(loops[2], {std::nullopt, 4});
  s.reorder({i[0], j[0], k[0], i[1], k[1], j[1]});
  s.reverse_compute_at(c_local, j[0]);
  s.reverse_compute_at(d, j[0]);
  s.compute_at(a_shared, k[0]);
  LoopRV outer = s.fuse({i[0], j[0]});
  s.parallel(outer);
  s.vectorize(j[1]);
  ExprRV unroll = s.sample_categorical({0, 16, 64}, {0.2, 0.3, 0.5});
  s.annotate(outer, "pragma_auto_unroll_max_step", unroll);
  s.decompose_reduction(c, k[0]);
  return s;
}

TEST(ScheduleTrace, JsonRoundTripReplaysTheSameProgram) {
  Schedule s = tiled_matmul_relu(42);
  std::string json = s.trace().to_json().dump(2);
  Trace parsed = Trace::from_json(nlohmann::json::parse(json));
  Schedule replayed = parsed.replay(testing::matmul_relu(48, 64, 32));
  EXPECT_TRUE(structural_equal(replayed.func(), s.func()));
  EXPECT_EQ(text(replayed), text(s));
  EXPECT_EQ(replayed.trace().to_json().dump(2), json);
}

TEST(ScheduleTrace, ScheduleWithFixedDecisions) {
  nlohmann::json j = tiled_matmul_relu(42).trace().to_json();
  // Force the tiles to 8 x 6 and 4 x 16 and the unroll step to 16 (index 1).
  Trace t = Trace::from_json(j);
  std::vector<std::vector<int64_t>> tiles = {{8, 6}, {4, 16}};
  size_t next_tile = 0;
  for (size_t i = 0; i < t.instructions().size(); ++i) {
    InstKind kind = t.instructions()[i].kind;
    if (kind == InstKind::SamplePerfectTile) {
      t = t.with_decision(i, tiles.at(next_tile++));
    } else if (kind == InstKind::SampleCategorical) {
      t = t.with_decision(i, {1});
    }
  }
  EXPECT_EQ(text(t.replay(testing::matmul_relu(48, 64, 32))),
            R"(func matmul_relu(A: float32[48, 32], B: float32[32, 64], D: float32[48, 64]) {
  allocate C: float32[48, 64]
  allocate A_shared: float32[48, 32] in shared
  allocate C_local: float32[48, 64] in local
  parallel for (i_o_j_o_fused, 0, 32) [pragma_auto_unroll_max_step=16] {
    for (i_i_init, 0, 6) {
      vectorized for (j_i_init, 0, 16) {
        block C_init(vi in [0:48] = i_o_j_o_fused // 4 * 6 + i_i_init, vj in [0:64] = i_o_j_o_fused % 4 * 16 + j_i_init) {
          writes C_local[vi, vj]
          C_local[vi, vj] = 0.0f
        }
      }
    }
    for (k_o, 0, 8) {
      for (ax0, 0, 6) {
        for (ax1, 0, 4) {
          block A_shared(v0 in [0:48] = i_o_j_o_fused // 4 * 6 + ax0, v1 in [0:32] = k_o * 4 + ax1) {
            reads A[v0, v1]
            writes A_shared[v0, v1]
            A_shared[v0, v1] = A[v0, v1]
          }
        }
      }
      for (i_i, 0, 6) {
        for (k_i, 0, 4) {
          vectorized for (j_i, 0, 16) {
            block C(vi_1 in [0:48] = i_o_j_o_fused // 4 * 6 + i_i, vj_1 in [0:64] = i_o_j_o_fused % 4 * 16 + j_i, vk in reduce[0:32] = k_o * 4 + k_i) {
              reads C_local[vi_1, vj_1], A_shared[vi_1, vk], B[vk, vj_1]
              writes C_local[vi_1, vj_1]
              C_local[vi_1, vj_1] = C_local[vi_1, vj_1] + A_shared[vi_1, vk] * B[vk, vj_1]
            }
          }
        }
      }
    }
    for (ax0_1, 0, 6) {
      for (ax1_1, 0, 16) {
        block C_local(v0_1 in [0:48] = i_o_j_o_fused // 4 * 6 + ax0_1, v1_1 in [0:64] = i_o_j_o_fused % 4 * 16 + ax1_1) {
          reads C_local[v0_1, v1_1]
          writes C[v0_1, v1_1]
          C[v0_1, v1_1] = C_local[v0_1, v1_1]
        }
      }
    }
    for (ax0_2, 0, 6) {
      for (ax1_2, 0, 16) {
        block D(vi_2 in [0:48] = i_o_j_o_fused // 4 * 6 + ax0_2, vj_2 in [0:64] = i_o_j_o_fused % 4 * 16 + ax1_2) {
          reads C[vi_2, vj_2]
          writes D[vi_2, vj_2]
          D[vi_2, vj_2] = max(C[vi_2, vj_2], 0.0f)
        }
      }
    }
  }
}
)");
}

TEST(ScheduleTrace, SeedDecidesTheSamples) {
  auto decisions = [](const Schedule& s) {
    std::vector<std::vector<int64_t>> out;
    for (const Instruction& inst : s.trace().instructions()) {
      if (inst.decision) out.push_back(*inst.decision);
    }
    return out;
  };
  EXPECT_EQ(decisions(tiled_matmul_relu(7)), decisions(tiled_matmul_relu(7)));
  bool differs = false;
  for (uint64_t seed = 1; seed < 8; ++seed)
    differs = differs || decisions(tiled_matmul_relu(seed)) != decisions(tiled_matmul_relu(0));
  EXPECT_TRUE(differs);
  for (const auto& d : decisions(tiled_matmul_relu(3))) {
    if (d.size() == 2) {
      EXPECT_LE(d[1], 16);
      EXPECT_TRUE(d[0] * d[1] == 48 || d[0] * d[1] == 64);
    }
  }
}

TEST(ScheduleTrace, MutatedDecisionChangesTheTile) {
  Schedule s = tiled_matmul_relu(42);
  size_t tile = 0;
  while (s.trace().instructions()[tile].kind != InstKind::SamplePerfectTile) ++tile;
  Schedule a = s.trace().with_decision(tile, {3, 16}).replay(testing::matmul_relu(48, 64, 32));
  Schedule b = s.trace().with_decision(tile, {12, 4}).replay(testing::matmul_relu(48, 64, 32));
  EXPECT_NE(text(a), text(b));
  EXPECT_NE(text(a).find("for (i_i, 0, 16)"), std::string::npos);
  EXPECT_NE(text(b).find("for (i_i, 0, 4)"), std::string::npos);
}

}  // namespace
}  // namespace temper
