// max_pool2d, avg_pool2d and global_avg_pool2d: the stages their definitions produce,
// and their reference implementations against hand-computed values.
#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/ops/pool.h"
#include "compiler/ops/reference.h"
#include "compiler/ops/workload.h"

namespace temper::ops {
namespace {

std::string ir_of(const std::string& workload) {
  return to_string(instantiate(Workload::parse(workload)).func);
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(PoolDefinition, MaxPoolPadsWithMinusInfinity) {
  std::string ir = ir_of("max_pool2d:N=1,C=2,H=4,W=4,kernel=2,stride=2,pad=0x0x1x1");
  EXPECT_CONTAINS(ir, "allocate max_pool2d_pad: float32[1, 2, 5, 5]");
  // Only the bottom and right are padded, so only those sides are checked and clamped.
  EXPECT_CONTAINS(ir, "select(vk < 4 && vl < 4, X[vi, vj, min(vk, 3), min(vl, 3)], float32(-inf))");
  EXPECT_CONTAINS(ir, "vry in reduce[0:2] = ry, vrx in reduce[0:2] = rx");
  EXPECT_CONTAINS(
      ir, "max(max_pool2d[vi_1, vj_1, vk_1, vl_1], max_pool2d_pad[vi_1, vj_1, vk_1 * 2 + vry, vl_1 * 2 + vrx])");
}

TEST(PoolDefinition, IntegerMaxPoolPadsWithTheLowestInt) {
  EXPECT_CONTAINS(ir_of("max_pool2d:N=1,C=1,H=4,W=4,kernel=2,pad=1,dtype=int32"), "-2147483648)");
}

TEST(PoolDefinition, AvgPoolDividesByTheCoveredCount) {
  std::string ir = ir_of("avg_pool2d:N=1,C=1,H=4,W=4,kernel=3,stride=2,pad=1");
  EXPECT_CONTAINS(ir, "allocate avg_pool2d_pad: float32[1, 1, 6, 6]");
  EXPECT_CONTAINS(ir, "allocate avg_pool2d_sum: float32[1, 1, 2, 2]");
  EXPECT_CONTAINS(ir,
                  "avg_pool2d[vi_2, vj_2, vk_2, vl_2] = avg_pool2d_sum[vi_2, vj_2, vk_2, vl_2] / "
                  "float32((min(vk_2 * 2 + 2, 4) - max(vk_2 * 2 - 1, 0)) * (min(vl_2 * 2 + 2, 4) - max(vl_2 * 2 - "
                  "1, 0)))");
  std::string include_pad = ir_of("avg_pool2d:N=1,C=1,H=4,W=4,kernel=3,stride=2,pad=1,count_include_pad=1");
  EXPECT_CONTAINS(include_pad, "avg_pool2d_sum[vi_2, vj_2, vk_2, vl_2] / 9.0f");
}

TEST(PoolDefinition, GlobalAveragePoolKeepsUnitSpatialDimensions) {
  std::string ir = ir_of("global_avg_pool2d:N=1,C=2,H=3,W=3,layout=NHWC");
  EXPECT_CONTAINS(ir, "func global_avg_pool2d(X: float32[1, 3, 3, 2], global_avg_pool2d: float32[1, 1, 1, 2])");
  EXPECT_CONTAINS(ir, "global_avg_pool2d_sum[vi, vj, vk, vl] + X[vi, vry, vrx, vl]");
  EXPECT_CONTAINS(ir, "global_avg_pool2d_sum[vi_1, vj_1, vk_1, vl_1] / 9.0f");
}

TEST(PoolReference, MaxPoolHandComputed) {
  std::vector<float> x(16), y(4);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i);
  Window2d window;
  window.stride = {2, 2};
  reference::max_pool2d(x.data(), y.data(), {1, 1, 4, 4}, {2, 2}, window, Layout::NCHW);
  EXPECT_EQ(y, (std::vector<float>{5, 7, 13, 15}));
}

TEST(PoolReference, PaddingNeverWinsAMax) {
  std::vector<int32_t> x(9, -5), y(9);
  Window2d window;
  window.padding = Padding2d::uniform(1);
  reference::max_pool2d(x.data(), y.data(), {1, 1, 3, 3}, {3, 3}, window, Layout::NCHW);
  EXPECT_EQ(y, std::vector<int32_t>(9, -5));
}

TEST(PoolReference, AvgPoolExcludesOrIncludesPadding) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, y(9);
  Window2d window;
  window.padding = Padding2d::uniform(1);
  reference::avg_pool2d(x.data(), y.data(), {1, 1, 3, 3}, {3, 3}, window, Layout::NCHW, false);
  EXPECT_FLOAT_EQ(y[0], (1 + 2 + 4 + 5) / 4.0f);
  EXPECT_FLOAT_EQ(y[1], (1 + 2 + 3 + 4 + 5 + 6) / 6.0f);
  EXPECT_FLOAT_EQ(y[4], 45 / 9.0f);
  reference::avg_pool2d(x.data(), y.data(), {1, 1, 3, 3}, {3, 3}, window, Layout::NCHW, true);
  EXPECT_FLOAT_EQ(y[0], (1 + 2 + 4 + 5) / 9.0f);
  EXPECT_FLOAT_EQ(y[4], 45 / 9.0f);
}

TEST(PoolReference, NhwcPoolsEachChannel) {
  // 2x2 image, channels interleaved: channel 0 is 1 2 3 4, channel 1 is 10 20 30 40.
  std::vector<float> x = {1, 10, 2, 20, 3, 30, 4, 40}, y(2);
  reference::max_pool2d(x.data(), y.data(), {1, 2, 2, 2}, {2, 2}, Window2d{}, Layout::NHWC);
  EXPECT_EQ(y, (std::vector<float>{4, 40}));
  reference::global_avg_pool2d(x.data(), y.data(), {1, 2, 2, 2}, Layout::NHWC);
  EXPECT_EQ(y, (std::vector<float>{2.5f, 25.0f}));
}

TEST(PoolShapes, OutputShapeFollowsTheWindow) {
  Window2d window;
  window.stride = {2, 2};
  window.padding = {1, 1, 1, 1};
  // (112 + 2 - 3) / 2 + 1 = 56, as in ResNet's first pooling.
  EXPECT_EQ(pool2d_output_shape({1, 64, 112, 112}, {3, 3}, window, Layout::NCHW, "max_pool2d"), (Shape{1, 64, 56, 56}));
  EXPECT_EQ(pool2d_output_shape({1, 112, 112, 64}, {3, 3}, window, Layout::NHWC, "max_pool2d"), (Shape{1, 56, 56, 64}));
}

}  // namespace
}  // namespace temper::ops
