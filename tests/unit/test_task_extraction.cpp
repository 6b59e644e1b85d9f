// Task extraction on graphs built by hand: identical convolutions merge with a count, a
// Gemm becomes a dense task, batch-norm folding leaves the conv's workload as it was and
// the BN out, batched MatMuls become matmul or batch_matmul tasks, row reductions and a
// transpose that is its group's kernel become the auto-scheduler's tasks (and a build runs
// them by their tasks' kernels), and nodes no task serves (a 1-D conv, a Gemm with transA,
// a MatMul whose batch broadcasts) are skipped with a reason.
#include <gtest/gtest.h>

#include <map>

#include "compiler/graph/executor.h"
#include "compiler/graph/shape_inference.h"
#include "compiler/graph/task_extraction.h"

namespace temper::graph {
namespace {

const DataType f32 = DataType::float32();

Attributes conv3x3_attrs() {
  Attributes conv;
  conv.set("kernel_shape", std::vector<int64_t>{3, 3});
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  return conv;
}

const std::string kConv =
    "conv2d:N=1,C=4,H=8,W=8,K=4,R=3,S=3,stride=1,pad=1,dilation=1,groups=1,layout=NCHW,dtype=float32";

// x -> conv_a -> relu -> conv_b (the same shape) -> flatten -> gemm(transB=1, bias) -> y;
// with_bn puts a BatchNormalization after conv_a.
Graph two_convs_and_a_gemm(bool with_bn) {
  Graph g;
  g.name = "tasks";
  ValueId x = g.add_input("x", TensorType{{1, 4, 8, 8}, f32});
  ValueId w1 = g.add_constant("w1", NDArray::random({4, 4, 3, 3}, f32, 1));
  ValueId w2 = g.add_constant("w2", NDArray::random({4, 4, 3, 3}, f32, 2));
  g.add_node("conv_a", "Conv", conv3x3_attrs(), {x, w1}, {"a"});
  ValueId a = g.find("a");
  if (with_bn) {
    ValueId gamma = g.add_constant("gamma", NDArray::random({4}, f32, 3, 0.5, 1.5));
    ValueId beta = g.add_constant("beta", NDArray::random({4}, f32, 4));
    ValueId mean = g.add_constant("mean", NDArray::random({4}, f32, 5));
    ValueId var = g.add_constant("var", NDArray::random({4}, f32, 6, 0.5, 2.0));
    g.add_node("bn", "BatchNormalization", {}, {a, gamma, beta, mean, var}, {"n"});
    a = g.find("n");
  }
  g.add_node("relu", "Relu", {}, {a}, {"r"});
  g.add_node("conv_b", "Conv", conv3x3_attrs(), {g.find("r"), w2}, {"b"});
  Attributes flatten;
  flatten.set("axis", int64_t{1});
  g.add_node("flatten", "Flatten", flatten, {g.find("b")}, {"f"});
  ValueId wfc = g.add_constant("wfc", NDArray::random({10, 256}, f32, 7));
  ValueId bfc = g.add_constant("bfc", NDArray::random({10}, f32, 8));
  Attributes gemm;
  gemm.set("transB", int64_t{1});
  g.add_node("fc", "Gemm", gemm, {g.find("f"), wfc, bfc}, {"y"});
  g.mark_output(g.find("y"));
  infer_types(g);
  return g;
}

TEST(ExtractTasks, IdenticalConvsMergeAndTheGemmIsDense) {
  std::vector<std::string> skipped;
  std::vector<ExtractedTask> tasks =
      extract_tasks(two_convs_and_a_gemm(false), Target::parse("llvm"), &skipped, LayoutChoice::Nchw);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].workload.to_string(), kConv);
  EXPECT_EQ(tasks[0].count, 2);
  EXPECT_EQ(tasks[0].nodes, (std::vector<std::string>{"conv_a", "conv_b"}));
  EXPECT_EQ(tasks[1].workload.to_string(), "dense:M=1,N=10,K=256,bias=1,act=none,dtype=float32");
  EXPECT_EQ(tasks[1].count, 1);
  EXPECT_EQ(tasks[1].nodes, (std::vector<std::string>{"fc"}));
  EXPECT_TRUE(skipped.empty());
}

TEST(ExtractTasks, BatchNormIsFoldedIntoTheConvFirst) {
  Graph g = two_convs_and_a_gemm(true);
  std::vector<ExtractedTask> tasks = extract_tasks(g, Target::parse("llvm"), nullptr, LayoutChoice::Nchw);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].workload.to_string(), kConv);
  EXPECT_EQ(tasks[0].count, 2);
  // The BN went into conv_a; the caller's graph still has it.
  EXPECT_EQ(tasks[0].nodes, (std::vector<std::string>{"conv_a", "conv_b"}));
  int bn_nodes = 0;
  for (const Node& n : g.nodes()) bn_nodes += n.op == "BatchNormalization";
  EXPECT_EQ(bn_nodes, 1);
}

TEST(ExtractTasks, StridedPaddedAndDepthwiseConvs) {
  Graph g;
  ValueId x = g.add_input("x", TensorType{{1, 8, 15, 15}, f32});
  Attributes strided;
  strided.set("kernel_shape", std::vector<int64_t>{3, 3});
  strided.set("strides", std::vector<int64_t>{2, 2});
  strided.set("auto_pad", std::string("SAME_UPPER"));
  g.add_node("strided", "Conv", strided, {x, g.add_constant("w", NDArray::random({16, 8, 3, 3}, f32, 1))}, {"s"});
  Attributes depthwise = conv3x3_attrs();
  depthwise.set("group", int64_t{8});
  g.add_node("dw", "Conv", depthwise, {x, g.add_constant("wd", NDArray::random({8, 1, 3, 3}, f32, 2))}, {"d"});
  g.mark_output(g.find("s"));
  g.mark_output(g.find("d"));
  infer_types(g);
  std::vector<ExtractedTask> tasks = extract_tasks(g, Target::parse("llvm"), nullptr, LayoutChoice::Nchw);
  ASSERT_EQ(tasks.size(), 2u);
  // SAME_UPPER over 15 with stride 2 and a 3x3 kernel pads 1 on each side.
  EXPECT_EQ(tasks[0].workload.to_string(),
            "conv2d:N=1,C=8,H=15,W=15,K=16,R=3,S=3,stride=2,pad=1,dilation=1,groups=1,layout=NCHW,dtype=float32");
  EXPECT_EQ(tasks[1].workload.to_string(),
            "depthwise_conv2d:N=1,C=8,H=15,W=15,R=3,S=3,multiplier=1,stride=1,pad=1,dilation=1,layout=NCHW,"
            "dtype=float32");
  // In the target's blocked layout (8 lanes with AVX2) the same convs are the blocked
  // workloads, reading the input converted once.
  tasks = extract_tasks(g, Target::parse("llvm -mcpu=haswell"));
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].workload.to_string(),
            "conv2d_nchwc:N=1,C=8,H=15,W=15,K=16,R=3,S=3,stride=2,pad=1,dilation=1,in_block=8,out_block=8,"
            "dtype=float32");
  EXPECT_EQ(tasks[1].workload.to_string(),
            "depthwise_conv2d_nchwc:N=1,C=8,H=15,W=15,R=3,S=3,stride=1,pad=1,dilation=1,block=8,dtype=float32");
}

TEST(ExtractTasks, UnsupportedNodesAreSkippedWithAReason) {
  Graph g;
  // Shape inference refuses 3-D convolutions; a 1-D one imports but is not tuned.
  ValueId x = g.add_input("x", TensorType{{1, 2, 8}, f32});
  Attributes conv1d;
  conv1d.set("kernel_shape", std::vector<int64_t>{3});
  g.add_node("conv1d", "Conv", conv1d, {x, g.add_constant("w", NDArray::random({2, 2, 3}, f32, 1))}, {"c"});
  ValueId a = g.add_input("a", TensorType{{6, 4}, f32});
  Attributes trans_a;
  trans_a.set("transA", int64_t{1});
  g.add_node("gemm_t", "Gemm", trans_a, {a, g.add_constant("b", NDArray::random({6, 5}, f32, 2))}, {"g"});
  ValueId p = g.add_input("p", TensorType{{2, 3, 4}, f32});
  g.add_node("broadcast", "MatMul", {}, {p, g.add_constant("q", NDArray::random({1, 4, 5}, f32, 3))}, {"m"});
  g.add_node("mm", "MatMul", {}, {a, g.add_constant("r", NDArray::random({4, 7}, f32, 4))}, {"n"});
  for (const char* out : {"c", "g", "m", "n"}) g.mark_output(g.find(out));
  infer_types(g);
  std::vector<std::string> skipped;
  std::vector<ExtractedTask> tasks = extract_tasks(g, Target::parse("llvm"), &skipped);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].workload.to_string(), "matmul:M=6,N=7,K=4,transpose_a=0,transpose_b=0,dtype=float32");
  ASSERT_EQ(skipped.size(), 3u);
  EXPECT_NE(skipped[0].find("node 'conv1d' (Conv): input float32[1,2,8]: "), std::string::npos) << skipped[0];
  EXPECT_NE(skipped[0].find("only 2-D convolutions"), std::string::npos) << skipped[0];
  EXPECT_NE(skipped[1].find("node 'gemm_t' (Gemm): transA=1"), std::string::npos) << skipped[1];
  EXPECT_NE(skipped[2].find("node 'broadcast' (MatMul)"), std::string::npos) << skipped[2];
  EXPECT_NE(skipped[2].find("batch extents that broadcast"), std::string::npos) << skipped[2];
}

// Batched MatMuls: activations times a 2-D weight fold their leading extents into M;
// equal batch extents (attention) make one batch_matmul over their product.
TEST(ExtractTasks, BatchedMatMulsAreMatmulOrBatchMatmul) {
  Graph g;
  ValueId x = g.add_input("x", TensorType{{1, 16, 32}, f32});
  g.add_node("proj", "MatMul", {}, {x, g.add_constant("w", NDArray::random({32, 48}, f32, 1))}, {"p"});
  ValueId q = g.add_input("q", TensorType{{1, 4, 16, 8}, f32});
  ValueId k = g.add_input("k", TensorType{{1, 4, 8, 16}, f32});
  g.add_node("scores", "MatMul", {}, {q, k}, {"s"});
  for (const char* out : {"p", "s"}) g.mark_output(g.find(out));
  infer_types(g);
  std::vector<ExtractedTask> tasks = extract_tasks(g, Target::parse("llvm"));
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].workload.to_string(), "matmul:M=16,N=48,K=32,transpose_a=0,transpose_b=0,dtype=float32");
  EXPECT_EQ(tasks[1].workload.to_string(), "batch_matmul:B=4,M=16,N=16,K=8,transpose_a=0,transpose_b=0,dtype=float32");
  // Run through their tasks' kernels, they give what the unfused graph gives.
  std::map<std::string, NDArray> inputs = {{"x", NDArray::random({1, 16, 32}, f32, 2)},
                                           {"q", NDArray::random({1, 4, 16, 8}, f32, 3)},
                                           {"k", NDArray::random({1, 4, 8, 16}, f32, 4)}};
  Target target = Target::parse("llvm");
  GraphExecutor tuned(g, target);
  EXPECT_EQ(tuned.plan().tasks, 2);
  std::vector<NDArray> expected = GraphExecutor(g, target, ExecutorOptions{.fuse = false}).run(inputs);
  std::vector<NDArray> actual = tuned.run(inputs);
  for (size_t o = 0; o < 2; ++o) {
    Comparison c = compare(actual[o], expected[o], 1e-5, 1e-5);
    EXPECT_TRUE(c.ok()) << "output " << o << ": " << c.message;
  }
}

// Softmax and LayerNormalization anchor their groups, as does a Transpose no injective
// chain takes in: each is a task of its op, which no template serves (the auto-scheduler
// tunes it), and a build computes it with the task's kernel. A Transpose after a Reshape
// is that Reshape's group's, no kernel of its own, and no task.
TEST(ExtractTasks, RowReductionsAndTransposesAreTasksOfTheirOps) {
  Graph g;
  ValueId x = g.add_input("x", TensorType{{2, 6, 8}, f32});
  Attributes last;
  last.set("axis", int64_t{-1});
  g.add_node("sm", "Softmax", last, {x}, {"s"});
  Attributes ln = last;
  ln.set("epsilon", 0.5);
  g.add_node("ln", "LayerNormalization", ln,
             {g.find("s"), g.add_constant("gamma", NDArray::random({8}, f32, 1)),
              g.add_constant("beta", NDArray::random({8}, f32, 2))},
             {"n"});
  Attributes perm;
  perm.set("perm", std::vector<int64_t>{1, 0, 2});
  g.add_node("t", "Transpose", perm, {g.find("n")}, {"t"});
  NDArray new_shape = NDArray::empty({3}, DataType::int64());
  for (int64_t d = 0; d < 3; ++d) new_shape.set(d, std::vector<double>{2, 12, 4}[d]);
  ValueId shape = g.add_constant("shape", new_shape);
  g.add_node("r", "Reshape", {}, {g.find("n"), shape}, {"r"});
  g.add_node("rt", "Transpose", perm, {g.find("r")}, {"rt"});
  for (const char* out : {"t", "rt"}) g.mark_output(g.find(out));
  g.opset = 13;
  infer_types(g);
  std::vector<ExtractedTask> tasks = extract_tasks(g, Target::parse("llvm"));
  std::vector<std::string> found;
  for (const ExtractedTask& t : tasks) found.push_back(t.workload.to_string());
  EXPECT_EQ(found, (std::vector<std::string>{"softmax:shape=2x6x8,axis=2,dtype=float32",
                                             "layer_norm:shape=2x6x8,axis=2,eps=0.5,dtype=float32",
                                             "transpose:shape=2x6x8,perm=1x0x2,dtype=float32"}));
  std::map<std::string, NDArray> inputs = {{"x", NDArray::random({2, 6, 8}, f32, 3)}};
  Target target = Target::parse("llvm");
  GraphExecutor built(g, target);
  EXPECT_EQ(built.plan().tasks, 3);
  std::vector<NDArray> expected = GraphExecutor(g, target, ExecutorOptions{.fuse = false}).run(inputs);
  std::vector<NDArray> actual = built.run(inputs);
  for (size_t o = 0; o < 2; ++o) {
    Comparison c = compare(actual[o], expected[o], 1e-5, 1e-5);
    EXPECT_TRUE(c.ok()) << "output " << o << ": " << c.message;
  }
}

TEST(ExtractTasks, AWorkloadNoTemplateServesIsSkipped) {
  // A grouped (not depthwise) convolution whose groups of 6 channels do not line up with
  // the blocks of 4 (a 128-bit vector): it stays plain, and the conv2d template serves
  // groups=1 only.
  Graph g;
  ValueId x = g.add_input("x", TensorType{{1, 12, 8, 8}, f32});
  Attributes grouped = conv3x3_attrs();
  grouped.set("group", int64_t{2});
  g.add_node("grouped", "Conv", grouped, {x, g.add_constant("w", NDArray::random({12, 6, 3, 3}, f32, 1))}, {"c"});
  g.mark_output(g.find("c"));
  infer_types(g);
  std::vector<std::string> skipped;
  EXPECT_TRUE(extract_tasks(g, Target::parse("llvm"), &skipped).empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("node 'grouped' (Conv): conv2d:N=1,C=12,H=8,W=8,K=12,R=3,S=3,stride=1,pad=1,dilation=1,"
                            "groups=2"),
            std::string::npos)
      << skipped[0];
  EXPECT_NE(skipped[0].find("groups=1 only"), std::string::npos) << skipped[0];
}

TEST(ExtractTasks, AGroupedConvLinedUpWithTheBlocksIsABlockedTask) {
  // RegNet's group width of 8 under AVX2's blocks of 8: each block is one group.
  Graph g;
  ValueId x = g.add_input("x", TensorType{{1, 24, 8, 8}, f32});
  Attributes grouped = conv3x3_attrs();
  grouped.set("group", int64_t{3});
  g.add_node("grouped", "Conv", grouped, {x, g.add_constant("w", NDArray::random({24, 8, 3, 3}, f32, 1))}, {"c"});
  g.mark_output(g.find("c"));
  infer_types(g);
  std::vector<ExtractedTask> tasks = extract_tasks(g, Target::parse("llvm -mcpu=haswell"));
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].workload.to_string(),
            "group_conv2d_nchwc:N=1,C=24,H=8,W=8,K=24,R=3,S=3,stride=1,pad=1,dilation=1,in_block=8,out_block=8,"
            "groups=3,dtype=float32");
}

// With the block open on an AVX-512 target the tasks are those of both blocks, 16 (the
// target's vector) first: each conv once per block, the Gemm once for both, and each
// way's counts those of extract_tasks with its block fixed.
TEST(ExtractTasks, AnOpenBlockGivesTheTasksOfEachCandidate) {
  Graph g = two_convs_and_a_gemm(false);
  Target target = Target::parse("llvm -mcpu=skylake-avx512");
  LayoutTasks model = extract_tasks_by_layout(g, target);
  ASSERT_EQ(model.layouts.size(), 2u);
  EXPECT_EQ(model.layouts[0].block, 16);
  EXPECT_EQ(model.layouts[1].block, 8);
  ASSERT_EQ(model.counts.size(), 2u);
  for (size_t w = 0; w < 2; ++w) {
    ASSERT_EQ(model.counts[w].size(), model.tasks.size());
    std::map<std::string, int> expected;
    for (const ExtractedTask& t : extract_tasks(g, target, nullptr, model.layouts[w])) {
      expected[t.workload.to_string()] = t.count;
    }
    std::map<std::string, int> got;
    for (size_t t = 0; t < model.tasks.size(); ++t) {
      if (model.counts[w][t] > 0) got[model.tasks[t].workload.to_string()] = model.counts[w][t];
    }
    EXPECT_EQ(got, expected) << model.layouts[w].to_string();
  }
  int shared = 0;
  for (size_t t = 0; t < model.tasks.size(); ++t) {
    bool in_both = model.counts[0][t] > 0 && model.counts[1][t] > 0;
    shared += in_both;
    EXPECT_EQ(in_both, model.tasks[t].workload.op == "dense") << model.tasks[t].workload.to_string();
  }
  EXPECT_EQ(shared, 1);
  // A fixed block, or NCHW, is one way.
  EXPECT_EQ(extract_tasks_by_layout(g, target, nullptr, parse_layout_choice("nchw8c")).layouts.size(), 1u);
  EXPECT_EQ(extract_tasks_by_layout(g, target, nullptr, LayoutChoice::Nchw).tasks.size(), 2u);
}

}  // namespace
}  // namespace temper::graph
