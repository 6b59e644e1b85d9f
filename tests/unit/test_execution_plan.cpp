// Execution plans: epilogue fusion into a template's schedule, the memory plan (intermediates share blocks, and no two
// arrays live in one block at once), the schedules of tuning tasks asked of a ScheduleSource, and a model exported as a
// library, plan and weights, loaded back and run with the same results; damaged, truncated and mismatched files are
// refused with a clear message.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>

#include "compiler/codegen/build.h"
#include "compiler/graph/epilogue_fusion.h"
#include "compiler/graph/executor.h"
#include "compiler/graph/memory_plan.h"
#include "compiler/graph/shape_inference.h"
#include "compiler/ir/functor.h"
#include "compiler/runtime/file_io.h"
#include "schedule_space/template.h"
#include "tests/user_error_test_util.h"

namespace temper::graph {
namespace {

namespace fs = std::filesystem;
using testing_util::expect_user_error;

const DataType f32 = DataType::float32();

// x -> relu -> sigmoid -> tanh -> sqrt -> sigmoid -> y: a chain whose intermediates each
// die at the next node.
Graph chain_graph() {
  Graph g;
  ValueId v = g.add_input("x", TensorType{{4, 256}, f32});
  const char* ops[] = {"Relu", "Sigmoid", "Tanh", "Sqrt", "Sigmoid"};
  for (int i = 0; i < 5; ++i) {
    std::string out = i == 4 ? "y" : str("t", i);
    g.add_node(str("n", i), ops[i], {}, {v}, {out});
    v = g.find(out);
  }
  g.mark_output(v);
  infer_types(g);
  return g;
}

// A conv with bias and relu, then a Gemm: two tuning tasks with epilogues.
Graph conv_gemm_graph() {
  Graph g;
  ValueId x = g.add_input("x", TensorType{{1, 3, 8, 8}, f32});
  Attributes conv;
  conv.set("kernel_shape", std::vector<int64_t>{3, 3});
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  g.add_node("conv", "Conv", conv,
             {x, g.add_constant("w", NDArray::random({4, 3, 3, 3}, f32, 1)),
              g.add_constant("b", NDArray::random({4}, f32, 2))},
             {"c"});
  g.add_node("relu", "Relu", {}, {g.find("c")}, {"r"});
  Attributes flat;
  flat.set("axis", int64_t{1});
  g.add_node("flatten", "Flatten", flat, {g.find("r")}, {"f"});
  Attributes trans_b;
  trans_b.set("transB", int64_t{1});
  g.add_node("fc", "Gemm", trans_b,
             {g.find("f"), g.add_constant("wfc", NDArray::random({5, 256}, f32, 3)),
              g.add_constant("bfc", NDArray::random({5}, f32, 4))},
             {"y"});
  g.mark_output(g.find("y"));
  infer_types(g);
  return g;
}

// Every block holds at most one live array at a time: replays the calls with each
// intermediate's lifetime from its writing call to its last reading call.
void expect_no_overlap(const ExecutionPlan& plan) {
  std::vector<int> first(plan.arrays.size(), -1), last(plan.arrays.size(), -1);
  for (int c = 0; c < static_cast<int>(plan.calls.size()); ++c) {
    for (int id : plan.calls[c].args) {
      if (first[id] < 0) first[id] = c;
      last[id] = c;
    }
  }
  for (size_t a = 0; a < plan.arrays.size(); ++a) {
    for (size_t b = a + 1; b < plan.arrays.size(); ++b) {
      const PlannedArray& x = plan.arrays[a];
      const PlannedArray& y = plan.arrays[b];
      if (x.storage < 0 || x.storage != y.storage) continue;
      bool disjoint = last[a] < first[b] || last[b] < first[a];
      EXPECT_TRUE(disjoint) << x.name << " and " << y.name << " share block " << x.storage << " while both live";
    }
  }
}

std::map<std::string, NDArray> random_inputs(const Graph& g) {
  std::map<std::string, NDArray> inputs;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    inputs[v.name] = NDArray::random(v.type.shape, v.type.dtype, 50 + i);
  }
  return inputs;
}

void expect_same(const std::vector<NDArray>& actual, const std::vector<NDArray>& expected, double rtol = 1e-5) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t o = 0; o < actual.size(); ++o) {
    Comparison c = compare(actual[o], expected[o], rtol, 1e-6);
    EXPECT_TRUE(c.ok()) << "output " << o << ": " << c.message;
  }
}

TEST(ExecutionPlan, AGpuTargetIsRefusedForAWholeModel) {
  Graph g = chain_graph();
  expect_user_error(
      [&] { GraphExecutor(g, Target::parse("opencl")); },
      {"whole models run on CPU targets (llvm, c) for now, not 'opencl'", "temper run WORKLOAD --target opencl"});
}

TEST(MemoryPlan, AChainOfIntermediatesTakesTwoBlocks) {
  Graph g = chain_graph();
  GraphExecutor exec(g, Target::parse("llvm"), ExecutorOptions{.fuse = false});
  const ExecutionPlan& plan = exec.plan();
  ASSERT_EQ(plan.calls.size(), 5u);
  // t0..t3, 4 KB each: a call reads one while writing the next, so two blocks serve all.
  EXPECT_EQ(plan.storage_bytes, (std::vector<int64_t>{4096, 4096}));
  EXPECT_EQ(unplanned_intermediate_bytes(plan), 4 * 4096);
  expect_no_overlap(plan);
  // The output is the caller's, never a block.
  const PlannedArray& y = plan.arrays[plan.outputs[0]];
  EXPECT_EQ(y.name, "y");
  EXPECT_EQ(y.kind, PlannedArray::Kind::Output);
  EXPECT_EQ(y.storage, -1);
  std::vector<NDArray> out = exec.run(random_inputs(g));
  NDArray x = random_inputs(g).at("x");
  for (int64_t i = 0; i < x.size(); i += 97) {
    double v = std::sqrt(std::tanh(1.0 / (1.0 + std::exp(-std::max(0.0, x.get(i))))));
    v = 1.0 / (1.0 + std::exp(-v));
    EXPECT_NEAR(out[0].get(i), v, 1e-6) << i;
  }
}

TEST(MemoryPlan, ABlockGrowsForALargerArrayAndDifferentSizesNeverOverlap) {
  Graph g;
  ValueId x = g.add_input("x", TensorType{{8, 8}, f32});
  g.add_node("small", "Relu", {}, {x}, {"s"});
  Attributes axes;
  axes.set("perm", std::vector<int64_t>{1, 0});
  g.add_node("t", "Transpose", axes, {g.find("s")}, {"t"});
  g.add_node("cat", "Concat",
             [] {
               Attributes a;
               a.set("axis", int64_t{0});
               return a;
             }(),
             {g.find("t"), g.find("t"), g.find("t")}, {"big"});
  g.add_node("sig", "Sigmoid", {}, {g.find("big")}, {"big2"});
  g.add_node("out", "Tanh", {}, {g.find("big2")}, {"y"});
  g.mark_output(g.find("y"));
  infer_types(g);
  GraphExecutor exec(g, Target::parse("llvm"), ExecutorOptions{.fuse = false});
  expect_no_overlap(exec.plan());
  int64_t planned = std::accumulate(exec.plan().storage_bytes.begin(), exec.plan().storage_bytes.end(), int64_t{0});
  EXPECT_LT(planned, unplanned_intermediate_bytes(exec.plan()));
  GraphExecutor reference(g, Target::parse("llvm"), ExecutorOptions{.fuse = false});
  expect_same(exec.run(random_inputs(g)), reference.run(random_inputs(g)));
}

// A ScheduleSource that serves the template's default and records what it was asked.
class RecordingSource : public ops::ScheduleSource {
 public:
  ops::SourcedSchedule schedule_for(const ops::Workload& w, const ops::OpInstance&, const Target& target) override {
    asked.push_back(w.to_string());
    std::unique_ptr<schedule_space::Task> task = schedule_space::Task::create(w, target);
    return {task->apply(task->default_config()), task->default_config().to_json()};
  }
  std::vector<std::string> asked;
};

// x -> MatMul -> Reshape -> Softmax -> y, with the reshaped value also a graph output when
// reshape_is_output: the Reshape, a group of its own, is no kernel unless its output must be
// an array of its own.
Graph matmul_reshape_softmax(bool reshape_is_output) {
  Graph g;
  ValueId x = g.add_input("x", TensorType{{6, 8}, f32});
  g.add_node("mm", "MatMul", {}, {x, g.add_constant("w", NDArray::random({8, 12}, f32, 1))}, {"m"});
  NDArray shape = NDArray::empty({3}, DataType::int64());
  for (int64_t d = 0; d < 3; ++d) shape.set(d, std::vector<double>{6, 3, 4}[d]);
  g.add_node("r", "Reshape", {}, {g.find("m"), g.add_constant("shape", shape)}, {"r"});
  Attributes last;
  last.set("axis", int64_t{-1});
  g.add_node("sm", "Softmax", last, {g.find("r")}, {"y"});
  g.mark_output(g.find("y"));
  if (reshape_is_output) g.mark_output(g.find("r"));
  g.opset = 13;
  infer_types(g);
  return g;
}

TEST(ExecutionPlan, AReshapeOfItsOwnIsAViewOfItsInputNotACopy) {
  Target target = Target::parse("llvm");
  std::map<std::string, NDArray> inputs = {{"x", NDArray::random({6, 8}, f32, 2)}};
  for (bool reshape_is_output : {false, true}) {
    SCOPED_TRACE(reshape_is_output ? "the reshape is a graph output" : "the reshape is an intermediate");
    Graph g = matmul_reshape_softmax(reshape_is_output);
    GraphExecutor exec(g, target);
    const ExecutionPlan& plan = exec.plan();
    ASSERT_EQ(plan.calls.size(), reshape_is_output ? 3u : 2u);
    if (!reshape_is_output) {
      // The softmax reads the matmul's array, as [6, 3, 4].
      EXPECT_EQ(plan.calls[1].args[0], plan.calls[0].args.back());
      EXPECT_EQ(plan.calls[1].shapes[0], (std::vector<int64_t>{6, 3, 4}));
    }
    std::vector<NDArray> expected = GraphExecutor(g, target, ExecutorOptions{.fuse = false}).run(inputs);
    std::vector<NDArray> actual = exec.run(inputs);
    for (size_t o = 0; o < actual.size(); ++o) {
      Comparison c = compare(actual[o], expected[o], 1e-5, 1e-5);
      EXPECT_TRUE(c.ok()) << "output " << o << ": " << c.message;
    }
  }
}

TEST(ExecutionPlan, TuningTasksAskTheScheduleSourceAndTakeTheirEpilogues) {
  Graph g = conv_gemm_graph();
  RecordingSource source;
  Target target = Target::parse("llvm");
  // NCHW: the conv2d template's own packing (test_graph_layout covers the blocked graph).
  GraphExecutor tuned(g, target, ExecutorOptions{.schedules = &source, .layout = LayoutChoice::Nchw});
  EXPECT_EQ(tuned.plan().tasks, 2);
  ASSERT_EQ(source.asked.size(), 2u);
  EXPECT_EQ(source.asked[0].rfind("conv2d:N=1,C=3,H=8,W=8,K=4,", 0), 0u) << source.asked[0];
  EXPECT_EQ(source.asked[1], "dense:M=1,N=5,K=256,bias=1,act=none,dtype=float32");
  // The conv's kernel with its bias and relu moved into its loops; the dense with its bias,
  // which reads the conv's output as the Flatten's [1, 256] (a view: no kernel of its own).
  std::vector<std::string> functions;
  for (const KernelCall& c : tuned.plan().calls) functions.push_back(c.function);
  EXPECT_EQ(functions, (std::vector<std::string>{"t0_conv", "t3_fc"}));
  // The source's config reaches the plan with its schedule: the conv reads its weight
  // packed once at build time, not packed again on every run.
  EXPECT_TRUE(std::any_of(tuned.plan().arrays.begin(), tuned.plan().arrays.end(),
                          [](const PlannedArray& a) { return a.name == "w_packed_for_conv"; }));
  // A task's kernel names its workload, so a profile can find its time in the log.
  EXPECT_EQ(tuned.plan().calls[0].workload, source.asked[0]);
  EXPECT_EQ(tuned.plan().calls[1].workload, source.asked[1]);
  expect_same(tuned.run(random_inputs(g)),
              GraphExecutor(g, target, ExecutorOptions{.fuse = false}).run(random_inputs(g)));
}

// In an NCHW graph the conv's default config computes in NCHWc: its constant weight is
// packed once into [K/kb, C, R, S, kb] blocks, and only the packed copy is in the plan.
TEST(ExecutionPlan, AConstantWeightIsPackedOnceInTheTemplatesLayout) {
  Graph g = conv_gemm_graph();
  GraphExecutor exec(g, Target::parse("llvm"), ExecutorOptions{.layout = LayoutChoice::Nchw});
  const ExecutionPlan& plan = exec.plan();
  auto find = [&](const std::string& name) {
    return std::find_if(plan.arrays.begin(), plan.arrays.end(), [&](const PlannedArray& a) { return a.name == name; });
  };
  auto packed = find("w_packed_for_conv");
  ASSERT_NE(packed, plan.arrays.end());
  EXPECT_EQ(packed->kind, PlannedArray::Kind::Constant);
  ASSERT_EQ(packed->type.shape.size(), 5u);
  EXPECT_EQ(packed->type.shape[1], 3);                          // C
  EXPECT_EQ(packed->type.shape[0] * packed->type.shape[4], 4);  // K/kb x kb
  EXPECT_EQ(find("w"), plan.arrays.end());
  // Element (k, c, r, s) of the weight is at (k / kb, c, r, s, k % kb).
  const NDArray& w = *g.value(g.find("w")).constant;
  int64_t kb = packed->type.shape[4];
  for (int64_t k = 0; k < 4; ++k) {
    for (int64_t c = 0; c < 3; ++c) {
      int64_t from = ((k * 3 + c) * 3 + 1) * 3 + 2;
      int64_t to = ((((k / kb) * 3 + c) * 3 + 1) * 3 + 2) * kb + k % kb;
      EXPECT_EQ(packed->data.get(to), w.get(from)) << k << "," << c;
    }
  }
}

// fuse_epilogue on a template's matmul and a relu reading its product: one function,
// the relu's block under the matmul's parallel loop, and the relu of the product.
TEST(EpilogueFusion, MovesTheEpilogueUnderTheAnchorsParallelLoop) {
  Target target = Target::parse("llvm");
  auto task = schedule_space::Task::create(ops::Workload::parse("matmul:M=64,N=48,K=32"), target);
  PrimFunc anchor = task->apply(task->default_config()).func();
  te::Tensor product = te::placeholder({Expr(64), Expr(48)}, f32, "product");
  te::Tensor relu = te::compute(
      {Expr(64), Expr(48)}, [&](Var i, Var j) { return max(product(i, j), make_const(f32, 0.0)); }, "relu_out");
  PrimFunc epilogue = te::create_prim_func({product, relu}, "relu");
  std::optional<PrimFunc> fused = fuse_epilogue(anchor, epilogue, 0, "mm_relu");
  ASSERT_TRUE(fused.has_value());
  ASSERT_EQ(fused->params.size(), 3u);  // A, B, then the relu's output
  // The relu's block is inside a parallel loop.
  bool under_parallel = false;
  post_order_visit(fused->body, [&](const temper::Node* n) {
    if (n->kind != NodeKind::For) return;
    auto* loop = static_cast<const ForNode*>(n);
    if (loop->for_kind != ForKind::Parallel) return;
    post_order_visit(loop->body, [&](const temper::Node* m) {
      if (m->kind == NodeKind::Block && static_cast<const BlockNode*>(m)->name == "relu_out") under_parallel = true;
    });
  });
  EXPECT_TRUE(under_parallel);
  PackedFunc f = build({*fused}, target).module->get_function("mm_relu");
  NDArray a = NDArray::random({64, 32}, f32, 1), b = NDArray::random({32, 48}, f32, 2);
  NDArray out = NDArray::empty({64, 48}, f32);
  f({&a, &b, &out});
  for (int64_t i = 0; i < 64; i += 7) {
    for (int64_t j = 0; j < 48; j += 5) {
      double sum = 0;
      for (int64_t k = 0; k < 32; ++k) sum += a.get(i * 32 + k) * b.get(k * 48 + j);
      EXPECT_NEAR(out.get(i * 48 + j), std::max(sum, 0.0), 1e-4) << i << "," << j;
    }
  }
}

class ExportedModel : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           str("temper_plan_test_", ::getpid(), "_", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    library_ = (dir_ / "model.so").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  void export_model() { GraphExecutor(graph_, Target::parse("llvm")).export_library(library_); }

  Graph graph_ = conv_gemm_graph();
  fs::path dir_;
  std::string library_;
};

TEST_F(ExportedModel, LoadsAndRunsAsBuilt) {
  GraphExecutor built(graph_, Target::parse("llvm"));
  built.export_library(library_);
  EXPECT_TRUE(fs::exists(dir_ / "model.plan.json"));
  EXPECT_TRUE(fs::exists(dir_ / "model.weights"));
  std::unique_ptr<GraphExecutor> loaded = GraphExecutor::load(library_);
  EXPECT_EQ(loaded->num_kernels(), built.num_kernels());
  for (int c = 0; c < built.num_kernels(); ++c) EXPECT_EQ(loaded->plan().calls[c].workload, built.plan().calls[c].workload);
  EXPECT_FALSE(loaded->plan().calls[0].workload.empty());
  EXPECT_EQ(loaded->plan().storage_bytes, built.plan().storage_bytes);
  std::map<std::string, NDArray> inputs = random_inputs(graph_);
  std::vector<NDArray> expected = built.run(inputs);
  std::vector<NDArray> actual = loaded->run(inputs);
  ASSERT_EQ(actual.size(), 1u);
  Comparison c = compare(actual[0], expected[0], 0, 0);
  EXPECT_TRUE(c.ok()) << c.message;
  expect_user_error([&] { loaded->run({}); }, {"input 'x'", "float32[1,3,8,8]", "is not given"});
  expect_user_error([&] { loaded->export_library((dir_ / "again.so").string()); },
                    {"loaded from a built model", "export from an executor made from the graph"});
}

TEST_F(ExportedModel, MissingFilesAreNamed) {
  expect_user_error([&] { GraphExecutor::load(library_); }, {"cannot read model plan", "model.plan.json"});
  export_model();
  fs::remove(dir_ / "model.weights");
  expect_user_error([&] { GraphExecutor::load(library_); }, {"cannot read model weights", "model.weights"});
}

TEST_F(ExportedModel, TruncatedOrDamagedFilesAreRefused) {
  export_model();
  std::string weights = read_file((dir_ / "model.weights").string(), "weights");
  write_file_atomically((dir_ / "model.weights").string(), weights.substr(0, weights.size() / 2), "weights");
  expect_user_error([&] { GraphExecutor::load(library_); }, {"do not match the plan", "truncated", "temper build"});

  export_model();
  weights[10] ^= 1;
  write_file_atomically((dir_ / "model.weights").string(), weights, "weights");
  expect_user_error([&] { GraphExecutor::load(library_); }, {"do not match the plan", "damaged"});

  export_model();
  std::string plan = read_file((dir_ / "model.plan.json").string(), "plan");
  write_file_atomically((dir_ / "model.plan.json").string(), plan.substr(0, plan.size() / 2), "plan");
  expect_user_error([&] { GraphExecutor::load(library_); }, {"not valid JSON", "temper build"});

  write_file_atomically((dir_ / "model.plan.json").string(), "{\"format\": \"something else\"}", "plan");
  expect_user_error([&] { GraphExecutor::load(library_); }, {"is not a Temper model plan"});
}

TEST_F(ExportedModel, AnotherVersionOrAPlanTheLibraryDoesNotMatchIsRefused) {
  export_model();
  std::string path = (dir_ / "model.plan.json").string();
  std::string plan = read_file(path, "plan");
  std::string versioned = plan;
  versioned.replace(versioned.find("\"version\": 2"), 12, "\"version\": 9");
  write_file_atomically(path, versioned, "plan");
  expect_user_error([&] { GraphExecutor::load(library_); }, {"version 9", "reads version 2", "temper build"});

  std::string renamed = plan;
  size_t at = renamed.find("\"function\": \"t");
  ASSERT_NE(at, std::string::npos);
  renamed.replace(at, 14, "\"function\": \"x");
  write_file_atomically(path, renamed, "plan");
  expect_user_error([&] { GraphExecutor::load(library_); }, {"does not match its plan", "temper build"});

  std::string extra_arg = plan;
  at = extra_arg.find("\"args\": [");
  ASSERT_NE(at, std::string::npos);
  extra_arg.insert(at + 9, "0, ");
  write_file_atomically(path, extra_arg, "plan");
  expect_user_error([&] { GraphExecutor::load(library_); }, {"is damaged", "mismatched arguments"});

  // A plan from a machine with a feature this one lacks.
  std::string foreign = plan;
  at = foreign.find("\"features\": \"");
  ASSERT_NE(at, std::string::npos);
  foreign.insert(at + 13, "+madeupfeature,");
  write_file_atomically(path, foreign, "plan");
  expect_user_error([&] { GraphExecutor::load(library_); },
                    {"CPU features this machine", "lacks: madeupfeature", "rebuild the model here"});

  std::string out_of_range = plan;
  at = out_of_range.find("\"inputs\": [");
  ASSERT_NE(at, std::string::npos);
  out_of_range.insert(at + 11, "9999, ");
  write_file_atomically(path, out_of_range, "plan");
  expect_user_error([&] { GraphExecutor::load(library_); }, {"is damaged", "input 9999 names no array"});

  // A float where an integer belongs, too large for any integer type (found by fuzz_plan).
  std::string fractional = plan;
  at = fractional.find("\"inputs\": [");
  ASSERT_NE(at, std::string::npos);
  fractional.insert(at + 11, "9.06784e+56, ");
  write_file_atomically(path, fractional, "plan");
  expect_user_error([&] { GraphExecutor::load(library_); }, {"is damaged", "9.06784e+56", "only integers"});

  // Shapes whose element count overflows int64.
  std::string huge = plan;
  at = huge.find("\"shapes\": [");
  ASSERT_NE(at, std::string::npos);
  at = huge.find('[', at + 11);  // the first argument's shape
  ASSERT_NE(at, std::string::npos);
  huge.insert(at + 1, "4611686018427387904, 4, ");
  write_file_atomically(path, huge, "plan");
  expect_user_error([&] { GraphExecutor::load(library_); }, {"more elements than a 64-bit count holds"});
}

}  // namespace
}  // namespace temper::graph
