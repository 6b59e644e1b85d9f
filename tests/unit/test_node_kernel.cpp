// Per-node kernels, the unfused GraphExecutor and constant folding, on graphs built by
// hand: results against values computed here, the folded graph's printed form, and the
// executor's messages for inputs that do not fit.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/graph/constant_folding.h"
#include "compiler/graph/executor.h"
#include "compiler/graph/node_kernel.h"
#include "compiler/graph/shape_inference.h"
#include "compiler/ir/error.h"

namespace temper::graph {
namespace {

const DataType f32 = DataType::float32();
const DataType i64 = DataType::int64();

NDArray int64_array(const std::vector<int64_t>& shape, const std::vector<int64_t>& values) {
  NDArray a = NDArray::empty(shape, i64);
  for (size_t i = 0; i < values.size(); ++i) a.set(static_cast<int64_t>(i), static_cast<double>(values[i]));
  return a;
}

// relu(x + b), b broadcast over the rows.
Graph add_relu_graph() {
  Graph g;
  g.name = "add_relu";
  ValueId x = g.add_input("x", TensorType{{3, 17}, f32});
  ValueId b = g.add_input("b", TensorType{{17}, f32});
  g.add_node("add", "Add", {}, {x, b}, {"sum"});
  g.add_node("relu", "Relu", {}, {g.find("sum")}, {"y"});
  g.mark_output(g.find("y"));
  infer_types(g);
  return g;
}

TEST(GraphExecutor, RunsAddReluAgainstHandComputedValues) {
  GraphExecutor exec(add_relu_graph(), Target::parse("llvm"));
  NDArray x = NDArray::random({3, 17}, f32, 1);
  NDArray b = NDArray::random({17}, f32, 2);
  std::vector<NDArray> out = exec.run({{"x", x}, {"b", b}});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{3, 17}));
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 17; ++j) {
      double expected = std::max(0.0, static_cast<double>(static_cast<float>(x.get(i * 17 + j) + b.get(j))));
      EXPECT_FLOAT_EQ(out[0].get(i * 17 + j), expected) << "at [" << i << ", " << j << "]";
    }
  }
}

TEST(GraphExecutor, ConstantsArePassedToTheKernels) {
  Graph g;
  ValueId x = g.add_input("x", TensorType{{4}, f32});
  NDArray c = NDArray::empty({4}, f32);
  for (int i = 0; i < 4; ++i) c.set(i, 10.0 * i);
  ValueId k = g.add_constant("k", c);
  g.add_node("mul", "Mul", {}, {x, k}, {"y"});
  g.mark_output(g.find("y"));
  infer_types(g);
  NDArray in = NDArray::empty({4}, f32);
  in.fill(0.5);
  std::vector<NDArray> out = GraphExecutor(g, Target::parse("llvm")).run({{"x", in}});
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(out[0].get(i), 5.0 * i);
}

TEST(GraphExecutor, AGraphOutputThatIsAnInputComesBackAsGiven) {
  Graph g = add_relu_graph();
  g.mark_output(g.find("x"));
  GraphExecutor exec(g, Target::parse("llvm"));
  NDArray x = NDArray::random({3, 17}, f32, 3);
  std::vector<NDArray> out = exec.run({{"x", x}, {"b", NDArray::zeros({17}, f32)}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].data(), x.data());
}

TEST(CompileNode, TakesThePresentInputsThenTheOutputs) {
  Graph g = add_relu_graph();
  NodeKernel add = compile_node(g, 0, Target::parse("llvm"));
  EXPECT_EQ(add.args, (std::vector<ValueId>{g.find("x"), g.find("b"), g.find("sum")}));
  NDArray x = NDArray::random({3, 17}, f32, 5);
  NDArray b = NDArray::random({17}, f32, 6);
  NDArray sum = NDArray::empty({3, 17}, f32);
  run_node(add, {&x, &b, &sum});
  EXPECT_FLOAT_EQ(sum.get(2 * 17 + 16), static_cast<float>(x.get(2 * 17 + 16) + b.get(16)));
}

TEST(GraphExecutor, EvaluatesShapeNodesThatWereNotFolded) {
  Graph g;
  ValueId x = g.add_input("x", TensorType{{2, 5, 7}, f32});
  g.add_node("shape", "Shape", {}, {x}, {"s"});
  g.mark_output(g.find("s"));
  infer_types(g);
  std::vector<NDArray> out = GraphExecutor(g, Target::parse("llvm")).run({{"x", NDArray::zeros({2, 5, 7}, f32)}});
  ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(out[0].dtype(), i64);
  EXPECT_EQ(out[0].get(0), 2);
  EXPECT_EQ(out[0].get(1), 5);
  EXPECT_EQ(out[0].get(2), 7);
}

std::string error_of(const GraphExecutor& exec, const std::map<std::string, NDArray>& inputs) {
  try {
    exec.run(inputs);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(GraphExecutor, NamesTheInputThatIsMissingMisshapenOrUnknown) {
  GraphExecutor exec(add_relu_graph(), Target::parse("llvm"));
  NDArray x = NDArray::zeros({3, 17}, f32);
  NDArray b = NDArray::zeros({17}, f32);
  EXPECT_EQ(error_of(exec, {{"x", x}}), "input 'b' (float32[17]) of graph 'add_relu' is not given");
  EXPECT_EQ(error_of(exec, {{"x", x}, {"b", NDArray::zeros({16}, f32)}}),
            "input 'b' of graph 'add_relu' expects float32[17], given float32[16]");
  EXPECT_EQ(error_of(exec, {{"x", NDArray::zeros({3, 17}, i64)}, {"b", b}}),
            "input 'x' of graph 'add_relu' expects float32[3,17], given int64[3,17]");
  EXPECT_EQ(error_of(exec, {{"x", x}, {"b", b}, {"z", b}}), "graph 'add_relu' has no input 'z'; its inputs are: x, b");
  // Values that are not inputs are not inputs either.
  EXPECT_EQ(error_of(exec, {{"x", x}, {"b", b}, {"sum", x}}),
            "graph 'add_relu' has no input 'sum'; its inputs are: x, b");
}

// What an exporter writes for x.reshape(x.shape[0], -1): Shape -> Gather -> Unsqueeze ->
// Concat with [-1] -> Reshape.
Graph flatten_by_shape_chain() {
  Graph g;
  g.name = "flatten";
  ValueId x = g.add_input("x", TensorType{{2, 3, 4}, f32});
  g.add_node("shape", "Shape", {}, {x}, {"x_shape"});
  ValueId zero = g.add_constant("zero", int64_array({}, {0}));
  Attributes axis0;
  axis0.set("axis", int64_t{0});
  g.add_node("gather", "Gather", axis0, {g.find("x_shape"), zero}, {"batch"});
  ValueId axes = g.add_constant("axes", int64_array({1}, {0}));
  g.add_node("unsqueeze", "Unsqueeze", {}, {g.find("batch"), axes}, {"batch_1d"});
  ValueId minus_one = g.add_constant("minus_one", int64_array({1}, {-1}));
  g.add_node("concat", "Concat", axis0, {g.find("batch_1d"), minus_one}, {"target"});
  g.add_node("reshape", "Reshape", {}, {x, g.find("target")}, {"y"});
  g.mark_output(g.find("y"));
  return g;
}

TEST(FoldConstants, FoldsAShapeChainIntoTheReshapeTarget) {
  Graph g = flatten_by_shape_chain();
  EXPECT_EQ(fold_constants(g), 4);
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0].op, "Reshape");
  const Value& target = g.value(g.nodes()[0].inputs[1]);
  EXPECT_EQ(target.name, "target");
  ASSERT_TRUE(target.constant.has_value());
  EXPECT_EQ(target.type.to_string(), "int64[2]");
  EXPECT_EQ(target.constant->get(0), 2);
  EXPECT_EQ(target.constant->get(1), -1);
  // The constants only the chain read are gone.
  EXPECT_EQ(g.find("axes"), kNoValue);
  EXPECT_EQ(g.find("x_shape"), kNoValue);
  EXPECT_EQ(g.value(g.outputs()[0]).type.to_string(), "float32[2,12]");
  g.verify();

  NDArray x = NDArray::random({2, 3, 4}, f32, 4);
  std::vector<NDArray> out = GraphExecutor(g, Target::parse("llvm")).run({{"x", x}});
  ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{2, 12}));
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(out[0].get(i), x.get(i));
}

TEST(FoldConstants, LeavesNodesThatReadInputsAlone) {
  Graph g = add_relu_graph();
  EXPECT_EQ(fold_constants(g), 0);
  EXPECT_EQ(g.nodes().size(), 2u);
}

TEST(FoldConstants, AGraphOutputComputedFromConstantsBecomesAConstant) {
  Graph g;
  NDArray data = NDArray::empty({3}, f32);
  for (int i = 0; i < 3; ++i) data.set(i, i + 1);
  ValueId a = g.add_constant("a", data);
  g.add_node("square", "Mul", {}, {a, a}, {"y"});
  g.mark_output(g.find("y"));
  EXPECT_EQ(fold_constants(g), 1);
  EXPECT_TRUE(g.nodes().empty());
  const Value& y = g.value(g.outputs()[0]);
  ASSERT_TRUE(y.constant.has_value());
  EXPECT_EQ(y.constant->get(2), 9);
  // The executor returns it as is.
  std::vector<NDArray> out = GraphExecutor(g, Target::parse("llvm")).run({});
  EXPECT_EQ(out[0].get(1), 4);
}

}  // namespace
}  // namespace temper::graph
