// The limits the auto-scheduler's search holds candidates to before scoring them: the
// register tile of a reduction (the spatial loops inside its innermost reduction loop)
// within the vector registers on CPU, and a thread's packing copy within half its L2.
#include <gtest/gtest.h>

#include "compiler/lower/lower.h"
#include "search/candidate_limits.h"
#include "test_schedule_workloads.h"

namespace temper::search {
namespace {

TEST(CandidateLimits, TheRegisterTileIsTheSpatialLoopsInsideTheInnermostReductionLoop) {
  Schedule s(testing::matmul(64, 64, 32));
  // As defined, k is innermost: a tile of one element.
  EXPECT_EQ(largest_register_tile(s.func()).elements, 1);
  BlockRV c = s.get_block("C");
  std::vector<LoopRV> loops = s.get_loops(c);
  std::vector<LoopRV> i = s.split(loops[0], {16, 4});
  std::vector<LoopRV> j = s.split(loops[1], {4, 16});
  std::vector<LoopRV> k = s.split(loops[2], {8, 4});
  // i_o j_o k_o i_i k_i j_i: inside k_i, a tile of 16 columns.
  s.reorder({i[0], j[0], k[0], i[1], k[1], j[1]});
  EXPECT_EQ(largest_register_tile(s.func()).elements, 16);
  // i_o j_o k_o k_i i_i j_i: 4 x 16.
  s.reorder({k[1], i[1]});
  EXPECT_EQ(largest_register_tile(s.func()).elements, 64);
  EXPECT_EQ(largest_register_tile(s.func()).innermost, 16);
}

TEST(CandidateLimits, ACpuRegisterTileMayFillTheVectorRegisters) {
  // AVX2: 16 registers of 8 floats; AVX-512: 32 of 16.
  EXPECT_EQ(candidate_limits(Target::parse("llvm -mcpu=haswell")).max_register_tile, 128);
  EXPECT_EQ(candidate_limits(Target::parse("llvm -mcpu=skylake-avx512")).max_register_tile, 512);
  CandidateLimits gpu = candidate_limits(Target::parse("opencl"));
  EXPECT_EQ(gpu.max_register_tile, 0);
  EXPECT_TRUE(gpu.gpu.has_value());

  Schedule s(testing::matmul(64, 64, 32));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  s.reorder({loops[2], loops[0], loops[1]});  // k outermost: the whole 64 x 64 output is the tile
  CandidateLimits cpu = candidate_limits(Target::parse("llvm -mcpu=haswell"));
  EXPECT_FALSE(fits_registers(s.func(), cpu));
  EXPECT_TRUE(fits_registers(testing::matmul(64, 64, 32), cpu));
}

TEST(CandidateLimits, ATileFillsTheRegistersWithFourVectorsOrMore) {
  CandidateLimits cpu = candidate_limits(Target::parse("llvm -mcpu=haswell"));
  auto tiled = [](int64_t rows, int64_t columns) {
    Schedule s(testing::matmul(64, 64, 32));
    std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
    std::vector<LoopRV> i = s.split(loops[0], {std::nullopt, rows});
    std::vector<LoopRV> j = s.split(loops[1], {std::nullopt, columns});
    s.reorder({i[0], j[0], loops[2], i[1], j[1]});
    return s.func();
  };
  EXPECT_TRUE(fills_registers(tiled(4, 8), cpu));    // 4 vectors
  EXPECT_TRUE(fills_registers(tiled(8, 16), cpu));   // 16 vectors
  EXPECT_FALSE(fills_registers(tiled(2, 8), cpu));   // 2 vectors: the FMA units wait
  EXPECT_FALSE(fills_registers(tiled(8, 4), cpu));   // half vectors
  EXPECT_TRUE(fills_registers(tiled(2, 8), candidate_limits(Target::parse("opencl"))));
}

TEST(CandidateLimits, ACopyPerParallelIterationIsBoundedByHalfTheL2) {
  // B's panel of 32 columns copied under the parallel loop over the panels: 64 x 32
  // floats, 8 KiB per thread; the same copy at the root is not per thread.
  auto packed = [](bool per_panel) {
    Schedule s(testing::matmul(64, 64, 64));
    BlockRV c = s.get_block("C");
    BlockRV copy = s.cache_read(c, 2, "global");
    std::vector<LoopRV> loops = s.get_loops(c);
    std::vector<LoopRV> j = s.split(loops[1], {2, 32});
    s.reorder({j[0], loops[0], loops[2], j[1]});
    s.parallel(j[0]);
    if (per_panel) s.compute_at(copy, j[0]);
    return lower(s.func());
  };
  EXPECT_EQ(largest_per_thread_copy(packed(true)), 64 * 32 * 4);
  EXPECT_EQ(largest_per_thread_copy(packed(false)), 0);
  CandidateLimits cpu = candidate_limits(Target::parse("llvm -mcpu=haswell"));
  cpu.max_copy_bytes = 8192;
  EXPECT_TRUE(fits_device(packed(true), cpu));
  cpu.max_copy_bytes = 8191;
  EXPECT_FALSE(fits_device(packed(true), cpu));
  cpu.max_copy_bytes = 0;  // the L2 unknown: no bound
  EXPECT_TRUE(fits_device(packed(true), cpu));
}

}  // namespace
}  // namespace temper::search
