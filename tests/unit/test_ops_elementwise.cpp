// Elementwise operators: numpy broadcasting, the scalar expressions of the activations,
// and the reference implementations against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/ir/printer.h"
#include "compiler/ops/elementwise.h"
#include "compiler/ops/reference.h"
#include "compiler/ops/workload.h"

namespace temper::ops {
namespace {

std::string ir_of(const std::string& workload) {
  return to_string(instantiate(Workload::parse(workload)).func);
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(Broadcast, AlignsShapesAtTheLastDimension) {
  EXPECT_EQ(broadcast_shapes({2, 3}, {3}, "add"), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes({2, 1, 3}, {4, 1}, "add"), (Shape{2, 4, 3}));
  EXPECT_EQ(broadcast_shapes({1}, {5, 1, 1}, "add"), (Shape{5, 1, 1}));
  EXPECT_EQ(broadcast_shapes({7}, {7}, "add"), (Shape{7}));
  EXPECT_THROW(broadcast_shapes({2, 3}, {2}, "add"), UserError);
}

TEST(BinaryDefinition, StretchedDimensionsAreReadAtZero) {
  std::string ir = ir_of("maximum:A=2x1x3,B=4x1");
  EXPECT_CONTAINS(ir, "func maximum(A: float32[2, 1, 3], B: float32[4, 1], maximum: float32[2, 4, 3])");
  EXPECT_CONTAINS(ir, "maximum[vi, vj, vk] = max(A[vi, 0, vk], B[vj, 0])");
  EXPECT_CONTAINS(ir_of("add:A=2x3,B=3"), "add[vi, vj] = A[vi, vj] + B[vj]");
  EXPECT_CONTAINS(ir_of("div:A=4,B=4"), "div[vi] = A[vi] / B[vi]");
}

TEST(UnaryDefinition, ActivationsAsExpressions) {
  EXPECT_CONTAINS(ir_of("relu:shape=4"), "relu[vi] = max(X[vi], 0.0f)");
  EXPECT_CONTAINS(ir_of("relu6:shape=4,dtype=int32"), "relu6[vi] = min(max(X[vi], 0), 6)");
  EXPECT_CONTAINS(ir_of("sigmoid:shape=4"), "sigmoid[vi] = sigmoid(X[vi])");
  EXPECT_CONTAINS(ir_of("gelu:shape=4"), "gelu[vi] = 0.5f * X[vi] * (1.0f + erf(X[vi] * 0.707106781f))");
  EXPECT_CONTAINS(ir_of("sqrt:shape=4"), "sqrt[vi] = sqrt(X[vi])");
}

TEST(ScaleBiasDefinition, ScalesAlongTheAxis) {
  std::string ir = ir_of("scale_bias:shape=2x3x4");
  EXPECT_CONTAINS(ir, "scale: float32[3], bias: float32[3]");
  EXPECT_CONTAINS(ir, "scale_bias[vi, vj, vk] = X[vi, vj, vk] * scale[vj] + bias[vj]");
}

TEST(ElementwiseReference, BinaryBroadcastHandComputed) {
  std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {10, 20, 30}, y(6);
  reference::binary(BinaryOp::Add, a.data(), {2, 3}, b.data(), {3}, y.data());
  EXPECT_EQ(y, (std::vector<float>{11, 22, 33, 14, 25, 36}));
  std::vector<float> col = {2, 3};  // [2, 1]: one value per row
  reference::binary(BinaryOp::Mul, a.data(), {2, 3}, col.data(), {2, 1}, y.data());
  EXPECT_EQ(y, (std::vector<float>{2, 4, 6, 12, 15, 18}));
  reference::binary(BinaryOp::Sub, col.data(), {2, 1}, b.data(), {3}, y.data());
  EXPECT_EQ(y, (std::vector<float>{-8, -18, -28, -7, -17, -27}));
  std::vector<int32_t> ia = {-1, 5}, ib = {2}, iy(2);
  reference::binary(BinaryOp::Maximum, ia.data(), {2}, ib.data(), {1}, iy.data());
  EXPECT_EQ(iy, (std::vector<int32_t>{2, 5}));
  reference::binary(BinaryOp::Minimum, ia.data(), {2}, ib.data(), {1}, iy.data());
  EXPECT_EQ(iy, (std::vector<int32_t>{-1, 2}));
}

TEST(ElementwiseReference, UnaryValues) {
  EXPECT_EQ(reference::unary(UnaryOp::Relu, -2.0f), 0.0f);
  EXPECT_EQ(reference::unary(UnaryOp::Relu6, 7.5f), 6.0f);
  EXPECT_EQ(reference::unary(UnaryOp::Relu6, int32_t{3}), 3);
  EXPECT_FLOAT_EQ(reference::unary(UnaryOp::Sigmoid, 0.0f), 0.5f);
  EXPECT_FLOAT_EQ(reference::unary(UnaryOp::Tanh, 1.0f), 0.7615941559f);
  EXPECT_FLOAT_EQ(reference::unary(UnaryOp::Gelu, 1.0f), 0.8413447461f);
  EXPECT_FLOAT_EQ(reference::unary(UnaryOp::Gelu, -1.0f), -0.1586552539f);
  EXPECT_FLOAT_EQ(reference::unary(UnaryOp::Exp, 1.0f), 2.718281828f);
  EXPECT_FLOAT_EQ(reference::unary(UnaryOp::Sqrt, 2.25f), 1.5f);
}

TEST(ElementwiseReference, ScaleBiasPerChannel) {
  std::vector<float> x = {1, 1, 2, 2, 3, 3}, scale = {1, 10, 100}, bias = {0, 1, 2}, y(6);
  reference::scale_bias(x.data(), scale.data(), bias.data(), y.data(), {1, 3, 2}, 1);
  EXPECT_EQ(y, (std::vector<float>{1, 1, 21, 21, 302, 302}));
}

}  // namespace
}  // namespace temper::ops
