// Sketch rules on small compute definitions: the sketches each workload gets, a sketch
// instantiated with given decisions printed whole, and a rule added by the user.
#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "schedule_space/auto_space.h"

namespace temper::schedule_space {
namespace {

// Two cores, so that the parallel draws do not depend on the machine.
Target two_cores() {
  return Target::parse("llvm -mcpu=native -num-cores=2");
}

std::vector<std::string> descriptions(const std::string& workload) {
  AutoSpace space(ops::Workload::parse(workload), two_cores());
  std::vector<std::string> out;
  for (const Sketch& s : space.sketches()) out.push_back(s.description);
  return out;
}

using Strings = std::vector<std::string>;

TEST(SketchGeneration, AMatmulIsTiledWithOrWithoutPackingAndACacheWriteFusedAtTwoLevels) {
  // B is packed per panel or not; the product is accumulated
  // in a local tile copied out after S0 or S1, or in place.
  EXPECT_EQ(descriptions("matmul:M=64,N=64,K=64"),
            (Strings{"cache-read B_global per panel, cache-write matmul, tile matmul SSRSRS, fuse matmul_local after S0",
                     "cache-read B_global per panel, cache-write matmul, tile matmul SSRSRS, fuse matmul_local after S1",
                     "cache-read B_global per panel, tile matmul SSRSRS",
                     "cache-write matmul, tile matmul SSRSRS, fuse matmul_local after S0",
                     "cache-write matmul, tile matmul SSRSRS, fuse matmul_local after S1", "tile matmul SSRSRS"}));
}

TEST(SketchGeneration, AnElementwiseConsumerIsFusedInsteadOfACacheWrite) {
  // dense's bias and relu are one block reading the product at its own indices. Its
  // weight W[j, k], read along j a row apart, is copied as [k, j] or not.
  EXPECT_EQ(descriptions("dense:M=16,N=32,K=24,bias=1,act=relu"),
            (Strings{"cache-read W_global per panel, tile dense_matmul SSRSRS, fuse dense after S0",
                     "cache-read W_global per panel, tile dense_matmul SSRSRS, fuse dense after S1",
                     "tile dense_matmul SSRSRS, fuse dense after S0", "tile dense_matmul SSRSRS, fuse dense after S1"}));
}

TEST(SketchGeneration, AConvolutionsPaddingIsLeftToAnnotation) {
  // The padding stage has a select: not strictly inlinable, so no rule takes it.
  // The padded input, read along the innermost spatial axis and reused across the output
  // channels, is the packable read.
  // Vectorized along the output channels (j), the weight copied with them last; or
  // along the output columns (l), the padded input copied.
  EXPECT_EQ(descriptions("conv2d:N=1,C=4,H=10,W=10,K=8,R=3,S=3,pad=1"),
            (Strings{"vectorize conv2d along j, cache-read weight_global per panel, cache-write conv2d, tile conv2d SSRSRS, "
                     "fuse conv2d_local after S0",
                     "vectorize conv2d along j, cache-read weight_global per panel, cache-write conv2d, tile conv2d SSRSRS, "
                     "fuse conv2d_local after S1",
                     "vectorize conv2d along j, cache-read weight_global per panel, tile conv2d SSRSRS",
                     "vectorize conv2d along j, cache-write conv2d, tile conv2d SSRSRS, fuse conv2d_local after S0",
                     "vectorize conv2d along j, cache-write conv2d, tile conv2d SSRSRS, fuse conv2d_local after S1",
                     "vectorize conv2d along j, tile conv2d SSRSRS",
                     "cache-read conv2d_pad_global per panel, cache-write conv2d, tile conv2d SSRSRS, fuse conv2d_local after S0",
                     "cache-read conv2d_pad_global per panel, cache-write conv2d, tile conv2d SSRSRS, fuse conv2d_local after S1",
                     "cache-read conv2d_pad_global per panel, tile conv2d SSRSRS",
                     "cache-write conv2d, tile conv2d SSRSRS, fuse conv2d_local after S0",
                     "cache-write conv2d, tile conv2d SSRSRS, fuse conv2d_local after S1", "tile conv2d SSRSRS"}));
}

TEST(SketchGeneration, APackedReadIsCopiedPerPanelOutsideTheRowTiles) {
  // B's panel (all of k, a tile of j) is copied under the outermost tile of j, which
  // goes first, and the row tiles run inside it: one copy per panel, whatever the draws.
  AutoSpace space(ops::Workload::parse("matmul:M=64,N=64,K=64"), two_cores());
  ASSERT_EQ(space.sketches()[2].description, "cache-read B_global per panel, tile matmul SSRSRS");
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    std::string program = to_string(space.instantiate(2, {}, seed).schedule.func());
    size_t panel = program.find("j_0");
    size_t copy = program.find("block B_global(");
    size_t rows = program.find("for (i_0");
    size_t product = program.find("block matmul(");
    ASSERT_NE(panel, std::string::npos) << program;
    EXPECT_LT(panel, copy) << program;
    EXPECT_LT(copy, rows) << program;
    EXPECT_LT(rows, product) << program;
  }
}

TEST(SketchGeneration, APackedReadIsLaidOutWithTheVectorAxisLast) {
  // Attention's Q K^T: K[b, j, k] is read along j, the innermost spatial axis, a row
  // apart; its copy is K[b, k, j].
  AutoSpace space(ops::Workload::parse("batch_matmul:B=2,M=16,N=16,K=8,transpose_b=1"), two_cores());
  ASSERT_EQ(space.sketches()[2].description, "cache-read B_global per panel, tile batch_matmul SSRSRS");
  AutoCandidate c = space.instantiate(2, {}, 3);
  std::string program = to_string(c.schedule.func());
  EXPECT_NE(program.find("allocate B_global: float32[2, 8, 16]"), std::string::npos) << program;
  // The copy reads along k and writes along j: a transpose, not vectorized (gathers or
  // scatters).
  size_t copy = program.find("block B_global(");
  ASSERT_NE(copy, std::string::npos);
  size_t copy_nest = program.rfind("for (ax0", copy);
  EXPECT_EQ(program.substr(copy_nest, copy - copy_nest).find("vectorized"), std::string::npos) << program;
  // conv2d along its output channels: weight[k, c, r, s] copied as [c, r, s, k], the
  // local tile as [n, p, q, k].
  AutoSpace conv(ops::Workload::parse("conv2d:N=1,C=4,H=10,W=10,K=8,R=3,S=3,pad=1"), two_cores());
  std::string conv_program = to_string(conv.instantiate(0, {}, 3).schedule.func());
  EXPECT_NE(conv_program.find("weight_global[v1, v2, v3, v0] = weight[v0, v1, v2, v3]"), std::string::npos)
      << conv_program;
  EXPECT_NE(conv_program.find("conv2d[v0_1, v1_1, v2_1, v3_1] = conv2d_local[v0_1, v2_1, v3_1, v1_1]"),
            std::string::npos)
      << conv_program;
}

TEST(SketchGeneration, ReductionsWithLittleParallelismForkOnRfactor) {
  // 4 rows of 128: each of the two reductions with or without rfactor over either part.
  Strings few_rows = descriptions("softmax:shape=4x128,axis=1");
  EXPECT_EQ(few_rows.size(), 9u);
  EXPECT_EQ(few_rows.front(), "rfactor softmax_sum over the inner part, rfactor softmax_max over the inner part");
  EXPECT_EQ(few_rows.back(), "no rule applied");
  // 256 rows of 32: enough rows to run in parallel, no rfactor.
  EXPECT_EQ(descriptions("softmax:shape=256x32,axis=1"), (Strings{"no rule applied"}));
}

TEST(SketchGeneration, ElementwiseOpsGetOneSketchWithoutRules) {
  EXPECT_EQ(descriptions("relu:shape=4x8"), (Strings{"no rule applied"}));
}

TEST(SketchGeneration, InstantiatingWithDecisionsGivesThatProgram) {
  AutoSpace space(ops::Workload::parse("dense:M=8,N=16,K=4,bias=1,act=relu"), two_cores());
  ASSERT_EQ(space.sketches()[3].description, "tile dense_matmul SSRSRS, fuse dense after S1");
  // Tiles of i, j and k; then the parallel draw (fuse 3 loops) and the unroll draw (16).
  Decisions d = {std::vector<int64_t>{1, 2, 2, 2}, std::vector<int64_t>{1, 2, 4, 2}, std::vector<int64_t>{2, 2},
                 std::vector<int64_t>{0}, std::vector<int64_t>{1}};
  AutoCandidate c = space.instantiate(3, d, 0);
  EXPECT_EQ(c.decisions(), d);
  EXPECT_EQ(c.kinds, (std::vector<DecisionKind>{DecisionKind::TileSize, DecisionKind::TileSize,
                                                DecisionKind::TileSize, DecisionKind::Parallel, DecisionKind::Unroll}));
  // The reduction's init is taken out of its reduction loops (decompose_reduction). W is
  // read along j a row apart: that loop is not vectorized (gathers); the copy out is.
  EXPECT_EQ(to_string(c.schedule.func()), R"(func dense(X: float32[8, 4], W: float32[16, 4], bias: float32[16], dense: float32[8, 16]) {
  allocate dense_matmul: float32[8, 16]
  parallel for (i_0_j_0_i_1_fused, 0, 2) [pragma_auto_unroll_max_step=16] {
    for (j_1, 0, 2) {
      for (i_2_init, 0, 2) {
        for (j_2_init, 0, 4) {
          for (i_3_init, 0, 2) {
            for (j_3_init, 0, 2) {
              block dense_matmul_init(vi in [0:8] = i_0_j_0_i_1_fused * 4 + i_2_init * 2 + i_3_init, vj in [0:16] = j_1 * 8 + j_2_init * 2 + j_3_init) {
                writes dense_matmul[vi, vj]
                dense_matmul[vi, vj] = 0.0f
              }
            }
          }
        }
      }
      for (rk_o, 0, 2) {
        for (i_2, 0, 2) {
          for (j_2, 0, 4) {
            for (rk_i, 0, 2) {
              for (i_3, 0, 2) {
                for (j_3, 0, 2) {
                  block dense_matmul(vi_1 in [0:8] = i_0_j_0_i_1_fused * 4 + i_2 * 2 + i_3, vj_1 in [0:16] = j_1 * 8 + j_2 * 2 + j_3, vrk in reduce[0:4] = rk_o * 2 + rk_i) {
                    reads dense_matmul[vi_1, vj_1], X[vi_1, vrk], W[vj_1, vrk]
                    writes dense_matmul[vi_1, vj_1]
                    dense_matmul[vi_1, vj_1] = dense_matmul[vi_1, vj_1] + X[vi_1, vrk] * W[vj_1, vrk]
                  }
                }
              }
            }
          }
        }
      }
      for (ax0, 0, 4) {
        vectorized for (ax1, 0, 8) {
          block dense(vi_2 in [0:8] = i_0_j_0_i_1_fused * 4 + ax0, vj_2 in [0:16] = j_1 * 8 + ax1) {
            reads dense_matmul[vi_2, vj_2], bias[vj_2]
            writes dense[vi_2, vj_2]
            dense[vi_2, vj_2] = max(dense_matmul[vi_2, vj_2] + bias[vj_2], 0.0f)
          }
        }
      }
    }
  }
}
)");
  // The trace alone rebuilds it, and from_trace finds its sketch and decisions.
  EXPECT_EQ(to_string(c.schedule.trace().replay(space.op().func).func()), to_string(c.schedule.func()));
  std::optional<AutoCandidate> back = space.from_trace(c.schedule.trace());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->sketch, 3);
  EXPECT_EQ(back->decisions(), d);
}

TEST(SketchGeneration, DecisionsThatDoNotFitAreDrawnAnew) {
  AutoSpace space(ops::Workload::parse("matmul:M=8,N=8,K=8"), two_cores());
  // 3 x 3 is not a tiling of 8; the draw replaces it with one that is.
  Decisions d = {std::vector<int64_t>{1, 1, 3, 3}};
  AutoCandidate c = space.instantiate(2, d, 7);
  std::vector<int64_t> tile = *c.decisions()[0];
  EXPECT_EQ(tile[0] * tile[1] * tile[2] * tile[3], 8);
}

// A user's rule: inline every elementwise stage that does not write a parameter, even one
// with a select (the padding of a convolution), before the built-in rules see it.
class InlineSelects : public SketchRule {
 public:
  std::string name() const override { return "inline-selects"; }
  Condition condition(const SketchState&, const StageFacts& stage, const SketchContext&) const override {
    return !stage.is_reduction && !stage.writes_param && !stage.consumers.empty() ? Condition::ApplyAndStop
                                                                                  : Condition::Skip;
  }
  std::vector<SketchState> apply(const SketchState& state, const StageFacts& stage,
                                 const SketchContext&) const override {
    SketchState next = state;
    next.advance(stage.name);
    next.schedule.compute_inline(next.schedule.get_block(stage.name));
    next.steps.push_back("inline-selects " + stage.name);
    return {next};
  }
};

TEST(SketchGeneration, AUserRuleComesFirstWhereItIsPut) {
  SketchRules rules = default_sketch_rules(two_cores());
  rules.insert(rules.begin(), std::make_shared<InlineSelects>());
  AutoSpace space(ops::Workload::parse("conv2d:N=1,C=4,H=10,W=10,K=8,R=3,S=3,pad=1"), two_cores(), rules);
  ASSERT_EQ(space.sketches().size(), 12u);
  EXPECT_EQ(space.sketches()[11].description, "tile conv2d SSRSRS, inline-selects conv2d_pad");
  std::mt19937_64 rng(1);
  AutoCandidate c = space.sample(1, rng, [](const AutoCandidate&) { return true; })[0];
  EXPECT_EQ(to_string(c.schedule.func()).find("conv2d_pad"), std::string::npos);
}

TEST(SketchGeneration, OnGpuReductionsAreTiledWithSharedReadsOrSpreadOverThreads) {
  auto gpu = [](const std::string& workload) {
    AutoSpace space(ops::Workload::parse(workload), Target::parse("cuda -arch=sm_80"));
    std::vector<std::string> out;
    for (const Sketch& s : space.sketches()) out.push_back(s.description);
    return out;
  };
  EXPECT_EQ(gpu("matmul:M=64,N=64,K=64"),
            (Strings{"tile matmul SSSRRSRS with 2 shared-memory reads, the output through registers"}));
  EXPECT_EQ(gpu("dense:M=16,N=32,K=24,bias=1,act=relu"),
            (Strings{"tile dense_matmul SSSRRSRS with 2 shared-memory reads, the output through registers into dense"}));
  // Rows longer than a warp are shared among threads, or not (then annotation binds the rows).
  EXPECT_EQ(gpu("softmax:shape=4x128,axis=1"),
            (Strings{"reduce softmax_sum across threads, reduce softmax_max across threads",
                     "reduce softmax_sum across threads", "reduce softmax_max across threads", "no rule applied"}));
  EXPECT_EQ(gpu("softmax:shape=4x32,axis=1"), (Strings{"no rule applied"}));
}

TEST(SketchGeneration, OnGpuARowSharedAmongThreadsBindsItsReductionLoopToThreadIdx) {
  AutoSpace space(ops::Workload::parse("softmax:shape=4x96,axis=1"), Target::parse("cuda -arch=sm_80"));
  ASSERT_EQ(space.sketches()[2].description, "reduce softmax_max across threads");
  // The thread counts dividing 96 from 32: 32, 48, 96; the draw takes 48.
  AutoCandidate c = space.instantiate(2, {std::vector<int64_t>{1}}, 0);
  std::string ir = to_string(c.schedule.func());
  EXPECT_NE(ir.find("thread_binding for (i_j_fused, 0, 4) bind(\"blockIdx.x\")"), std::string::npos) << ir;
  EXPECT_NE(ir.find("    for (rk_o, 0, 2) {\n"
                    "      thread_binding for (rk_i, 0, 48) bind(\"threadIdx.x\") {\n"
                    "        block softmax_max"),
            std::string::npos)
      << ir;
}

TEST(SketchGeneration, OnGpuTheTileIsBoundToBlocksVirtualThreadsAndThreads) {
  AutoSpace space(ops::Workload::parse("matmul:M=64,N=64,K=64"), Target::parse("cuda -arch=sm_80"));
  // i and j in 5 ([block, vthread, thread, 3, 4]), k in 3; then the unroll draw.
  Decisions d = {std::vector<int64_t>{4, 1, 4, 2, 2}, std::vector<int64_t>{2, 2, 8, 1, 2},
                 std::vector<int64_t>{4, 2, 8}, std::vector<int64_t>{0}};
  AutoCandidate c = space.instantiate(0, d, 0);
  EXPECT_EQ(c.decisions(), d);
  std::string ir = to_string(c.schedule.func());
  EXPECT_NE(ir.find("thread_binding for (i_0_j_0_fused, 0, 8) bind(\"blockIdx.x\")"), std::string::npos) << ir;
  EXPECT_NE(ir.find("thread_binding for (i_1_j_1_fused, 0, 2) bind(\"vthread\")"), std::string::npos) << ir;
  EXPECT_NE(ir.find("thread_binding for (i_2_j_2_fused, 0, 32) bind(\"threadIdx.x\")"), std::string::npos) << ir;
  // Under the outer reduction loop, each shared copy (8 x 32 elements of A, of B) is fetched
  // by the block's 32 threads together.
  EXPECT_NE(ir.find("for (rk_0, 0, 4) {\n          for (ax0_ax1_fused_o, 0, 8) {\n            thread_binding for "
                    "(ax0_ax1_fused_i, 0, 32) bind(\"threadIdx.x\")"),
            std::string::npos)
      << ir;
}

}  // namespace
}  // namespace temper::schedule_space
