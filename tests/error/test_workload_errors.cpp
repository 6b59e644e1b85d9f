// Bad workloads and impossible operator shapes fail with a UserError that names what is
// wrong and what is accepted.
#include <gtest/gtest.h>

#include <functional>

#include "compiler/ops/conv.h"
#include "compiler/ops/elementwise.h"
#include "compiler/ops/matmul.h"
#include "compiler/ops/workload.h"
#include "user_error_test_util.h"

namespace temper::ops {
namespace {

using testing_util::error_of;

// The message of instantiating (and so parsing) the workload `text`.
std::string workload_error(const std::string& text) {
  return error_of([&] { instantiate(Workload::parse(text)); });
}

#define EXPECT_CONTAINS(message, part) EXPECT_NE((message).find(part), std::string::npos) << (message)

// Found by fuzz_workload: every extent fits an int32 index, their product no int64.
TEST(WorkloadShapes, ElementCountsThatOverflowAreRefused) {
  EXPECT_CONTAINS(workload_error("gelu:shape=6244x4x4x4204x10x04x1044x4x4x4204x1044x44"),
                  "has more elements than a 64-bit count holds");
}

TEST(WorkloadSyntax, MissingColon) {
  std::string e = workload_error("matmul M=1");
  EXPECT_CONTAINS(e, "workload 'matmul M=1' has no ':' after the op name");
  EXPECT_CONTAINS(e, "write op:key=value,...");
}

TEST(WorkloadSyntax, EmptyOpName) {
  EXPECT_CONTAINS(workload_error(":M=1"), "has no op name before ':'");
}

TEST(WorkloadSyntax, ParameterWithoutEquals) {
  EXPECT_CONTAINS(workload_error("matmul:M=1,N"), "parameter 'N' has no '='; write key=value");
}

TEST(WorkloadSyntax, EmptyKey) {
  EXPECT_CONTAINS(workload_error("matmul:M=1,=3"), "parameter '=3' has an empty key");
}

TEST(WorkloadSyntax, EmptyValue) {
  EXPECT_CONTAINS(workload_error("matmul:M=1,N="), "parameter N has an empty value");
}

TEST(WorkloadSyntax, DoubleEquals) {
  EXPECT_CONTAINS(workload_error("matmul:M=1=2,N=1,K=1"), "parameter 'M=1=2' has more than one '='");
}

TEST(WorkloadSyntax, EmptyParameterBetweenCommas) {
  EXPECT_CONTAINS(workload_error("matmul:M=1,,N=2,K=3"), "has an empty parameter between commas");
  EXPECT_CONTAINS(workload_error("matmul:M=1,N=2,K=3,"), "has an empty parameter between commas");
}

TEST(WorkloadSyntax, DuplicateKey) {
  EXPECT_CONTAINS(workload_error("matmul:M=1,N=2,M=3,K=4"), "matmul: parameter M is given twice");
}

TEST(WorkloadKeys, UnknownOpListsTheKnownOnes) {
  std::string e = workload_error("matmull:M=1");
  EXPECT_CONTAINS(e, "unknown op 'matmull'");
  EXPECT_CONTAINS(e, "known ops: matmul, batch_matmul, dense, conv2d,");
  EXPECT_CONTAINS(e, "concat");
}

TEST(WorkloadKeys, UnknownKeyListsTheValidOnes) {
  EXPECT_CONTAINS(workload_error("matmul:M=1,N=2,K=3,Q=4"),
                  "matmul has no parameter 'Q'; valid keys: M, N, K, transpose_a, transpose_b, dtype");
}

TEST(WorkloadKeys, MissingRequiredKey) {
  std::string e = workload_error("matmul:M=1,N=2");
  EXPECT_CONTAINS(e, "matmul: missing required parameter K;");
  EXPECT_CONTAINS(e, "usage: matmul:M=<int>,N=<int>,K=<int>");
  EXPECT_CONTAINS(workload_error("conv2d:N=1,C=3"), "missing required parameters H, W, K, R, S");
  EXPECT_CONTAINS(workload_error("softmax:"), "missing required parameters shape, axis");
}

TEST(WorkloadValues, NonInteger) {
  EXPECT_CONTAINS(workload_error("matmul:M=abc,N=1,K=1"), "matmul: M=abc is not an integer");
  EXPECT_CONTAINS(workload_error("matmul:M=1.5,N=1,K=1"), "matmul: M=1.5 is not an integer");
  EXPECT_CONTAINS(workload_error("matmul:M=+2,N=1,K=1"), "matmul: M=+2 is not an integer");
}

TEST(WorkloadValues, NonPositive) {
  EXPECT_CONTAINS(workload_error("matmul:M=0,N=1,K=1"), "matmul: M=0 must be positive");
  EXPECT_CONTAINS(workload_error("matmul:M=4,N=-2,K=1"), "matmul: N=-2 must be positive");
  EXPECT_CONTAINS(workload_error("add:A=2x0,B=2"), "add: A=2x0 must be positive");
  EXPECT_CONTAINS(workload_error("softmax:shape=4,axis=-1"), "softmax: axis=-1 must be non-negative");
}

TEST(WorkloadValues, TooLarge) {
  EXPECT_CONTAINS(workload_error("matmul:M=4294967296,N=1,K=1"), "M=4294967296 is too large (at most 2147483647)");
  EXPECT_CONTAINS(workload_error("matmul:M=99999999999999999999,N=1,K=1"), "is not an integer");
}

TEST(WorkloadValues, MalformedLists) {
  EXPECT_CONTAINS(workload_error("relu:shape=2xx3"),
                  "relu: shape=2xx3 is not an integer or a list of integers joined by 'x' (like 2x3)");
  EXPECT_CONTAINS(workload_error("conv2d:N=1,C=1,H=4,W=4,K=1,R=1,S=1,stride=1x2x3"),
                  "stride=1x2x3 has 3 values; give 1 (both dimensions) or 2 (height x width)");
  EXPECT_CONTAINS(workload_error("conv2d:N=1,C=1,H=4,W=4,K=1,R=1,S=1,pad=1x2x3"),
                  "pad=1x2x3 has 3 values; give 1 (all sides), 2 (height x width) or 4 (top x left x bottom x right)");
}

TEST(WorkloadValues, BooleansNumbersAndNames) {
  EXPECT_CONTAINS(workload_error("matmul:M=1,N=1,K=1,transpose_a=yes"),
                  "transpose_a=yes is not a boolean; use 0 or 1 (or false, true)");
  EXPECT_CONTAINS(workload_error("batch_norm:shape=2x3,eps=abc"), "batch_norm: eps=abc is not a finite number");
  EXPECT_CONTAINS(workload_error("batch_norm:shape=2x3,eps=inf"), "eps=inf is not a finite number");
  EXPECT_CONTAINS(workload_error("conv2d:N=1,C=1,H=4,W=4,K=1,R=1,S=1,layout=NCWH"),
                  "layout=NCWH is not accepted; choose one of NCHW, NHWC");
  EXPECT_CONTAINS(workload_error("matmul:M=1,N=1,K=1,dtype=float16"),
                  "dtype=float16 is not accepted; choose one of float32, int32");
  EXPECT_CONTAINS(workload_error("softmax:shape=4,axis=0,dtype=int32"),
                  "dtype=int32 is not accepted; choose one of float32");
  EXPECT_CONTAINS(workload_error("dense:M=1,N=1,K=1,act=swish"),
                  "act=swish is not accepted; choose one of none, relu, relu6, sigmoid, tanh, gelu");
  EXPECT_CONTAINS(workload_error("pad:shape=2,before=1,after=1,value=0.5,dtype=int32"),
                  "pad: value=0.5 is not an int32 value");
}

TEST(ImpossibleShapes, KernelLargerThanPaddedInput) {
  EXPECT_CONTAINS(workload_error("conv2d:N=1,C=3,H=3,W=3,K=4,R=5,S=5,pad=0x1"),
                  "conv2d: the 5x5 kernel (5x5 with dilation) is larger than the padded input 3x5 (3x3 plus padding)");
  EXPECT_CONTAINS(workload_error("conv2d:N=1,C=3,H=5,W=5,K=4,R=3,S=3,dilation=3"),
                  "the 3x3 kernel (7x7 with dilation) is larger than the padded input 5x5");
  EXPECT_CONTAINS(workload_error("depthwise_conv2d:N=1,C=3,H=2,W=8,R=3,S=3"), "is larger than the padded input 2x8");
  EXPECT_CONTAINS(workload_error("max_pool2d:N=1,C=1,H=2,W=2,kernel=3"),
                  "max_pool2d: the 3x3 kernel is larger than the padded input 2x2");
}

TEST(ImpossibleShapes, ChannelsNotDivisibleByGroups) {
  EXPECT_CONTAINS(workload_error("conv2d:N=1,C=6,H=4,W=4,K=4,R=1,S=1,groups=4"),
                  "conv2d: C=6 channels are not divisible by groups=4");
  EXPECT_CONTAINS(workload_error("conv2d:N=1,C=4,H=4,W=4,K=6,R=1,S=1,groups=4"),
                  "conv2d: the weight's 6 output channels are not divisible by groups=4");
  EXPECT_CONTAINS(workload_error("group_conv2d_nchwc:N=1,C=24,H=4,W=4,K=24,R=3,S=3,in_block=8,out_block=8,groups=2"),
                  "group_conv2d_nchwc: groups of 12 input and 12 output channels do not line up with in_block=8 and "
                  "out_block=8; each group must be whole blocks, or each block whole groups");
  EXPECT_CONTAINS(workload_error("group_conv2d_nchwc:N=1,C=24,H=4,W=4,K=20,R=1,S=1,in_block=8,out_block=8,groups=3"),
                  "group_conv2d_nchwc: C=24 and K=20 channels are not both divisible by groups=3");
}

TEST(ImpossibleShapes, PoolPaddingAsLargeAsTheKernel) {
  EXPECT_CONTAINS(workload_error("avg_pool2d:N=1,C=1,H=8,W=8,kernel=2,pad=2"),
                  "avg_pool2d: padding (top 2, left 2, bottom 2, right 2) must be smaller than the 2x2 kernel");
}

TEST(ImpossibleShapes, ShapesThatDoNotFit) {
  EXPECT_CONTAINS(workload_error("add:A=2x3,B=4x3"),
                  "add: shapes 2x3 and 4x3 do not broadcast: dimension 0 of the result would be 2 and 4");
  EXPECT_CONTAINS(workload_error("softmax:shape=2x3,axis=2"),
                  "softmax: axis 2 is out of range for a tensor of rank 2 (accepted: -2 to 1)");
  EXPECT_CONTAINS(workload_error("transpose:shape=2x3x4,perm=0x2x2"),
                  "transpose: perm 0x2x2 is not a permutation of the 3 dimensions");
  EXPECT_CONTAINS(workload_error("reshape:shape=2x3,newshape=4x2"),
                  "reshape: cannot reshape X of shape 2x3 (6 elements) to 4x2 (8 elements)");
  EXPECT_CONTAINS(workload_error("pad:shape=2x3,before=1,after=1x1"),
                  "pad: X has 2 dimensions but the padding lists have 1 (before) and 2 (after) entries");
  EXPECT_CONTAINS(workload_error("concat:shape=2x9,axis=1,sizes=3x5"),
                  "concat: sizes=3x5 add up to 8 but the output's axis 1 has extent 9");
  EXPECT_CONTAINS(workload_error("layer_norm:shape=2x3,axis=3"), "layer_norm: axis 3 is out of range");
}

// The same checks guard the operators when called directly on tensors.
TEST(OperatorShapes, MatmulInnerDimensionsDiffer) {
  te::Tensor a = te::placeholder({2, 3}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({4, 5}, DataType::float32(), "B");
  EXPECT_CONTAINS(error_of([&] { matmul(a, b); }),
                  "matmul: A is 2x3 and B is 4x5 (transpose_a=0, transpose_b=0); A's K=3 must equal B's K=4");
  te::Tensor w = te::placeholder({4, 2}, DataType::float32(), "W");
  EXPECT_CONTAINS(error_of([&] { dense(a, w, te::Tensor()); }),
                  "dense: the input is 2x3 (M x K) but the weight is 4x2 (N x K); their K must be equal");
}

TEST(OperatorShapes, ConvWeightChannelsDiffer) {
  te::Tensor x = te::placeholder({1, 64, 8, 8}, DataType::float32(), "input");
  te::Tensor w = te::placeholder({16, 32, 3, 3}, DataType::float32(), "weight");
  EXPECT_CONTAINS(error_of([&] { conv2d(x, w, Window2d{}); }),
                  "conv2d: input has 64 channels but the weight expects 32 (32 per group x groups=1; the weight's "
                  "C/groups must be 64)");
  te::Tensor w3 = te::placeholder({16, 64, 3}, DataType::float32(), "weight3");
  EXPECT_CONTAINS(error_of([&] { conv2d(x, w3, Window2d{}); }),
                  "conv2d: the weight (KCRS) must have 4 dimensions, but weight3 has shape 16x64x3");
  te::Tensor wi = te::placeholder({16, 64, 3, 3}, DataType::int32(), "wi");
  EXPECT_CONTAINS(error_of([&] { conv2d(x, wi, Window2d{}); }), "conv2d: input is float32 but wi is int32");
}

TEST(OperatorShapes, FloatOnlyOpsRejectIntegers) {
  te::Tensor x = te::placeholder({4}, DataType::int32(), "X");
  EXPECT_CONTAINS(error_of([&] { sigmoid(x); }), "sigmoid: the input must be a floating-point tensor, got int32");
}

}  // namespace
}  // namespace temper::ops
