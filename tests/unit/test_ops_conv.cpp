// conv2d and depthwise_conv2d: the IR their definitions produce, and their reference
// implementations against hand-computed values and against each other.
#include <gtest/gtest.h>

#include <random>

#include "compiler/ir/printer.h"
#include "compiler/ops/conv.h"
#include "compiler/ops/reference.h"
#include "compiler/ops/transform.h"
#include "compiler/ops/workload.h"

namespace temper::ops {
namespace {

std::string ir_of(const std::string& workload) {
  return to_string(instantiate(Workload::parse(workload)).func);
}

std::vector<float> random_vector(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(Conv2dDefinition, PrintsAPadStageAndAReduction) {
  EXPECT_EQ(ir_of("conv2d:N=1,C=2,H=4,W=4,K=2,R=3,S=3,pad=1"),
            R"(func conv2d(input: float32[1, 2, 4, 4], weight: float32[2, 2, 3, 3], conv2d: float32[1, 2, 4, 4]) {
  allocate conv2d_pad: float32[1, 2, 6, 6]
  for (i, 0, 1) {
    for (j, 0, 2) {
      for (k, 0, 6) {
        for (l, 0, 6) {
          block conv2d_pad(vi in [0] = i, vj in [0:2] = j, vk in [0:6] = k, vl in [0:6] = l) {
            reads input[vi, vj, min(max(vk - 1, 0), 3), min(max(vl - 1, 0), 3)]
            writes conv2d_pad[vi, vj, vk, vl]
            conv2d_pad[vi, vj, vk, vl] = select(vk >= 1 && vk < 5 && vl >= 1 && vl < 5, input[vi, vj, min(max(vk - 1, 0), 3), min(max(vl - 1, 0), 3)], 0.0f)
          }
        }
      }
    }
  }
  for (i_1, 0, 1) {
    for (j_1, 0, 2) {
      for (k_1, 0, 4) {
        for (l_1, 0, 4) {
          for (rc, 0, 2) {
            for (ry, 0, 3) {
              for (rx, 0, 3) {
                block conv2d(vi_1 in [0] = i_1, vj_1 in [0:2] = j_1, vk_1 in [0:4] = k_1, vl_1 in [0:4] = l_1, vrc in reduce[0:2] = rc, vry in reduce[0:3] = ry, vrx in reduce[0:3] = rx) {
                  reads conv2d[vi_1, vj_1, vk_1, vl_1], conv2d_pad[vi_1, vrc, vk_1 + vry, vl_1 + vrx], weight[vj_1, vrc, vry, vrx]
                  writes conv2d[vi_1, vj_1, vk_1, vl_1]
                  init {
                    conv2d[vi_1, vj_1, vk_1, vl_1] = 0.0f
                  }
                  conv2d[vi_1, vj_1, vk_1, vl_1] = conv2d[vi_1, vj_1, vk_1, vl_1] + conv2d_pad[vi_1, vrc, vk_1 + vry, vl_1 + vrx] * weight[vj_1, vrc, vry, vrx]
                }
              }
            }
          }
        }
      }
    }
  }
}
)");
}

TEST(Conv2dDefinition, NoPaddingNoPadStage) {
  std::string ir = ir_of("conv2d:N=1,C=2,H=4,W=4,K=2,R=3,S=3");
  EXPECT_EQ(ir.find("conv2d_pad"), std::string::npos) << ir;
  EXPECT_NE(ir.find("conv2d[vi, vj, vk, vl] + input[vi, vrc, vk + vry, vl + vrx] * weight[vj, vrc, vry, vrx]"),
            std::string::npos)
      << ir;
}

TEST(Conv2dDefinition, StrideDilationAndGroupsShapeTheInputIndex) {
  std::string ir = ir_of("conv2d:N=1,C=4,H=9,W=9,K=4,R=3,S=3,stride=2,dilation=2,groups=2");
  EXPECT_NE(
      ir.find("func conv2d(input: float32[1, 4, 9, 9], weight: float32[4, 2, 3, 3], conv2d: float32[1, 4, 3, 3])"),
      std::string::npos)
      << ir;
  // Output channel vj belongs to group vj // 2, whose input channels start at 2 * group.
  EXPECT_NE(ir.find("input[vi, vj // 2 * 2 + vrc, vk * 2 + vry * 2, vl * 2 + vrx * 2] * weight[vj, vrc, vry, vrx]"),
            std::string::npos)
      << ir;
}

TEST(Conv2dDefinition, NhwcUsesRsckWeights) {
  std::string ir = ir_of("conv2d:N=1,C=3,H=5,W=5,K=4,R=3,S=3,pad=1x0,layout=NHWC");
  EXPECT_NE(
      ir.find("func conv2d(input: float32[1, 5, 5, 3], weight: float32[3, 3, 3, 4], conv2d: float32[1, 5, 3, 4])"),
      std::string::npos)
      << ir;
  EXPECT_NE(ir.find("allocate conv2d_pad: float32[1, 7, 5, 3]"), std::string::npos) << ir;
  EXPECT_NE(ir.find("conv2d_pad[vi_1, vj_1 + vry, vk_1 + vrx, vrc] * weight[vry, vrx, vrc, vl_1]"), std::string::npos)
      << ir;
}

TEST(Conv2dDefinition, DepthwiseReadsOneInputChannelPerOutput) {
  std::string ir = ir_of("depthwise_conv2d:N=1,C=2,H=4,W=4,R=3,S=3,multiplier=2");
  EXPECT_NE(ir.find("input: float32[1, 2, 4, 4], weight: float32[4, 1, 3, 3], depthwise_conv2d: float32[1, 4, 2, 2]"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("vry in reduce[0:3] = ry, vrx in reduce[0:3] = rx)"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("vrc"), std::string::npos) << ir;
  EXPECT_NE(ir.find("input[vi, vj // 2, vk + vry, vl + vrx] * weight[vj, 0, vry, vrx]"), std::string::npos) << ir;
}

TEST(Conv2dDefinition, OutputShapeFollowsTheWindow) {
  Window2d window;
  window.stride = {2, 1};
  window.padding = {1, 0, 2, 0};
  window.dilation = {1, 2};
  // Height: (7 + 1 + 2 - 3) / 2 + 1 = 4; width: (6 - (2 * (3 - 1) + 1)) / 1 + 1 = 2.
  EXPECT_EQ(conv2d_output_shape({1, 3, 7, 6}, {8, 3, 3, 3}, window, Layout::NCHW, "conv2d"), (Shape{1, 8, 4, 2}));
  EXPECT_EQ(conv2d_output_shape({1, 7, 6, 3}, {3, 3, 3, 8}, window, Layout::NHWC, "conv2d"), (Shape{1, 4, 2, 8}));
}

TEST(Conv2dReference, HandComputedDiagonalKernel) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 0, 0, 1}, y(4);
  reference::conv2d(x.data(), w.data(), y.data(), {1, 1, 3, 3}, {1, 1, 2, 2}, Window2d{}, 1, Layout::NCHW);
  EXPECT_EQ(y, (std::vector<float>{6, 8, 12, 14}));
}

TEST(Conv2dReference, PaddingContributesZeros) {
  std::vector<float> x(9, 1.0f), w(9, 1.0f), y(9);
  Window2d window;
  window.padding = Padding2d::uniform(1);
  reference::conv2d(x.data(), w.data(), y.data(), {1, 1, 3, 3}, {1, 1, 3, 3}, window, 1, Layout::NCHW);
  EXPECT_EQ(y, (std::vector<float>{4, 6, 4, 6, 9, 6, 4, 6, 4}));
}

TEST(Conv2dReference, DilationSpreadsTheKernel) {
  std::vector<int32_t> x(25), w = {1, 1, 1, 1}, y(9);
  for (int i = 0; i < 25; ++i) x[i] = i;
  Window2d window;
  window.dilation = {2, 2};
  reference::conv2d(x.data(), w.data(), y.data(), {1, 1, 5, 5}, {1, 1, 2, 2}, window, 1, Layout::NCHW);
  EXPECT_EQ(y[0], 0 + 2 + 10 + 12);
  EXPECT_EQ(y[1 * 3 + 2], 7 + 9 + 17 + 19);
  window.stride = {2, 2};
  reference::conv2d(x.data(), w.data(), y.data(), {1, 1, 5, 5}, {1, 1, 2, 2}, window, 1, Layout::NCHW);
  EXPECT_EQ(y[3], 12 + 14 + 22 + 24);  // output (1, 1) of a 2x2 result: rows 2, 4 and columns 2, 4
}

TEST(Conv2dReference, GroupsKeepChannelsApart) {
  // Channel 0 is all 1, channel 1 all 2; 1x1 kernels 3 and 5, one per group.
  std::vector<float> x = {1, 1, 1, 1, 2, 2, 2, 2}, w = {3, 5}, y(8);
  reference::conv2d(x.data(), w.data(), y.data(), {1, 2, 2, 2}, {2, 1, 1, 1}, Window2d{}, 2, Layout::NCHW);
  EXPECT_EQ(y, (std::vector<float>{3, 3, 3, 3, 10, 10, 10, 10}));
}

TEST(Conv2dReference, NhwcIsNchwTransposed) {
  const Shape x_nchw = {2, 3, 6, 5}, w_kcrs = {4, 3, 3, 2};
  Window2d window;
  window.stride = {2, 1};
  window.padding = {1, 0, 0, 1};
  std::vector<float> x = random_vector(num_elements(x_nchw), 1), w = random_vector(num_elements(w_kcrs), 2);
  Shape y_nchw = conv2d_output_shape(x_nchw, w_kcrs, window, Layout::NCHW, "conv2d");
  std::vector<float> y(num_elements(y_nchw));
  reference::conv2d(x.data(), w.data(), y.data(), x_nchw, w_kcrs, window, 1, Layout::NCHW);

  std::vector<float> x_t(x.size()), w_t(w.size()), y_t(y.size()), y_back(y.size());
  reference::transpose(x.data(), x_t.data(), x_nchw, {0, 2, 3, 1});
  reference::transpose(w.data(), w_t.data(), w_kcrs, {2, 3, 1, 0});
  Shape x_nhwc = {2, 6, 5, 3}, w_rsck = {3, 2, 3, 4};
  reference::conv2d(x_t.data(), w_t.data(), y_t.data(), x_nhwc, w_rsck, window, 1, Layout::NHWC);
  reference::transpose(y_t.data(), y_back.data(), {y_nchw[0], y_nchw[2], y_nchw[3], y_nchw[1]}, {0, 3, 1, 2});
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y_back[i], y[i], 1e-5) << i;
}

TEST(Conv2dReference, DepthwiseWithMultiplier) {
  // One input channel [1 2; 3 4], multiplier 2: a 1x1 kernel 2 and a 2x2 kernel of ones.
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> w1 = {2, 3};  // [K=2, 1, 1, 1]
  std::vector<float> y1(8);
  reference::depthwise_conv2d(x.data(), w1.data(), y1.data(), {1, 1, 2, 2}, {2, 1, 1, 1}, Window2d{}, Layout::NCHW);
  EXPECT_EQ(y1, (std::vector<float>{2, 4, 6, 8, 3, 6, 9, 12}));
  std::vector<float> w2 = {1, 1, 1, 1, 1, 0, 0, 1}, y2(2);
  reference::depthwise_conv2d(x.data(), w2.data(), y2.data(), {1, 1, 2, 2}, {2, 1, 2, 2}, Window2d{}, Layout::NCHW);
  EXPECT_EQ(y2, (std::vector<float>{10, 5}));
}

}  // namespace
}  // namespace temper::ops
