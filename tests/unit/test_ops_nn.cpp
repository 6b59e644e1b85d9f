// softmax, layer_norm and batch_norm: the stages their definitions produce, and their
// reference implementations against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/ir/printer.h"
#include "compiler/ops/nn.h"
#include "compiler/ops/reference.h"
#include "compiler/ops/workload.h"

namespace temper::ops {
namespace {

std::string ir_of(const std::string& workload) {
  return to_string(instantiate(Workload::parse(workload)).func);
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(SoftmaxDefinition, FourStagesMaxExpSumThenTimesTheSumsReciprocal) {
  std::string ir = ir_of("softmax:shape=2x5,axis=1");
  EXPECT_CONTAINS(ir,
                  "allocate softmax_max: float32[2, 1]\n  allocate softmax_exp: float32[2, 5]\n"
                  "  allocate softmax_sum: float32[2, 1]\n");
  EXPECT_CONTAINS(ir, "softmax_max[vi, vj] = max(softmax_max[vi, vj], X[vi, vrk])");
  EXPECT_CONTAINS(ir, "softmax_exp[vi_1, vj_1] = exp(X[vi_1, vj_1] - softmax_max[vi_1, 0])");
  EXPECT_CONTAINS(ir, "softmax_sum[vi_2, vj_2] = softmax_sum[vi_2, vj_2] + softmax_exp[vi_2, vrk_1]");
  EXPECT_CONTAINS(ir, "softmax[vi_3, vj_3] = softmax_exp[vi_3, vj_3] * (1.0f / softmax_sum[vi_3, 0])");
  // Stages in that order.
  EXPECT_LT(ir.find("block softmax_max"), ir.find("block softmax_exp"));
  EXPECT_LT(ir.find("block softmax_exp"), ir.find("block softmax_sum"));
  EXPECT_LT(ir.find("block softmax_sum"), ir.find("block softmax("));
}

TEST(LayerNormDefinition, MeanThenVarianceThenNormalise) {
  std::string ir = ir_of("layer_norm:shape=2x3x4,axis=1");
  EXPECT_CONTAINS(ir, "gamma: float32[3, 4], beta: float32[3, 4]");
  EXPECT_CONTAINS(ir, "allocate layer_norm_mean: float32[2, 1, 1]");
  EXPECT_CONTAINS(ir, "vr0 in reduce[0:3] = r0, vr1 in reduce[0:4] = r1");
  EXPECT_CONTAINS(ir, "layer_norm_mean[vi, vj, vk] + X[vi, vr0, vr1] * 0.0833333333f");
  EXPECT_CONTAINS(ir,
                  "(X[vi_1, vr0_1, vr1_1] - layer_norm_mean[vi_1, 0, 0]) * (X[vi_1, vr0_1, vr1_1] - "
                  "layer_norm_mean[vi_1, 0, 0]) * 0.0833333333f");
  EXPECT_CONTAINS(ir,
                  "layer_norm[vi_2, vj_2, vk_2] = (X[vi_2, vj_2, vk_2] - layer_norm_mean[vi_2, 0, 0]) * "
                  "rsqrt(layer_norm_var[vi_2, 0, 0] + 1e-05f) * gamma[vj_2, vk_2] + beta[vj_2, vk_2]");
}

TEST(BatchNormDefinition, OneStagePerChannel) {
  std::string ir = ir_of("batch_norm:shape=2x3");
  EXPECT_CONTAINS(ir, "batch_norm[vi, vj] = (X[vi, vj] - mean[vj]) * rsqrt(var[vj] + 1e-05f) * gamma[vj] + beta[vj]");
  EXPECT_EQ(ir.find("allocate"), std::string::npos) << ir;
}

TEST(NnReference, SoftmaxHandComputed) {
  std::vector<float> x = {0, std::log(3.0f), 1000, 1000}, y(4);
  reference::softmax(x.data(), y.data(), {2, 2}, 1);
  EXPECT_FLOAT_EQ(y[0], 0.25f);
  EXPECT_FLOAT_EQ(y[1], 0.75f);
  // Stable: a naive exp(1000) would overflow.
  EXPECT_FLOAT_EQ(y[2], 0.5f);
  EXPECT_FLOAT_EQ(y[3], 0.5f);
  // Along axis 0 the columns are normalised instead.
  reference::softmax(x.data(), y.data(), {2, 2}, 0);
  EXPECT_FLOAT_EQ(y[0], 0.0f);
  EXPECT_FLOAT_EQ(y[2], 1.0f);
}

TEST(NnReference, LayerNormHandComputed) {
  // Rows [1 2 3 4] and [2 2 2 2]: mean 2.5 and variance 1.25; mean 2 and variance 0.
  std::vector<float> x = {1, 2, 3, 4, 2, 2, 2, 2}, gamma = {1, 1, 2, 2}, beta = {0, 0, 0, 1}, y(8);
  reference::layer_norm(x.data(), gamma.data(), beta.data(), y.data(), {2, 4}, 1, 0.0);
  float s = 1.0f / std::sqrt(1.25f);
  EXPECT_FLOAT_EQ(y[0], -1.5f * s);
  EXPECT_FLOAT_EQ(y[1], -0.5f * s);
  EXPECT_FLOAT_EQ(y[2], 2 * 0.5f * s);
  EXPECT_FLOAT_EQ(y[3], 2 * 1.5f * s + 1);
  reference::layer_norm(x.data(), gamma.data(), beta.data(), y.data(), {2, 4}, 1, 1.0);
  EXPECT_FLOAT_EQ(y[7], 1.0f);  // (2 - 2) / sqrt(0 + eps) * 2 + 1
}

TEST(NnReference, BatchNormHandComputed) {
  // Two channels along axis 1 of [1, 2, 2].
  std::vector<float> x = {3, 5, 0, 4}, mean = {1, 2}, var = {4, 16}, gamma = {1, 3}, beta = {0, -1}, y(4);
  reference::batch_norm(x.data(), mean.data(), var.data(), gamma.data(), beta.data(), y.data(), {1, 2, 2}, 1, 0.0);
  EXPECT_EQ(y, (std::vector<float>{1, 2, -2.5f, 0.5f}));
}

}  // namespace
}  // namespace temper::ops
