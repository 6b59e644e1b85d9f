// The graph passes on graphs built by hand: identity removal and batch-norm folding (the
// printed graph before and after), the fusion partition (exact node lists), and the fused
// executor against the unfused one on random inputs, with the number of kernels it calls.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "compiler/graph/executor.h"
#include "compiler/graph/fusion.h"
#include "compiler/graph/pass_fold_batch_norm.h"
#include "compiler/graph/pass_remove_identity.h"
#include "compiler/graph/shape_inference.h"

namespace temper::graph {
namespace {

const DataType f32 = DataType::float32();

TensorType f32_type(std::vector<int64_t> shape) {
  return TensorType{std::move(shape), f32};
}

NDArray int64_array(const std::vector<int64_t>& values) {
  NDArray a = NDArray::empty({static_cast<int64_t>(values.size())}, DataType::int64());
  for (size_t i = 0; i < values.size(); ++i) a.set(static_cast<int64_t>(i), static_cast<double>(values[i]));
  return a;
}

Attributes conv3x3_attrs() {
  Attributes conv;
  conv.set("kernel_shape", std::vector<int64_t>{3, 3});
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  return conv;
}

// Random inputs for every graph input (seeded by position), then the outputs of the
// unfused and the fused executor compared; returns the fused executor's kernel count. The
// fused one keeps NCHW, so that the counts are the fusion's alone (test_graph_layout
// covers the blocked layout).
int expect_fused_matches_unfused(const Graph& graph, int unfused_kernels) {
  std::map<std::string, NDArray> inputs;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value& v = graph.value(graph.inputs()[i]);
    inputs[v.name] = NDArray::random(v.type.shape, v.type.dtype, 100 + i);
  }
  Target target = Target::parse("llvm");
  GraphExecutor unfused(graph, target, ExecutorOptions{.fuse = false});
  GraphExecutor fused(graph, target, ExecutorOptions{.layout = LayoutChoice::Nchw});
  EXPECT_EQ(unfused.num_kernels(), unfused_kernels);
  std::vector<NDArray> expected = unfused.run(inputs);
  std::vector<NDArray> actual = fused.run(inputs);
  EXPECT_EQ(actual.size(), expected.size());
  for (size_t o = 0; o < std::min(actual.size(), expected.size()); ++o) {
    Comparison c = compare(actual[o], expected[o], 1e-5, 1e-6);
    EXPECT_TRUE(c.ok()) << "output " << o << ": " << c.message;
  }
  return fused.num_kernels();
}

TEST(RemoveIdentity, ConsumersReadTheSourceAndOutputsKeepTheirNames) {
  Graph g;
  g.name = "ids";
  ValueId x = g.add_input("x", f32_type({2, 3}));
  g.add_node("relu", "Relu", {}, {x}, {"r"});
  g.add_node("id0", "Identity", {}, {g.find("r")}, {"i"});
  g.add_node("sigmoid", "Sigmoid", {}, {g.find("i")}, {"s"});
  g.add_node("tanh", "Tanh", {}, {g.find("s")}, {"t"});
  g.add_node("id1", "Identity", {}, {g.find("s")}, {"y"});
  g.add_node("id2", "Identity", {}, {x}, {"x_copy"});
  g.mark_output(g.find("y"));
  g.mark_output(g.find("t"));
  g.mark_output(g.find("x_copy"));
  infer_types(g);
  Graph before = g;

  EXPECT_EQ(remove_identity(g), 2);
  g.verify();
  // id1's output is a graph output: Sigmoid now writes %y and Tanh reads it; id2 copies a
  // graph input, so it stays.
  EXPECT_EQ(g.to_string(),
            "graph ids\n"
            "input %x : float32[2,3]\n"
            "%r = Relu(%x) : float32[2,3]\n"
            "%y = Sigmoid(%r) : float32[2,3]\n"
            "%t = Tanh(%y) : float32[2,3]\n"
            "%x_copy = Identity(%x) : float32[2,3]\n"
            "output %y\n"
            "output %t\n"
            "output %x_copy\n");
  // Fused: Relu+Sigmoid; Tanh reads the graph output %y, so it is a kernel of its own; the copy.
  EXPECT_EQ(expect_fused_matches_unfused(before, 6), 3);
}

// Exporters write a Pad of zero pads before a pool (torchvision's DenseNet) and a Dropout
// that inference passes through: both go like an Identity; a Pad that pads stays.
TEST(RemoveIdentity, ZeroPadAndDropoutPassTheirInputThrough) {
  Graph g;
  g.name = "noops";
  ValueId x = g.add_input("x", f32_type({1, 2, 3, 3}));
  ValueId zeros = g.add_constant("zeros", int64_array({0, 0, 0, 0, 0, 0, 0, 0}));
  ValueId ones = g.add_constant("ones", int64_array({0, 0, 1, 1, 0, 0, 1, 1}));
  g.add_node("relu", "Relu", {}, {x}, {"r"});
  g.add_node("pad0", "Pad", {}, {g.find("r"), zeros}, {"p0"});
  g.add_node("drop", "Dropout", {}, {g.find("p0")}, {"d"});
  g.add_node("pad1", "Pad", {}, {g.find("d"), ones}, {"y"});
  g.mark_output(g.find("y"));
  infer_types(g);
  Graph before = g;

  EXPECT_EQ(remove_identity(g), 2);
  g.verify();
  EXPECT_EQ(g.to_string(),
            "graph noops\n"
            "input %x : float32[1,2,3,3]\n"
            "const %ones : int64[8]\n"
            "%r = Relu(%x) : float32[1,2,3,3]\n"
            "%y = Pad(%r, %ones) : float32[1,2,5,5]\n"
            "output %y\n");
  EXPECT_EQ(expect_fused_matches_unfused(before, 4), 1);  // Relu and the Pad that pads, fused
}

// x -> Conv(w, b) -> BatchNormalization -> Relu -> y
Graph conv_bn_relu(bool conv_output_also_read) {
  Graph g;
  g.name = "cbr";
  ValueId x = g.add_input("x", f32_type({1, 3, 6, 6}));
  ValueId w = g.add_constant("w", NDArray::random({4, 3, 3, 3}, f32, 1));
  ValueId b = g.add_constant("b", NDArray::random({4}, f32, 2));
  g.add_node("conv", "Conv", conv3x3_attrs(), {x, w, b}, {"c"});
  ValueId gamma = g.add_constant("gamma", NDArray::random({4}, f32, 3, 0.5, 1.5));
  ValueId beta = g.add_constant("beta", NDArray::random({4}, f32, 4));
  ValueId mean = g.add_constant("mean", NDArray::random({4}, f32, 5));
  ValueId var = g.add_constant("var", NDArray::random({4}, f32, 6, 0.5, 2.0));
  Attributes bn;
  bn.set("epsilon", 1e-3);
  g.add_node("bn", "BatchNormalization", bn, {g.find("c"), gamma, beta, mean, var}, {"n"});
  g.add_node("relu", "Relu", {}, {g.find("n")}, {"y"});
  g.mark_output(g.find("y"));
  if (conv_output_also_read) {
    g.add_node("sig", "Sigmoid", {}, {g.find("c")}, {"s"});
    g.mark_output(g.find("s"));
  }
  infer_types(g);
  return g;
}

TEST(FoldBatchNorm, ScalesTheConvWeightsAndBias) {
  Graph g = conv_bn_relu(false);
  EXPECT_EQ(fold_batch_norm(g), 1);
  g.verify();
  EXPECT_EQ(g.to_string(),
            "graph cbr\n"
            "input %x : float32[1,3,6,6]\n"
            "const %conv_bn_weight : float32[4,3,3,3]\n"
            "const %conv_bn_bias : float32[4]\n"
            "%n = Conv(%x, %conv_bn_weight, %conv_bn_bias) {kernel_shape=[3,3], pads=[1,1,1,1]} : float32[1,4,6,6]\n"
            "%y = Relu(%n) : float32[1,4,6,6]\n"
            "output %y\n");
  // Channel 2's first weight and its bias, from the formula.
  Graph original = conv_bn_relu(false);
  auto constant = [&](const char* name) { return *original.value(original.find(name)).constant; };
  double s = constant("gamma").get(2) / std::sqrt(constant("var").get(2) + 1e-3);
  EXPECT_NEAR(g.value(g.find("conv_bn_weight")).constant->get(2 * 27), constant("w").get(2 * 27) * s, 1e-6);
  EXPECT_NEAR(g.value(g.find("conv_bn_bias")).constant->get(2),
              (constant("b").get(2) - constant("mean").get(2)) * s + constant("beta").get(2), 1e-6);
}

TEST(FoldBatchNorm, LeavesAConvWhoseOutputIsReadElsewhere) {
  Graph g = conv_bn_relu(true);
  std::string before = g.to_string();
  EXPECT_EQ(fold_batch_norm(g), 0);
  EXPECT_EQ(g.to_string(), before);
}

// A conv, Gemm or MatMul is a tuning task: its group runs as the task's kernel with the
// rest (the folded bias and what fused after it) moved into its loops.
TEST(FusedExecutor, ConvBatchNormReluIsOneKernel) {
  EXPECT_EQ(expect_fused_matches_unfused(conv_bn_relu(false), 3), 1);
  // The conv's output has two readers (BN and Sigmoid): BN is not folded and neither
  // joins the conv; BN (a broadcast) and Relu make one group.
  EXPECT_EQ(expect_fused_matches_unfused(conv_bn_relu(true), 4), 3);
}

TEST(FusedExecutor, GemmAddReluIsOneKernel) {
  Graph g;
  ValueId a = g.add_input("a", f32_type({5, 8}));
  ValueId w = g.add_constant("w", NDArray::random({8, 16}, f32, 7));
  ValueId bias = g.add_constant("bias", NDArray::random({16}, f32, 8));
  g.add_node("gemm", "Gemm", {}, {a, w}, {"mm"});
  g.add_node("add", "Add", {}, {g.find("mm"), bias}, {"sum"});
  g.add_node("relu", "Relu", {}, {g.find("sum")}, {"y"});
  g.mark_output(g.find("y"));
  infer_types(g);
  EXPECT_EQ(expect_fused_matches_unfused(g, 3), 1);
}

TEST(FusedExecutor, InjectiveChainIsOneKernel) {
  Graph g;
  ValueId x = g.add_input("x", f32_type({2, 12}));
  ValueId z = g.add_input("z", f32_type({4, 3}));
  ValueId shape = g.add_constant("shape", int64_array({2, 3, 4}));
  g.add_node("reshape", "Reshape", {}, {x, shape}, {"r"});
  Attributes perm;
  perm.set("perm", std::vector<int64_t>{0, 2, 1});
  g.add_node("transpose", "Transpose", perm, {g.find("r")}, {"t"});
  g.add_node("add", "Add", {}, {g.find("t"), z}, {"y"});
  g.mark_output(g.find("y"));
  infer_types(g);
  EXPECT_EQ(expect_fused_matches_unfused(g, 3), 1);
}

TEST(FusedExecutor, SoftmaxTakesTheMulAfterIt) {
  Graph g;
  ValueId x = g.add_input("x", f32_type({3, 10}));
  ValueId m = g.add_input("m", f32_type({3, 10}));
  g.add_node("softmax", "Softmax", {}, {x}, {"p"});
  g.add_node("mul", "Mul", {}, {g.find("p"), m}, {"y"});
  g.mark_output(g.find("y"));
  infer_types(g);
  EXPECT_EQ(expect_fused_matches_unfused(g, 2), 1);
}

// 0 Conv, 1 Add, 2 Relu -> r, read by 3 Sigmoid and 4 Reshape; 5 Transpose; 6 Softmax;
// 7 Mul -> y1 (an output, also read by 9 Sqrt); 8 Tanh(Sigmoid's output) -> y2.
Graph branching_graph() {
  Graph g;
  g.name = "branches";
  ValueId x = g.add_input("x", f32_type({1, 3, 4, 4}));
  ValueId w = g.add_constant("w", NDArray::random({4, 3, 3, 3}, f32, 9));
  ValueId b = g.add_constant("b", NDArray::random({4, 1, 1}, f32, 10));
  ValueId shape = g.add_constant("shape", int64_array({1, 4, 16}));
  ValueId k = g.add_constant("k", NDArray::random({4}, f32, 11, 0.5, 1.5));
  g.add_node("conv", "Conv", conv3x3_attrs(), {x, w}, {"c"});
  g.add_node("add", "Add", {}, {g.find("c"), b}, {"a"});
  g.add_node("relu", "Relu", {}, {g.find("a")}, {"r"});
  g.add_node("sigmoid", "Sigmoid", {}, {g.find("r")}, {"s"});
  g.add_node("reshape", "Reshape", {}, {g.find("r"), shape}, {"rs"});
  Attributes perm;
  perm.set("perm", std::vector<int64_t>{0, 2, 1});
  g.add_node("transpose", "Transpose", perm, {g.find("rs")}, {"t"});
  g.add_node("softmax", "Softmax", {}, {g.find("t")}, {"sm"});
  g.add_node("mul", "Mul", {}, {g.find("sm"), k}, {"y1"});
  g.add_node("tanh", "Tanh", {}, {g.find("s")}, {"y2"});
  g.add_node("sqrt", "Sqrt", {}, {g.find("y1")}, {"y3"});
  g.mark_output(g.find("y1"));
  g.mark_output(g.find("y2"));
  g.mark_output(g.find("y3"));
  infer_types(g);
  return g;
}

TEST(PartitionForFusion, GroupsFollowThePatternRules) {
  Graph g = branching_graph();
  std::vector<FusedGroup> groups = partition_for_fusion(g);
  std::vector<std::vector<int>> nodes;
  std::vector<int> anchors;
  for (const FusedGroup& group : groups) {
    nodes.push_back(group.nodes);
    anchors.push_back(group.anchor);
  }
  // The conv takes Add and Relu; Relu's two users start groups of their own (Reshape,
  // injective, does not join a conv); Transpose joins Reshape; Softmax takes Mul; Sqrt
  // reads a graph output, so it stands alone. Ordered by last node.
  EXPECT_EQ(nodes, (std::vector<std::vector<int>>{{0, 1, 2}, {4, 5}, {6, 7}, {3, 8}, {9}}));
  EXPECT_EQ(anchors, (std::vector<int>{0, 4, 6, 3, 9}));
}

TEST(PartitionForFusion, BranchingGraphRunsFusedAsUnfused) {
  EXPECT_EQ(expect_fused_matches_unfused(branching_graph(), 10), 5);
}

}  // namespace
}  // namespace temper::graph
