// Workload strings: parsing, the canonical form, getters, the op table, and the shape
// of an OpInstance.
#include <gtest/gtest.h>

#include "compiler/ops/workload.h"

namespace temper::ops {
namespace {

TEST(Workload, CanonicalFormListsEveryKeyWithDefaultsInTableOrder) {
  EXPECT_EQ(Workload::parse("matmul:M=1024,N=1024,K=1024").to_string(),
            "matmul:M=1024,N=1024,K=1024,transpose_a=0,transpose_b=0,dtype=float32");
  EXPECT_EQ(Workload::parse("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1").to_string(),
            "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,dilation=1,groups=1,layout=NCHW,dtype=float32");
  EXPECT_EQ(Workload::parse("dense:M=8,N=16,K=32,act=gelu").to_string(),
            "dense:M=8,N=16,K=32,bias=0,act=gelu,dtype=float32");
  EXPECT_EQ(Workload::parse("layer_norm:shape=8x128x768,axis=2").to_string(),
            "layer_norm:shape=8x128x768,axis=2,eps=1e-05,dtype=float32");
}

TEST(Workload, SpellingsOfOneWorkloadShareOneString) {
  const std::string canonical = "matmul:M=2,N=4,K=8,transpose_a=1,transpose_b=0,dtype=int32";
  EXPECT_EQ(Workload::parse(" matmul : K=8 , dtype=int32, transpose_a=true,M=2,N=4 ").to_string(), canonical);
  EXPECT_EQ(Workload::parse("matmul:M=2,N=4,K=8,transpose_a=1,transpose_b=false,dtype=int32").to_string(), canonical);
  EXPECT_EQ(Workload::parse("matmul:M=002,N=4,K=8,transpose_a=1,dtype=int32").to_string(), canonical);
  EXPECT_EQ(Workload::make("matmul", {{"transpose_a", "1"}, {"K", "8"}, {"N", "4"}, {"M", "2"}, {"dtype", "int32"}}),
            Workload::parse(canonical));
}

TEST(Workload, WindowListsTakeTheirShortestForm) {
  auto canonical = [](const std::string& params) {
    Workload w = Workload::parse("conv2d:N=1,C=4,H=8,W=8,K=4,R=3,S=3," + params);
    return w.get("stride") + " " + w.get("pad") + " " + w.get("dilation");
  };
  EXPECT_EQ(canonical("stride=2x2,pad=1x1x1x1,dilation=1x1"), "2 1 1");
  EXPECT_EQ(canonical("stride=2x1,pad=1x2x1x2,dilation=1x2"), "2x1 1x2 1x2");
  EXPECT_EQ(canonical("pad=2x2"), "1 2 1");
  EXPECT_EQ(canonical("pad=0x1x2x1"), "1 0x1x2x1 1");
  EXPECT_EQ(Workload::parse("max_pool2d:N=1,C=1,H=4,W=4,kernel=3x3").get("kernel"), "3");
}

TEST(Workload, NumbersAreCanonicalised) {
  EXPECT_EQ(Workload::parse("batch_norm:shape=2x3,eps=0.00001").get("eps"), "1e-05");
  EXPECT_EQ(Workload::parse("batch_norm:shape=2x3,eps=1E-5").get("eps"), "1e-05");
  EXPECT_EQ(Workload::parse("pad:shape=2,before=1,after=0,value=-0.50").get("value"), "-0.5");
  EXPECT_EQ(Workload::parse("pad:shape=2,before=1,after=0").get("value"), "0");
}

TEST(Workload, ToStringRoundTrips) {
  for (const char* text :
       {"matmul:M=3,N=5,K=7,transpose_b=1", "conv2d:N=1,C=4,H=6,W=5,K=4,R=3,S=3,groups=4,pad=1x0,layout=NHWC",
        "avg_pool2d:N=1,C=2,H=6,W=7,kernel=3x2,pad=1x0x2x1,count_include_pad=1", "add:A=2x3x4,B=3x1",
        "concat:shape=2x9,axis=1,sizes=3x5x1", "pad:shape=2x3,before=1x0,after=2x3,value=1.5"}) {
    Workload w = Workload::parse(text);
    EXPECT_EQ(Workload::parse(w.to_string()), w) << text;
    EXPECT_EQ(Workload::parse(w.to_string()).to_string(), w.to_string()) << text;
  }
}

TEST(Workload, GettersReadTypedValues) {
  Workload w = Workload::parse("conv2d:N=1,C=4,H=8,W=8,K=4,R=3,S=3,stride=2x1,layout=NHWC,dtype=int32");
  EXPECT_EQ(w.get_int("C"), 4);
  EXPECT_EQ(w.get_ints("stride"), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(w.get_ints("pad"), (std::vector<int64_t>{0}));
  EXPECT_EQ(w.get("layout"), "NHWC");
  EXPECT_EQ(w.dtype(), DataType::int32());
  EXPECT_FALSE(Workload::parse("matmul:M=1,N=1,K=1").get_bool("transpose_a"));
  EXPECT_DOUBLE_EQ(Workload::parse("layer_norm:shape=4,axis=0,eps=0.25").get_float("eps"), 0.25);
}

TEST(Workload, GettersRejectWrongKindsAndUnknownKeys) {
  Workload w = Workload::parse("conv2d:N=1,C=4,H=8,W=8,K=4,R=3,S=3,stride=2x1");
  try {
    w.get_int("stride");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("stride=2x1 is not a single integer"), std::string::npos) << e.what();
  }
  try {
    w.get("Q");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("has no parameter 'Q'"), std::string::npos) << e.what();
  }
}

TEST(OpTable, ListsEveryOpWithADocAndUsage) {
  std::vector<std::string> ops = known_ops();
  const std::vector<std::string> expected = {"matmul",
                                             "batch_matmul",
                                             "dense",
                                             "conv2d",
                                             "fused_conv2d",
                                             "depthwise_conv2d",
                                             "conv2d_nchwc",
                                             "group_conv2d_nchwc",
                                             "depthwise_conv2d_nchwc",
                                             "depthwise_pointwise_nchwc",
                                             "conv2d_winograd_nchwc",
                                             "max_pool2d",
                                             "avg_pool2d",
                                             "global_avg_pool2d",
                                             "add",
                                             "sub",
                                             "mul",
                                             "div",
                                             "maximum",
                                             "minimum",
                                             "relu",
                                             "relu6",
                                             "sigmoid",
                                             "tanh",
                                             "gelu",
                                             "exp",
                                             "sqrt",
                                             "scale_bias",
                                             "softmax",
                                             "layer_norm",
                                             "attention",
                                             "batch_norm",
                                             "transpose",
                                             "reshape",
                                             "pad",
                                             "concat"};
  EXPECT_EQ(ops, expected);
  for (const std::string& op : ops) {
    EXPECT_FALSE(op_doc(op).empty()) << op;
    EXPECT_EQ(op_doc(op).find('\n'), std::string::npos) << op;
    EXPECT_EQ(op_usage(op).rfind(op + ":", 0), 0u) << op;
  }
  EXPECT_EQ(op_usage("conv2d"),
            "conv2d:N=<int>,C=<int>,H=<int>,W=<int>,K=<int>,R=<int>,S=<int>,stride=1,pad=0,dilation=1,groups=1,"
            "layout=NCHW|NHWC,dtype=float32|int32");
  EXPECT_EQ(op_usage("max_pool2d"),
            "max_pool2d:N=<int>,C=<int>,H=<int>,W=<int>,kernel=<n|HxW>,stride=1,pad=0,layout=NCHW|NHWC,"
            "dtype=float32|int32");
}

TEST(OpInstance, ParametersAreInputsThenOutputs) {
  OpInstance inst = instantiate(Workload::parse("dense:M=2,N=3,K=4,bias=1,act=relu"));
  EXPECT_EQ(inst.name, "dense");
  EXPECT_EQ(inst.func.name, "dense");
  ASSERT_EQ(inst.inputs.size(), 3u);
  ASSERT_EQ(inst.outputs.size(), 1u);
  ASSERT_EQ(inst.func.params.size(), 4u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(inst.func.params[i].same_as(inst.inputs[i].buffer()));
  EXPECT_TRUE(inst.func.params[3].same_as(inst.outputs[0].buffer()));
  EXPECT_EQ(inst.inputs[2].name(), "bias");
  EXPECT_EQ(inst.input_ranges.size(), 3u);
}

TEST(OpInstance, FlopsCountMultiplyAddsTwice) {
  EXPECT_DOUBLE_EQ(instantiate(Workload::parse("matmul:M=4,N=8,K=16")).flops, 2.0 * 4 * 8 * 16);
  EXPECT_DOUBLE_EQ(instantiate(Workload::parse("batch_matmul:B=3,M=4,N=8,K=16")).flops, 2.0 * 3 * 4 * 8 * 16);
  // 8 output channels at 3x3 positions (stride 2 over 6+2 padded), each 4 channels x 3x3 taps.
  EXPECT_DOUBLE_EQ(instantiate(Workload::parse("conv2d:N=1,C=4,H=6,W=6,K=8,R=3,S=3,pad=1,stride=2")).flops,
                   2.0 * 8 * 3 * 3 * 4 * 3 * 3);
  EXPECT_DOUBLE_EQ(instantiate(Workload::parse("conv2d:N=1,C=4,H=6,W=6,K=8,R=3,S=3,pad=1,groups=2")).flops,
                   2.0 * 8 * 6 * 6 * 2 * 3 * 3);
  EXPECT_DOUBLE_EQ(instantiate(Workload::parse("depthwise_conv2d:N=1,C=4,H=6,W=6,R=3,S=3,pad=1")).flops,
                   2.0 * 4 * 6 * 6 * 3 * 3);
  EXPECT_DOUBLE_EQ(instantiate(Workload::parse("transpose:shape=4x5,perm=1x0")).flops, 0.0);
}

TEST(OpInstance, InputRangesKeepTheOpDefined) {
  OpInstance div = instantiate(Workload::parse("div:A=4,B=4"));
  EXPECT_GT(div.input_ranges[1].low, 0.0);
  OpInstance sqrt = instantiate(Workload::parse("sqrt:shape=4"));
  EXPECT_GE(sqrt.input_ranges[0].low, 0.0);
  OpInstance bn = instantiate(Workload::parse("batch_norm:shape=2x3"));
  EXPECT_GT(bn.input_ranges[2].low, 0.0);  // var
}

TEST(OpInstance, HandBuiltWorkloadsAreCheckedAndCompleted) {
  Workload w;
  w.op = "matmul";
  w.params = {{"K", "3"}, {"M", "2"}, {"N", "4"}};
  OpInstance inst = instantiate(w);
  EXPECT_EQ(inst.outputs[0].ndim(), 2);
  w.params.push_back({"M", "5"});
  EXPECT_THROW(instantiate(w), UserError);
}

TEST(OpInstance, ReferenceComputesIntoCallerArrays) {
  OpInstance inst = instantiate(Workload::parse("matmul:M=2,N=2,K=2"));
  std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8}, c(4);
  inst.reference({a.data(), b.data()}, {c.data()});
  EXPECT_EQ(c, (std::vector<float>{19, 22, 43, 50}));
  try {
    inst.reference({a.data()}, {c.data()});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("the reference of matmul takes 2 inputs and 1 output, got 1 and 1"),
              std::string::npos)
        << e.what();
  }
}

TEST(OpInstance, IntegerReferenceUsesInt32Arrays) {
  OpInstance inst = instantiate(Workload::parse("relu:shape=4,dtype=int32"));
  std::vector<int32_t> x = {-3, 0, 2, -1}, y(4);
  inst.reference({x.data()}, {y.data()});
  EXPECT_EQ(y, (std::vector<int32_t>{0, 0, 2, 0}));
  EXPECT_EQ(inst.inputs[0].dtype(), DataType::int32());
}

}  // namespace
}  // namespace temper::ops
