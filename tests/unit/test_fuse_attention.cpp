// The attention fusion pass (pass_fuse_attention.h) on graphs built by hand: the chain an
// exporter writes -- MatMul, a scale (Div or Mul by a constant, or none), a per-key mask
// Add (or none), Softmax over the keys, MatMul -- becomes one Attention node, the heads'
// transposes around it go into it, near misses stay as they are, and a build of the fused
// graph, which computes the Attention with the
// attention task's kernel, agrees with the unfused graph run node by node. A model job's
// tasks then include the attention, and a GPU target's keep the two batch_matmuls.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "compiler/graph/executor.h"
#include "compiler/graph/optimize.h"
#include "compiler/graph/pass_fuse_attention.h"
#include "compiler/graph/shape_inference.h"
#include "compiler/graph/task_extraction.h"

namespace temper::graph {
namespace {

const DataType f32 = DataType::float32();

TensorType f32_type(std::vector<int64_t> shape) {
  return TensorType{std::move(shape), f32};
}

NDArray scalar(double value) {
  NDArray a = NDArray::empty({}, f32);
  a.set(0, value);
  return a;
}

std::vector<std::string> ops(const Graph& graph) {
  std::vector<std::string> found;
  for (const Node& node : graph.nodes()) found.push_back(node.op);
  return found;
}

// How the attention chain is written.
struct AttentionForm {
  std::vector<int64_t> batch = {1, 2};  // leading extents of q, kt, v
  int64_t S = 6, T = 5, D = 4, E = 3;
  std::string scale_op = "Div";  // "Div", "Mul", or "" for none
  bool constant_first = false;   // Mul(c, s), Add(m, s)
  bool mask = true;
  std::vector<int64_t> mask_shape = {1, 1, 1, 5};
  int64_t softmax_axis = -1;
  bool scores_is_output = false;  // the scaled scores are also a graph output
  bool scale_q_first = false;     // Div(q, c) before the product instead of after it
};

// q, kt, v (and mask) inputs -> attention of `form` -> out
Graph attention_graph(const AttentionForm& form) {
  Graph g;
  g.name = "attention";
  auto with = [&](std::vector<int64_t> last) {
    std::vector<int64_t> shape = form.batch;
    shape.insert(shape.end(), last.begin(), last.end());
    return f32_type(shape);
  };
  ValueId q = g.add_input("q", with({form.S, form.D}));
  ValueId kt = g.add_input("kt", with({form.D, form.T}));
  ValueId v = g.add_input("v", with({form.T, form.E}));
  auto node = [&](const std::string& op, std::vector<ValueId> inputs, const std::string& out, Attributes attrs = {}) {
    g.add_node(out, op, std::move(attrs), std::move(inputs), {out});
    return g.find(out);
  };
  if (form.scale_q_first) q = node("Div", {q, g.add_constant("cq", scalar(2.0))}, "q_scaled");
  ValueId s = node("MatMul", {q, kt}, "scores");
  if (!form.scale_op.empty()) {
    ValueId c = g.add_constant("c", scalar(form.scale_op == "Div" ? 2.0 : 0.5));
    s = node(form.scale_op, form.constant_first && form.scale_op == "Mul" ? std::vector{c, s} : std::vector{s, c},
             "scaled");
  }
  if (form.scores_is_output) g.mark_output(s);
  if (form.mask) {
    ValueId m = g.add_input("mask", f32_type(form.mask_shape));
    s = node("Add", form.constant_first ? std::vector{m, s} : std::vector{s, m}, "masked");
  }
  Attributes axis;
  axis.set("axis", form.softmax_axis);
  ValueId p = node("Softmax", {s}, "probs", axis);
  g.mark_output(node("MatMul", {p, v}, "out"));
  g.opset = 13;
  infer_types(g);
  g.verify();
  return g;
}

std::map<std::string, NDArray> random_inputs(const Graph& g) {
  std::map<std::string, NDArray> inputs;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    inputs[v.name] = NDArray::random(v.type.shape, v.type.dtype, 300 + i, -2.0, 2.0);
  }
  return inputs;
}

// The fused graph, built with its kernels (the Attention by the attention task's default
// schedule), against the graph run node by node as it was given.
void expect_build_matches_unfused(const Graph& g) {
  std::map<std::string, NDArray> inputs = random_inputs(g);
  Target target = Target::parse("llvm");
  std::vector<NDArray> expected = GraphExecutor(g, target, ExecutorOptions{.fuse = false}).run(inputs);
  GraphExecutor fused(g, target);
  std::vector<NDArray> actual = fused.run(inputs);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t o = 0; o < actual.size(); ++o) {
    Comparison c = compare(actual[o], expected[o], 1e-4, 1e-5);
    EXPECT_TRUE(c.ok()) << "output " << o << ": " << c.message;
  }
  bool attention_kernel = false;
  for (const KernelCall& call : fused.plan().calls) attention_kernel |= call.workload.rfind("attention:", 0) == 0;
  EXPECT_TRUE(attention_kernel) << "no kernel runs the attention task";
}

void expect_fused(const AttentionForm& form, double scale) {
  Graph g = attention_graph(form);
  Graph after = g;
  EXPECT_EQ(fuse_attention(after), 1);
  after.verify();
  ASSERT_EQ(ops(after), std::vector<std::string>{"Attention"});
  const Node& node = after.nodes()[0];
  EXPECT_EQ(after.value(node.outputs[0]).name, "out");
  EXPECT_DOUBLE_EQ(node.attrs.get_float_or("scale", 0), scale);
  EXPECT_EQ(node.inputs.size(), form.mask ? 4u : 3u);
  expect_build_matches_unfused(g);
}

void expect_left_alone(const AttentionForm& form) {
  Graph g = attention_graph(form);
  std::string before = g.to_string();
  EXPECT_EQ(fuse_attention(g), 0);
  EXPECT_EQ(g.to_string(), before);
}

TEST(FuseAttention, ScaledMaskedChainBecomesOneNode) {
  expect_fused(AttentionForm{}, 0.5);
}

TEST(FuseAttention, ScaleByMulEitherOrderOrNoneAndNoMask) {
  expect_fused(AttentionForm{.scale_op = "Mul"}, 0.5);
  expect_fused(AttentionForm{.scale_op = "Mul", .constant_first = true}, 0.5);
  expect_fused(AttentionForm{.scale_op = "", .mask = false}, 1.0);
  // q divided before the product, as some exporters write it; and both.
  expect_fused(AttentionForm{.scale_op = "", .scale_q_first = true}, 0.5);
  expect_fused(AttentionForm{.scale_q_first = true}, 0.25);
}

TEST(FuseAttention, MasksPerBatchEntryAndOfLowerRank) {
  // [N, 1, 1, T] over N x heads: batch entry b reads mask row b / heads.
  expect_fused(AttentionForm{.batch = {3, 2}, .mask_shape = {3, 1, 1, 5}}, 0.5);
  // One row for every head and batch entry, and a [T] mask broadcast to all.
  expect_fused(AttentionForm{.mask_shape = {1, 2, 1, 5}}, 0.5);
  expect_fused(AttentionForm{.mask_shape = {5}}, 0.5);
  // Rank-3 q, kt, v (the heads already flattened into the batch).
  expect_fused(AttentionForm{.batch = {4}, .mask_shape = {4, 1, 5}}, 0.5);
}

TEST(FuseAttention, NearMissesAreLeftAlone) {
  expect_left_alone(AttentionForm{.softmax_axis = 2});               // a softmax over the queries
  expect_left_alone(AttentionForm{.mask_shape = {1, 1, 6, 5}});       // a mask per query row (causal)
  expect_left_alone(AttentionForm{.batch = {3, 2}, .mask_shape = {1, 2, 1, 5}});  // heads but not batch
  expect_left_alone(AttentionForm{.scores_is_output = true});        // the scores are read elsewhere
}

// The exporters' form: the projections [N, S, H*D] reshaped to [N, S, H, D] and transposed
// to the heads, the keys to [N, H, D, T]; the output transposed back and reshaped to
// [N, S, H*E]. keep_v_transpose: V's transpose is also a graph output (so it stays).
Graph heads_graph(bool keep_v_transpose = false) {
  const int64_t N = 2, S = 6, H = 3, D = 4;
  Graph g;
  g.name = "heads";
  auto node = [&](const std::string& op, std::vector<ValueId> inputs, const std::string& out, Attributes attrs = {}) {
    g.add_node(out, op, std::move(attrs), std::move(inputs), {out});
    return g.find(out);
  };
  auto shape = [&](const std::string& name, std::vector<int64_t> dims) {
    NDArray a = NDArray::empty({static_cast<int64_t>(dims.size())}, DataType::int64());
    for (size_t d = 0; d < dims.size(); ++d) a.set(static_cast<int64_t>(d), static_cast<double>(dims[d]));
    return g.add_constant(name, a);
  };
  ValueId heads = shape("heads", {N, S, H, D});
  auto to_heads = [&](const std::string& name, std::vector<int64_t> perm) {
    ValueId x = g.add_input(name, f32_type({N, S, H * D}));
    Attributes p;
    p.set("perm", perm);
    return node("Transpose", {node("Reshape", {x, heads}, name + "_4d")}, name + "_t", p);
  };
  ValueId q = to_heads("q", {0, 2, 1, 3});
  ValueId kt = to_heads("k", {0, 2, 3, 1});
  ValueId v = to_heads("v", {0, 2, 1, 3});
  if (keep_v_transpose) g.mark_output(v);
  ValueId s = node("Div", {node("MatMul", {q, kt}, "scores"), g.add_constant("c", scalar(2.0))}, "scaled");
  s = node("Add", {s, g.add_input("mask", f32_type({N, 1, 1, S}))}, "masked");
  Attributes axis;
  axis.set("axis", int64_t{-1});
  ValueId o = node("MatMul", {node("Softmax", {s}, "probs", axis), v}, "context");
  Attributes back;
  back.set("perm", std::vector<int64_t>{0, 2, 1, 3});
  ValueId merged = node("Reshape", {node("Transpose", {o}, "context_t", back), shape("merged", {N, S, H * D})}, "out");
  g.mark_output(merged);
  g.opset = 13;
  infer_types(g);
  g.verify();
  return g;
}

TEST(FuseAttention, TheHeadsTransposesGoIntoTheAttention) {
  Graph g = heads_graph();
  Graph after = g;
  EXPECT_EQ(fuse_attention(after), 1);
  after.verify();
  EXPECT_EQ(ops(after), (std::vector<std::string>{"Reshape", "Reshape", "Reshape", "Attention", "Reshape"}));
  const Node& attention = after.nodes()[3];
  EXPECT_EQ(attention.attrs.get_int_or("heads", 0), 3);
  EXPECT_EQ(after.value(attention.outputs[0]).name, "context_t");
  EXPECT_EQ(after.value(attention.outputs[0]).type.shape, (std::vector<int64_t>{2, 6, 3, 4}));
  expect_build_matches_unfused(g);
  std::vector<ExtractedTask> tasks = extract_tasks(g, Target::parse("llvm"));
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].workload.to_string(),
            "attention:B=6,S=6,T=6,D=4,E=4,scale=0.5,mask_rows=2,heads=3,dtype=float32");
}

TEST(FuseAttention, AHeadsTransposeReadElsewhereKeepsTheTransposedForm) {
  Graph after = heads_graph(/*keep_v_transpose=*/true);
  EXPECT_EQ(fuse_attention(after), 1);
  std::vector<std::string> found = ops(after);
  EXPECT_EQ(std::count(found.begin(), found.end(), "Transpose"), 4);
  for (const Node& n : after.nodes()) {
    if (n.op == "Attention") {
      EXPECT_FALSE(n.attrs.has("heads"));
    }
  }
  expect_build_matches_unfused(heads_graph(true));
}

TEST(FuseAttention, ModelTasksIncludeTheAttentionOnCpusAlone) {
  Graph g = attention_graph(AttentionForm{});
  std::vector<ExtractedTask> cpu = extract_tasks(g, Target::parse("llvm"));
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0].workload.to_string(),
            "attention:B=2,S=6,T=5,D=4,E=3,scale=0.5,mask_rows=1,heads=0,dtype=float32");
  // The attention template is a CPU one: a GPU build keeps the batched products.
  Graph gpu = g;
  optimize_graph(gpu, graph_passes_for(Target::parse("cuda -arch=sm_90"), LayoutChoice::Blocked));
  std::vector<std::string> gpu_ops = ops(gpu);
  EXPECT_EQ(std::count(gpu_ops.begin(), gpu_ops.end(), "Attention"), 0);
  EXPECT_EQ(std::count(gpu_ops.begin(), gpu_ops.end(), "MatMul"), 2);
}

}  // namespace
}  // namespace temper::graph
