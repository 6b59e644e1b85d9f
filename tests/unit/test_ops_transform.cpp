// transpose, reshape, pad and concat: the IR their definitions produce (loads clamped in
// bounds under every select), and their reference implementations.
#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/ops/reference.h"
#include "compiler/ops/transform.h"
#include "compiler/ops/workload.h"

namespace temper::ops {
namespace {

std::string ir_of(const std::string& workload) {
  return to_string(instantiate(Workload::parse(workload)).func);
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(TransformDefinition, TransposePermutesIndices) {
  std::string ir = ir_of("transpose:shape=2x3x4,perm=2x0x1");
  EXPECT_CONTAINS(ir, "func transpose(X: float32[2, 3, 4], transpose: float32[4, 2, 3])");
  EXPECT_CONTAINS(ir, "transpose[vi, vj, vk] = X[vj, vk, vi]");
}

TEST(TransformDefinition, ReshapeGoesThroughTheFlatOffset) {
  EXPECT_CONTAINS(ir_of("reshape:shape=2x3x4,newshape=4x6"),
                  "reshape[vi, vj] = X[(vi * 6 + vj) // 4 // 3, (vi * 6 + vj) // 4 % 3, (vi * 6 + vj) % 4]");
}

TEST(TransformDefinition, PadChecksAndClampsOnlyPaddedSides) {
  std::string ir = ir_of("pad:shape=2x3,before=1x0,after=0x2,value=1.5");
  EXPECT_CONTAINS(ir, "func pad(X: float32[2, 3], pad: float32[3, 5])");
  EXPECT_CONTAINS(ir, "pad[vi, vj] = select(vi >= 1 && vj < 3, X[max(vi - 1, 0), min(vj, 2)], 1.5f)");
  EXPECT_CONTAINS(ir_of("pad:shape=2x3,before=0x0,after=0x0"), "pad[vi, vj] = X[vi, vj]");
}

TEST(TransformDefinition, ConcatSelectsTheInputWithClampedLoads) {
  std::string ir = ir_of("concat:shape=2x9,axis=1,sizes=3x5x1");
  EXPECT_CONTAINS(ir, "func concat(X0: float32[2, 3], X1: float32[2, 5], X2: float32[2, 1], concat: float32[2, 9])");
  EXPECT_CONTAINS(ir,
                  "concat[vi, vj] = select(vj < 3, X0[vi, min(vj, 2)], select(vj < 8, X1[vi, min(max(vj - 3, 0), "
                  "4)], X2[vi, max(vj - 8, 0)]))");
}

TEST(TransformReference, TransposeHandComputed) {
  std::vector<int32_t> x = {1, 2, 3, 4, 5, 6}, y(6);
  reference::transpose(x.data(), y.data(), {2, 3}, {1, 0});
  EXPECT_EQ(y, (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  std::vector<int32_t> z(6);
  // [1, 2, 3] -> perm (2, 0, 1) -> [3, 1, 2]: z[k, 0, j] = x[0, j, k].
  reference::transpose(x.data(), z.data(), {1, 2, 3}, {2, 0, 1});
  EXPECT_EQ(z, (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
}

TEST(TransformReference, PadHandComputed) {
  std::vector<float> x = {1, 2, 3, 4}, y(9);
  reference::pad(x.data(), y.data(), {2, 2}, {1, 0}, {0, 1}, -1.0);
  EXPECT_EQ(y, (std::vector<float>{-1, -1, -1, 1, 2, -1, 3, 4, -1}));
}

TEST(TransformReference, ConcatHandComputed) {
  std::vector<float> a = {1, 2, 3, 4}, b = {5, 6}, y(6);
  reference::concat<float>({a.data(), b.data()}, {{2, 2}, {2, 1}}, 1, y.data());
  EXPECT_EQ(y, (std::vector<float>{1, 2, 5, 3, 4, 6}));
  reference::concat<float>({a.data(), b.data()}, {{2, 2}, {1, 2}}, 0, y.data());
  EXPECT_EQ(y, (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(TransformReference, ReshapeKeepsRowMajorOrder) {
  std::vector<int32_t> x = {1, 2, 3, 4, 5, 6}, y(6);
  reference::reshape(x.data(), y.data(), 6);
  EXPECT_EQ(y, x);
}

}  // namespace
}  // namespace temper::ops
