// The blocked layout chosen for the graph (pass_nchwc_layout.h) on graphs built by hand:
// which ops it rewrites and where it converts (conv -> relu -> conv -> add -> pool converts
// once in and once out), results equal to the plain graph's with channel counts that do
// not fill a block, a graph with an op that cannot take the blocked layout, and the
// conversions an execution plan counts; and in it, the depthwise and 1x1 pairs fused
// (pass_fuse_depthwise_pointwise.h) where they may be.
#include <gtest/gtest.h>

#include <map>

#include "compiler/graph/execution_plan.h"
#include "compiler/graph/executor.h"
#include "compiler/graph/optimize.h"
#include "compiler/graph/pass_fuse_depthwise_pointwise.h"
#include "compiler/graph/shape_inference.h"
#include "compiler/graph/task_extraction.h"

namespace temper::graph {
namespace {

const DataType f32 = DataType::float32();

Attributes conv3x3() {
  Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{3, 3});
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  return a;
}

// x [1, C, size, size] -> conv(K) + bias -> relu -> conv(K) -> add(the first relu) ->
// maxpool 2x2 -> output. With C >= the block the input converts once; the pooled output
// once. At size 6 the convs are direct (too few tiles for Winograd).
Graph residual_block(int64_t C, int64_t K, int64_t size = 6) {
  Graph g;
  g.name = "residual";
  ValueId x = g.add_input("x", TensorType{{1, C, size, size}, f32});
  ValueId w1 = g.add_constant("w1", NDArray::random({K, C, 3, 3}, f32, 1));
  ValueId b1 = g.add_constant("b1", NDArray::random({K}, f32, 2));
  ValueId w2 = g.add_constant("w2", NDArray::random({K, K, 3, 3}, f32, 3));
  g.add_node("conv1", "Conv", conv3x3(), {x, w1, b1}, {"c1"});
  g.add_node("relu1", "Relu", {}, {g.find("c1")}, {"r1"});
  g.add_node("conv2", "Conv", conv3x3(), {g.find("r1"), w2}, {"c2"});
  g.add_node("add", "Add", {}, {g.find("c2"), g.find("r1")}, {"sum"});
  Attributes pool;
  pool.set("kernel_shape", std::vector<int64_t>{2, 2});
  pool.set("strides", std::vector<int64_t>{2, 2});
  g.add_node("pool", "MaxPool", pool, {g.find("sum")}, {"y"});
  g.mark_output(g.find("y"));
  infer_types(g);
  g.verify();
  return g;
}

std::map<std::string, int> op_counts(const Graph& g) {
  std::map<std::string, int> counts;
  for (const Node& n : g.nodes()) ++counts[n.op];
  return counts;
}

// The fused executor (blocked layout on a CPU) against the unfused one (plain NCHW, every
// node its own kernel), on random inputs.
void expect_blocked_matches_plain(const Graph& graph, const Target& target, double atol = 1e-5,
                                  LayoutChoice layout = LayoutChoice::Blocked) {
  std::map<std::string, NDArray> inputs;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value& v = graph.value(graph.inputs()[i]);
    inputs[v.name] = NDArray::random(v.type.shape, v.type.dtype, 100 + i);
  }
  GraphExecutor plain(graph, target, ExecutorOptions{.fuse = false});
  GraphExecutor blocked(graph, target, ExecutorOptions{.layout = layout});
  EXPECT_EQ(blocked.plan().layout, str("NCHW", nchwc_block_for(target, layout), "c"));
  std::vector<NDArray> expected = plain.run(inputs);
  std::vector<NDArray> actual = blocked.run(inputs);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t o = 0; o < actual.size(); ++o) {
    EXPECT_EQ(actual[o].shape(), expected[o].shape());
    Comparison c = compare(actual[o], expected[o], 1e-4, atol);
    EXPECT_TRUE(c.ok()) << "output " << o << ": " << c.message;
  }
}

TEST(NchwcLayout, ResidualChainConvertsOnceInAndOnceOut) {
  Graph g = residual_block(12, 20);
  LayoutReport report = optimize_graph(g, {.nchwc_block = 8});
  EXPECT_EQ(report.block, 8);
  EXPECT_EQ(report.blocked_convs, 2);
  std::map<std::string, int> ops = op_counts(g);
  EXPECT_EQ(ops["ReorderToNchwc"], 1);
  EXPECT_EQ(ops["ReorderFromNchwc"], 1);
  EXPECT_EQ(ops["NchwcConv"], 2);
  EXPECT_EQ(ops["NchwcMaxPool"], 1);
  EXPECT_EQ(ops["Relu"], 1);
  EXPECT_EQ(ops["Add"], 1);
  EXPECT_EQ(ops.count("Conv"), 0u);
  ASSERT_EQ(report.conversions.size(), 2u);
  EXPECT_EQ(report.conversions[0], "into NCHW8c for 'conv1' (Conv)");
  EXPECT_EQ(report.conversions[1], "out of NCHW8c for output 'y'");
  // The output keeps its name and plain shape; the blocked values carry 3 blocks of 8 for 20.
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_EQ(g.value(g.outputs()[0]).type.shape, (std::vector<int64_t>{1, 20, 3, 3}));
  EXPECT_EQ(g.value(g.find("r1_nchwc")).type.shape, (std::vector<int64_t>{1, 3, 6, 6, 8}));
}

TEST(NchwcLayout, AStemOverFewChannelsReadsThePlainInput) {
  Graph g = residual_block(3, 16);
  LayoutReport report = optimize_graph(g, {.nchwc_block = 8});
  EXPECT_EQ(op_counts(g)["ReorderToNchwc"], 0);
  ASSERT_EQ(report.conversions.size(), 1u);
  EXPECT_EQ(report.conversions[0], "out of NCHW8c for output 'y'");
}

TEST(NchwcLayout, BlockedGraphComputesThePlainGraph) {
  for (auto [C, K] : {std::pair<int64_t, int64_t>{12, 20}, {3, 16}, {16, 16}}) {
    SCOPED_TRACE(str("C=", C, " K=", K));
    expect_blocked_matches_plain(residual_block(C, K), Target::parse("llvm -mcpu=haswell"));
    expect_blocked_matches_plain(residual_block(C, K), Target::parse("llvm -mcpu=native"));
  }
}

// On maps with enough tiles the 3x3 stride-1 convs take Winograd's kernel (F(2x2) at 16x16,
// F(4x4) at 24x24) with the same conversions, and compute the plain graph.
TEST(NchwcLayout, ThreeByThreeConvsOnLargerMapsTakeWinograd) {
  for (int64_t size : {16, 24}) {
    SCOPED_TRACE(str("size ", size));
    Graph g = residual_block(12, 20, size);
    LayoutReport report = optimize_graph(g, {.nchwc_block = 8});
    std::map<std::string, int> ops = op_counts(g);
    EXPECT_EQ(ops["NchwcWinogradConv"], 2);
    EXPECT_EQ(ops.count("NchwcConv"), 0u);
    EXPECT_EQ(report.conversions.size(), 2u);
    for (const Node& n : g.nodes()) {
      if (n.op == "NchwcWinogradConv") {
        EXPECT_EQ(n.attrs.get_int("tile"), size == 16 ? 2 : 4);
      }
    }
    // F(4x4)'s transforms scale terms by up to 64: its rounding is larger than a direct
    // sum's (about 1e-5 of the outputs' magnitude of a few units here).
    expect_blocked_matches_plain(residual_block(12, 20, size), Target::parse("llvm -mcpu=native"), 2e-4);
  }
}

// Softmax over the channels cannot take the blocked layout: the graph converts out before
// it and back in for the conv after it, and still computes the plain graph.
TEST(NchwcLayout, AnOpWithoutABlockedFormConvertsAroundIt) {
  Graph g;
  g.name = "softmax_between";
  ValueId x = g.add_input("x", TensorType{{1, 8, 6, 6}, f32});
  ValueId w1 = g.add_constant("w1", NDArray::random({10, 8, 3, 3}, f32, 1));
  ValueId w2 = g.add_constant("w2", NDArray::random({6, 10, 3, 3}, f32, 2));
  g.add_node("conv1", "Conv", conv3x3(), {x, w1}, {"c1"});
  Attributes axis;
  axis.set("axis", int64_t{1});
  g.add_node("softmax", "Softmax", axis, {g.find("c1")}, {"s"});
  g.add_node("conv2", "Conv", conv3x3(), {g.find("s"), w2}, {"c2"});
  g.add_node("pool", "GlobalAveragePool", {}, {g.find("c2")}, {"y"});
  g.mark_output(g.find("y"));
  infer_types(g);
  expect_blocked_matches_plain(g, Target::parse("llvm -mcpu=haswell"));

  Graph rewritten = g;
  LayoutReport report = optimize_graph(rewritten, {.nchwc_block = 8});
  std::vector<std::string> expected = {"into NCHW8c for 'conv1' (Conv)", "out of NCHW8c for 'softmax' (Softmax)",
                                       "into NCHW8c for 'conv2' (Conv)", "out of NCHW8c for output 'y'"};
  EXPECT_EQ(report.conversions, expected);
  EXPECT_EQ(op_counts(rewritten)["NchwcGlobalAveragePool"], 1);
}

// x [1, 8, 6, 6] -> conv1(K1) -> relu -> conv2(K2); concat(relu, conv2) over the channels
// (axis 1 or -3) -> BatchNormalization -> relu -> conv3(8) -> y, as a DenseNet layer.
Graph dense_block(int64_t K1, int64_t K2, int64_t axis) {
  Graph g;
  g.name = "dense";
  ValueId x = g.add_input("x", TensorType{{1, 8, 6, 6}, f32});
  ValueId w1 = g.add_constant("w1", NDArray::random({K1, 8, 3, 3}, f32, 1));
  ValueId w2 = g.add_constant("w2", NDArray::random({K2, K1, 3, 3}, f32, 2));
  ValueId w3 = g.add_constant("w3", NDArray::random({8, K1 + K2, 3, 3}, f32, 3));
  g.add_node("conv1", "Conv", conv3x3(), {x, w1}, {"c1"});
  g.add_node("relu1", "Relu", {}, {g.find("c1")}, {"r1"});
  g.add_node("conv2", "Conv", conv3x3(), {g.find("r1"), w2}, {"c2"});
  Attributes concat;
  concat.set("axis", axis);
  g.add_node("concat", "Concat", concat, {g.find("r1"), g.find("c2")}, {"cat"});
  int64_t C = K1 + K2;
  std::vector<ValueId> bn = {g.find("cat"), g.add_constant("gamma", NDArray::random({C}, f32, 4, 0.5, 1.5)),
                             g.add_constant("beta", NDArray::random({C}, f32, 5)),
                             g.add_constant("mean", NDArray::random({C}, f32, 6)),
                             g.add_constant("var", NDArray::random({C}, f32, 7, 0.5, 2.0))};
  g.add_node("norm", "BatchNormalization", {}, bn, {"n"});
  g.add_node("relu2", "Relu", {}, {g.find("n")}, {"r2"});
  g.add_node("conv3", "Conv", conv3x3(), {g.find("r2"), w3}, {"y"});
  g.mark_output(g.find("y"));
  infer_types(g);
  g.verify();
  return g;
}

// DenseNet's and SqueezeNet's concats: inputs of whole blocks concatenate blocked, with no
// conversion out and back in.
TEST(NchwcLayout, AConcatOfWholeBlocksStaysBlocked) {
  // conv3 sums 216 to 432 products of terms up to a few units, which the blocked and plain
  // kernels add in different orders: a few 1e-5 apart.
  constexpr double kAtol = 1e-4;
  for (int64_t axis : {1, -3}) {
    SCOPED_TRACE(str("axis ", axis));
    Graph g = dense_block(16, 8, axis);
    LayoutReport report = optimize_graph(g, {.nchwc_block = 8});
    std::vector<std::string> expected = {"into NCHW8c for 'conv1' (Conv)", "out of NCHW8c for output 'y'"};
    EXPECT_EQ(report.conversions, expected);
    std::map<std::string, int> ops = op_counts(g);
    EXPECT_EQ(ops["Concat"], 1);
    EXPECT_EQ(g.value(g.find("cat_nchwc")).type.shape, (std::vector<int64_t>{1, 3, 6, 6, 8}));
    // The batch norm after the concat is a blocked scale and shift.
    EXPECT_EQ(ops.count("BatchNormalization"), 0u);
    EXPECT_EQ(ops["Mul"], 1);
    EXPECT_EQ(ops["Add"], 1);
    EXPECT_EQ(g.value(g.find("n_nchwc")).type.shape, (std::vector<int64_t>{1, 3, 6, 6, 8}));
    expect_blocked_matches_plain(dense_block(16, 8, axis), Target::parse("llvm -mcpu=haswell"), kAtol);
  }
  // With the target's own block (16 lanes on AVX-512, where 8 channels are part of a block).
  expect_blocked_matches_plain(dense_block(16, 8, 1), Target::parse("llvm -mcpu=native"), kAtol);
  expect_blocked_matches_plain(dense_block(32, 16, 1), Target::parse("llvm -mcpu=native"), kAtol);
}

// A concat with an input of part of a block reads the plain values: its blocked form would
// put the padding lanes between channels.
TEST(NchwcLayout, AConcatOfPartBlocksConvertsAroundIt) {
  Graph g = dense_block(16, 12, 1);
  LayoutReport report = optimize_graph(g, {.nchwc_block = 8});
  std::vector<std::string> expected = {"into NCHW8c for 'conv1' (Conv)", "out of NCHW8c for 'concat' (Concat)",
                                       "out of NCHW8c for 'concat' (Concat)", "into NCHW8c for 'conv3' (Conv)",
                                       "out of NCHW8c for output 'y'"};
  EXPECT_EQ(report.conversions, expected);
  expect_blocked_matches_plain(dense_block(16, 12, 1), Target::parse("llvm -mcpu=haswell"), 1e-4);
}

// A batch norm after an activation (pre-activation ResNets) cannot fold into the conv: on
// 12 channels, a block and a half of 8, its blocked scale and shift keep the tail lanes 0.
TEST(NchwcLayout, ABatchNormNoConvAbsorbsIsABlockedScaleAndShift) {
  auto conv_relu_bn = [] {
    Graph g;
    g.name = "relu_bn";
    ValueId x = g.add_input("x", TensorType{{1, 8, 6, 6}, f32});
    g.add_node("conv1", "Conv", conv3x3(), {x, g.add_constant("w1", NDArray::random({12, 8, 3, 3}, f32, 1))}, {"c1"});
    g.add_node("relu", "Relu", {}, {g.find("c1")}, {"r"});
    std::vector<ValueId> bn = {g.find("r"), g.add_constant("gamma", NDArray::random({12}, f32, 4, 0.5, 1.5)),
                               g.add_constant("beta", NDArray::random({12}, f32, 5)),
                               g.add_constant("mean", NDArray::random({12}, f32, 6)),
                               g.add_constant("var", NDArray::random({12}, f32, 7, 0.5, 2.0))};
    g.add_node("norm", "BatchNormalization", {}, bn, {"n"});
    g.add_node("conv2", "Conv", conv3x3(), {g.find("n"), g.add_constant("w2", NDArray::random({8, 12, 3, 3}, f32, 2))},
               {"y"});
    g.mark_output(g.find("y"));
    infer_types(g);
    g.verify();
    return g;
  };
  Graph g = conv_relu_bn();
  LayoutReport report = optimize_graph(g, {.nchwc_block = 8});
  EXPECT_EQ(report.conversions.size(), 2u);
  EXPECT_EQ(op_counts(g).count("BatchNormalization"), 0u);
  expect_blocked_matches_plain(conv_relu_bn(), Target::parse("llvm -mcpu=haswell"));
  expect_blocked_matches_plain(conv_relu_bn(), Target::parse("llvm -mcpu=native"));
}

// Each activation that runs blocked, between two convs over 12 channels (a block and a half
// of 8: the tail lanes pass through it), against the plain graph.
TEST(NchwcLayout, EachBlockedActivationMatchesThePlainGraph) {
  for (const char* op :
       {"HardSigmoid", "HardSwish", "LeakyRelu", "Elu", "Selu", "Celu", "Mish", "Softsign", "Neg", "Abs"}) {
    SCOPED_TRACE(op);
    auto conv_act_conv = [op] {
      Graph g;
      g.name = "act";
      ValueId x = g.add_input("x", TensorType{{1, 8, 6, 6}, f32});
      g.add_node("conv1", "Conv", conv3x3(), {x, g.add_constant("w1", NDArray::random({12, 8, 3, 3}, f32, 1))}, {"c1"});
      g.add_node("act", op, {}, {g.find("c1")}, {"a"});
      g.add_node("conv2", "Conv", conv3x3(),
                 {g.find("a"), g.add_constant("w2", NDArray::random({8, 12, 3, 3}, f32, 2))}, {"y"});
      g.mark_output(g.find("y"));
      infer_types(g);
      return g;
    };
    Graph g = conv_act_conv();
    EXPECT_EQ(optimize_graph(g, {.nchwc_block = 8}).conversions.size(), 2u);
    expect_blocked_matches_plain(conv_act_conv(), Target::parse("llvm -mcpu=haswell"));
  }
}

// A squeeze-excite block (EfficientNet's, RegNet's, MobileNetV3's): x -> conv -> HardSwish
// (r); GlobalAveragePool -> 1x1 conv -> HardSigmoid (s, [1, C, 1, 1]); r * s -> conv -> y.
// The scale broadcasts over the blocked map: no conversion between the convs.
TEST(NchwcLayout, ASqueezeExciteScaleMultipliesTheBlockedMap) {
  auto se_block = [](int64_t C) {
    Graph g;
    g.name = "se";
    ValueId x = g.add_input("x", TensorType{{1, 8, 6, 6}, f32});
    ValueId w1 = g.add_constant("w1", NDArray::random({C, 8, 3, 3}, f32, 1));
    ValueId w_se = g.add_constant("w_se", NDArray::random({C, C, 1, 1}, f32, 2));
    ValueId w2 = g.add_constant("w2", NDArray::random({8, C, 3, 3}, f32, 3));
    g.add_node("conv1", "Conv", conv3x3(), {x, w1}, {"c1"});
    g.add_node("act", "HardSwish", {}, {g.find("c1")}, {"r"});
    g.add_node("squeeze", "GlobalAveragePool", {}, {g.find("r")}, {"gap"});
    g.add_node("excite", "Conv", {}, {g.find("gap"), w_se}, {"e"});
    g.add_node("gate", "HardSigmoid", {}, {g.find("e")}, {"s"});
    g.add_node("scale", "Mul", {}, {g.find("r"), g.find("s")}, {"m"});
    g.add_node("conv2", "Conv", conv3x3(), {g.find("m"), w2}, {"y"});
    g.mark_output(g.find("y"));
    infer_types(g);
    g.verify();
    return g;
  };
  Graph g = se_block(12);
  LayoutReport report = optimize_graph(g, {.nchwc_block = 8});
  std::vector<std::string> expected = {"into NCHW8c for 'conv1' (Conv)", "out of NCHW8c for output 'y'"};
  EXPECT_EQ(report.conversions, expected);
  EXPECT_EQ(g.value(g.find("m_nchwc")).type.shape, (std::vector<int64_t>{1, 2, 6, 6, 8}));
  expect_blocked_matches_plain(se_block(12), Target::parse("llvm -mcpu=haswell"));
  expect_blocked_matches_plain(se_block(24), Target::parse("llvm -mcpu=native"));
}

// RegNet's and ResNeXt's block: 1x1 conv -> relu -> grouped 3x3 conv (group width gw,
// stride 2) -> relu -> 1x1 conv. Groups lined up with the blocks stay blocked (one
// conversion in, one out); groups that straddle a block, or more than four to a block,
// convert around the grouped conv.
Graph grouped_block(int64_t width, int64_t group_width) {
  Graph g;
  g.name = "grouped";
  ValueId x = g.add_input("x", TensorType{{1, 8, 8, 8}, f32});
  ValueId w1 = g.add_constant("w1", NDArray::random({width, 8, 1, 1}, f32, 1));
  ValueId wg = g.add_constant("wg", NDArray::random({width, group_width, 3, 3}, f32, 2));
  ValueId bg = g.add_constant("bg", NDArray::random({width}, f32, 3));
  ValueId w2 = g.add_constant("w2", NDArray::random({8, width, 1, 1}, f32, 4));
  g.add_node("conv1", "Conv", {}, {x, w1}, {"c1"});
  g.add_node("relu1", "Relu", {}, {g.find("c1")}, {"r1"});
  Attributes grouped = conv3x3();
  grouped.set("group", width / group_width);
  grouped.set("strides", std::vector<int64_t>{2, 2});
  g.add_node("gconv", "Conv", grouped, {g.find("r1"), wg, bg}, {"cg"});
  g.add_node("relu2", "Relu", {}, {g.find("cg")}, {"r2"});
  g.add_node("conv2", "Conv", {}, {g.find("r2"), w2}, {"y"});
  g.mark_output(g.find("y"));
  infer_types(g);
  g.verify();
  return g;
}

TEST(NchwcLayout, GroupedConvsLinedUpWithTheBlocksStayBlocked) {
  for (auto [width, group_width] : {std::pair<int64_t, int64_t>{24, 8}, {24, 4}, {32, 16}}) {
    SCOPED_TRACE(str("width ", width, ", group width ", group_width));
    Graph g = grouped_block(width, group_width);
    LayoutReport report = optimize_graph(g, {.nchwc_block = 8});
    EXPECT_EQ(report.blocked_convs, 3);
    EXPECT_EQ(report.conversions.size(), 2u);
    EXPECT_EQ(op_counts(g).count("Conv"), 0u);
    expect_blocked_matches_plain(grouped_block(width, group_width), Target::parse("llvm -mcpu=haswell"));
  }
  // Under blocks of 16: two groups of 8 to a block, 24 channels (a tail of 8).
  Graph g = grouped_block(24, 8);
  EXPECT_EQ(optimize_graph(g, {.nchwc_block = 16}).blocked_convs, 3);
  expect_blocked_matches_plain(grouped_block(24, 8), Target::parse("llvm -mcpu=haswell"), 1e-5,
                               parse_layout_choice("nchw16c"));
}

TEST(NchwcLayout, GroupedConvsAcrossBlocksConvertAroundThem) {
  // Out and back in around the grouped conv, out for y; in for conv1 where its 8 input
  // channels are a block (under 16 it reads the plain input).
  for (auto [width, group_width, block, conversions] :
       {std::tuple<int64_t, int64_t, int64_t, size_t>{24, 12, 8, 4}, {16, 2, 16, 3}}) {
    SCOPED_TRACE(str("width ", width, ", group width ", group_width, ", block ", block));
    Graph g = grouped_block(width, group_width);
    LayoutReport report = optimize_graph(g, {.nchwc_block = block});
    EXPECT_EQ(report.blocked_convs, 2);
    EXPECT_EQ(op_counts(g)["Conv"], 1);
    EXPECT_EQ(report.conversions.size(), conversions);
  }
  expect_blocked_matches_plain(grouped_block(24, 12), Target::parse("llvm -mcpu=haswell"));
}

// The plan marks the kernels that convert and says where; the blocked convs are tuning
// tasks of their own workloads.
TEST(NchwcLayout, ThePlanCountsItsConversions) {
  Graph g = residual_block(12, 20);
  PlanKernels planned = make_execution_plan(g, Target::parse("llvm -mcpu=haswell"), true, nullptr);
  EXPECT_EQ(planned.plan.layout, "NCHW8c");
  EXPECT_EQ(planned.plan.layout_conversions.size(), 2u);
  int conversions = 0;
  std::vector<std::string> workloads;
  for (const KernelCall& c : planned.plan.calls) {
    conversions += c.layout_conversion;
    if (!c.workload.empty()) workloads.push_back(c.workload);
  }
  EXPECT_EQ(conversions, 2);
  ASSERT_EQ(workloads.size(), 2u);
  EXPECT_EQ(workloads[0].rfind("conv2d_nchwc:N=1,C=12,H=6,W=6,K=20,", 0), 0u) << workloads[0];
  EXPECT_NE(workloads[0].find("in_block=8,out_block=8"), std::string::npos) << workloads[0];
  EXPECT_EQ(planned.plan.tasks, 2);
}

// GPU targets keep NCHW.
TEST(NchwcLayout, NoBlockForGpuTargets) {
  EXPECT_EQ(nchwc_block_for(Target::parse("cuda")), 0);
  EXPECT_EQ(nchwc_block_for(Target::parse("llvm -mcpu=haswell")), 8);
  EXPECT_EQ(nchwc_block_for(Target::parse("llvm -mcpu=skylake-avx512")), 16);
}

// --layout names a block or leaves it open; an open block has two candidates on CPUs of 8
// or 16 lanes, the target's vector first, and a fixed one only itself.
TEST(NchwcLayout, TheLayoutNamesItsBlockOrLeavesItOpen) {
  for (const char* name : {"nchwc", "nchw8c", "nchw16c", "nchwc-direct", "nchw8c-direct", "nchw16c-direct", "nchw"}) {
    EXPECT_EQ(parse_layout_choice(name).to_string(), name);
  }
  EXPECT_EQ(parse_layout_choice("nchw8c").block, 8);
  EXPECT_EQ(parse_layout_choice("nchw16c-direct").kind, LayoutChoice::BlockedDirect);
  EXPECT_EQ(parse_layout_choice("nchwc").block, 0);
  for (const char* bad : {"nchw12c", "nchw0c", "NCHW8c", "nchw8c-", ""}) {
    try {
      parse_layout_choice(bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("nchw8c or nchw16c"), std::string::npos) << e.what();
    }
  }
  Target avx512 = Target::parse("llvm -mcpu=skylake-avx512");
  Target avx2 = Target::parse("llvm -mcpu=haswell");
  EXPECT_EQ(nchwc_block_for(avx512, parse_layout_choice("nchw8c")), 8);
  EXPECT_EQ(nchwc_block_for(avx512, LayoutChoice::Nchw), 0);
  EXPECT_EQ(nchwc_block_candidates(avx512), (std::vector<int64_t>{16, 8}));
  EXPECT_EQ(nchwc_block_candidates(avx2), (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(nchwc_block_candidates(avx2, LayoutChoice::BlockedDirect), (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(nchwc_block_candidates(avx512, parse_layout_choice("nchw8c")), (std::vector<int64_t>{8}));
  EXPECT_EQ(nchwc_block_candidates(avx512, LayoutChoice::Nchw), (std::vector<int64_t>{0}));
  EXPECT_EQ(nchwc_block_candidates(Target::parse("cuda")), (std::vector<int64_t>{0}));
}

// Either block, fixed on this machine's target and on AVX2 (a block of 16 in two
// vectors), computes the plain graph's result, channel counts that fill neither block (12,
// 20) included; a block of more than two vectors is refused.
TEST(NchwcLayout, EachFixedBlockMatchesThePlainGraph) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "SKIP: this CPU has no AVX2";
  for (const char* target : {"llvm -mcpu=native", "llvm -mcpu=haswell"}) {
    for (int64_t block : kNchwcBlocks) {
      SCOPED_TRACE(str(target, ", block ", block));
      expect_blocked_matches_plain(residual_block(12, 20), Target::parse(target), 1e-5,
                                   LayoutChoice(LayoutChoice::Blocked, block));
    }
  }
  try {
    nchwc_block_for(Target::parse("llvm -mcpu=x86-64"), parse_layout_choice("nchw16c"));
    ADD_FAILURE() << "a block of 16 lanes on SSE was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("more than two of"), std::string::npos) << e.what();
  }
}

// MobileNetV2's inverted residual: x [1, C, size, size] -> 1x1 conv to E + bias -> Clip(0, 6)
// -> 3x3 depthwise conv (stride) + bias -> act ("relu6", "relu", "sigmoid" or none) -> 1x1
// conv to K + bias -> y. With read_twice the depthwise map is a graph output as well.
Graph inverted_residual(int64_t C, int64_t E, int64_t K, int64_t size, int64_t stride, const std::string& act,
                        bool read_twice = false) {
  Graph g;
  g.name = "inverted_residual";
  ValueId x = g.add_input("x", TensorType{{1, C, size, size}, f32});
  NDArray six = NDArray::zeros({}, f32);
  six.data_as<float>()[0] = 6.0f;
  ValueId lo = g.add_constant("lo", NDArray::zeros({}, f32));
  ValueId hi = g.add_constant("hi", six);
  g.add_node("expand", "Conv", {},
             {x, g.add_constant("we", NDArray::random({E, C, 1, 1}, f32, 1)),
              g.add_constant("be", NDArray::random({E}, f32, 2))},
             {"e"});
  g.add_node("expand_act", "Clip", {}, {g.find("e"), lo, hi}, {"ea"});
  Attributes depthwise = conv3x3();
  depthwise.set("group", E);
  depthwise.set("strides", std::vector<int64_t>{stride, stride});
  g.add_node("depthwise", "Conv", depthwise,
             {g.find("ea"), g.add_constant("wd", NDArray::random({E, 1, 3, 3}, f32, 3)),
              g.add_constant("bd", NDArray::random({E}, f32, 4))},
             {"d"});
  std::string map = "d";
  if (act == "relu6") g.add_node("depthwise_act", "Clip", {}, {g.find("d"), lo, hi}, {map = "da"});
  if (act == "relu") g.add_node("depthwise_act", "Relu", {}, {g.find("d")}, {map = "da"});
  if (act == "sigmoid") g.add_node("depthwise_act", "Sigmoid", {}, {g.find("d")}, {map = "da"});
  g.add_node("project", "Conv", {},
             {g.find(map), g.add_constant("wp", NDArray::random({K, E, 1, 1}, f32, 5)),
              g.add_constant("bp", NDArray::random({K}, f32, 6))},
             {"y"});
  g.mark_output(g.find("y"));
  if (read_twice) g.mark_output(g.find(map));
  infer_types(g);
  g.verify();
  return g;
}

// Each pair of a depthwise conv, its activation (Clip to [0, 6], Relu or none) and a 1x1
// conv becomes one node, stride 2 included, and computes what the plain graph does with
// channel counts that fill no block (12 in, 40 expanded, 20 out with blocks of 8); its
// task is the fused workload.
TEST(FuseDepthwisePointwise, PairsFuseAndMatchThePlainGraph) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "SKIP: this CPU has no AVX2";
  Target avx2 = Target::parse("llvm -mcpu=haswell");
  for (const char* act : {"relu6", "relu", ""}) {
    for (int64_t stride : {1, 2}) {
      SCOPED_TRACE(str("act '", act, "', stride ", stride));
      Graph g = inverted_residual(12, 40, 20, stride == 1 ? 16 : 29, stride, act);
      Graph optimized = g;
      optimize_graph(optimized, graph_passes_for(avx2, LayoutChoice::Blocked));
      std::map<std::string, int> ops = op_counts(optimized);
      EXPECT_EQ(ops["NchwcDepthwisePointwiseConv"], 1);
      EXPECT_EQ(ops["NchwcDepthwiseConv"], 0);
      EXPECT_EQ(ops["NchwcConv"], 1);  // the expansion
      EXPECT_EQ(ops["Clip"], 1);       // the expansion's
      EXPECT_EQ(ops["Relu"], 0);
      expect_blocked_matches_plain(g, avx2);
    }
  }
  std::vector<ExtractedTask> tasks = extract_tasks(inverted_residual(12, 40, 20, 16, 1, "relu6"), avx2);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[1].workload.to_string(),
            "depthwise_pointwise_nchwc:N=1,C=40,H=16,W=16,R=3,S=3,stride=1,pad=1,dilation=1,K=20,block=8,act=relu6,"
            "dtype=float32");
}

// Not fused: a depthwise map something else reads, an activation the fused op does not
// apply, and a 1x1 output of fewer rows than kMinFusedRows. Each still matches the plain graph.
TEST(FuseDepthwisePointwise, PairsThatMayNotFuseStayApart) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "SKIP: this CPU has no AVX2";
  Target avx2 = Target::parse("llvm -mcpu=haswell");
  for (const Graph& g : {inverted_residual(12, 40, 20, 16, 1, "relu6", true),
                         inverted_residual(12, 40, 20, 16, 1, "sigmoid"),
                         inverted_residual(12, 40, 20, kMinFusedRows - 1, 1, "relu6"),
                         inverted_residual(12, 40, 20, 2 * kMinFusedRows - 2, 2, "relu6")}) {
    Graph optimized = g;
    optimize_graph(optimized, graph_passes_for(avx2, LayoutChoice::Blocked));
    std::map<std::string, int> ops = op_counts(optimized);
    EXPECT_EQ(ops["NchwcDepthwisePointwiseConv"], 0);
    EXPECT_EQ(ops["NchwcDepthwiseConv"], 1);
    expect_blocked_matches_plain(g, avx2);
  }
}

}  // namespace
}  // namespace temper::graph
