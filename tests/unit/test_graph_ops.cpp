// The graph op table (compiler/graph/graph_ops.h): type inference on hand-built nodes
// (broadcasting, windows, opset-dependent attributes and inputs), the errors that name
// the node, and each op's compute compiled by compile_node and run on small inputs
// against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compiler/graph/graph_ops.h"
#include "compiler/graph/node_kernel.h"
#include "compiler/graph/shape_inference.h"
#include "user_error_test_util.h"

namespace temper::graph {
namespace {

const DataType f32 = DataType::float32();
const DataType i64 = DataType::int64();

NDArray array(std::vector<int64_t> shape, DataType dtype, const std::vector<double>& values) {
  NDArray a = NDArray::empty(std::move(shape), dtype);
  EXPECT_EQ(a.size(), static_cast<int64_t>(values.size()));
  for (size_t k = 0; k < values.size(); ++k) a.set(static_cast<int64_t>(k), values[k]);
  return a;
}

// Written as int64 (not through double): INT64_MAX, the "to the end" of Slice, stays exact.
NDArray ints(const std::vector<int64_t>& values) {
  NDArray a = NDArray::empty({static_cast<int64_t>(values.size())}, i64);
  std::copy(values.begin(), values.end(), a.data_as<int64_t>());
  return a;
}

// 1, 2, ..., n in the given shape.
NDArray iota(std::vector<int64_t> shape) {
  NDArray a = NDArray::empty(std::move(shape), f32);
  for (int64_t k = 0; k < a.size(); ++k) a.set(k, static_cast<double>(k + 1));
  return a;
}

std::vector<double> values(const NDArray& a) {
  std::vector<double> v;
  for (int64_t k = 0; k < a.size(); ++k) v.push_back(a.get(k));
  return v;
}

// A graph with one node under test: inputs (typed, or constants with data), then the node.
class OneNode {
 public:
  explicit OneNode(int opset = 17) { graph.opset = opset; }

  OneNode& input(const std::string& name, std::vector<int64_t> shape, DataType dtype = f32) {
    ids_.push_back(graph.add_input(name, {std::move(shape), dtype}));
    return *this;
  }
  // An input fed with data when the node runs.
  OneNode& feed(const std::string& name, const NDArray& data) {
    input(name, data.shape(), data.dtype());
    data_[ids_.back()] = data;
    return *this;
  }
  OneNode& constant(const std::string& name, const NDArray& data) {
    ids_.push_back(graph.add_constant(name, data));
    return *this;
  }
  OneNode& omitted() {
    ids_.push_back(kNoValue);
    return *this;
  }

  // The output types ("float32[2,3]", space-separated) after infer_types.
  std::string infer(const std::string& op, Attributes attrs = {}, std::vector<std::string> outputs = {"y"}) {
    add(op, std::move(attrs), std::move(outputs));
    infer_types(graph);
    std::string types;
    for (ValueId v : graph.nodes().back().outputs)
      types += (types.empty() ? "" : " ") + graph.value(v).type.to_string();
    return types;
  }

  // The node compiled and run on the inputs' data; its outputs.
  std::vector<NDArray> run(const std::string& op, Attributes attrs = {}, std::vector<std::string> outputs = {"y"}) {
    add(op, std::move(attrs), std::move(outputs));
    infer_types(graph);
    NodeKernel kernel = compile_node(graph, static_cast<int>(graph.nodes().size()) - 1, Target::parse("llvm"));
    std::vector<NDArray> arrays;
    std::vector<NDArray> results;
    for (ValueId v : kernel.args) {
      const Value& value = graph.value(v);
      if (value.constant) {
        arrays.push_back(*value.constant);
      } else if (data_.count(v)) {
        arrays.push_back(data_.at(v));
      } else {
        arrays.push_back(NDArray::zeros(value.type.shape, value.type.dtype));
        results.push_back(arrays.back());
      }
    }
    std::vector<NDArray*> pointers;
    for (NDArray& a : arrays) pointers.push_back(&a);
    run_node(kernel, pointers);
    return results;
  }

  Graph graph;

 private:
  void add(const std::string& op, Attributes attrs, std::vector<std::string> outputs) {
    graph.add_node("n", op, std::move(attrs), ids_, outputs);
  }

  std::vector<ValueId> ids_;
  std::map<ValueId, NDArray> data_;
};

Attributes attrs(std::initializer_list<std::pair<const std::string, Attribute>> list) {
  Attributes a;
  for (const auto& [name, value] : list) a.set(name, value);
  return a;
}

using I = std::vector<int64_t>;

using testing_util::error_of;

void expect_near(const std::vector<double>& got, const std::vector<double>& expected, double tolerance = 1e-5) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], expected[k], tolerance) << "element " << k;
}

// ---------------------------------------------------------------- the table

TEST(GraphOpsTable, ListsTheIssueOpsSorted) {
  std::vector<std::string> ops = supported_graph_ops();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  for (const char* op : {"Add",
                         "AveragePool",
                         "BatchNormalization",
                         "Cast",
                         "Clip",
                         "Concat",
                         "Constant",
                         "Conv",
                         "Div",
                         "Erf",
                         "Flatten",
                         "Gather",
                         "Gelu",
                         "Gemm",
                         "GlobalAveragePool",
                         "Identity",
                         "LayerNormalization",
                         "MatMul",
                         "MaxPool",
                         "Mul",
                         "Pad",
                         "Pow",
                         "ReduceMean",
                         "Relu",
                         "Reshape",
                         "Shape",
                         "Sigmoid",
                         "Slice",
                         "Softmax",
                         "Sqrt",
                         "Squeeze",
                         "Sub",
                         "Tanh",
                         "Transpose",
                         "Unsqueeze"}) {
    const GraphOp* found = find_graph_op(op);
    ASSERT_NE(found, nullptr) << op;
    EXPECT_EQ(found->op, op);
  }
  // The ops a Hugging Face BERT export writes around its attention mask.
  for (const char* op : {"ConstantOfShape", "Expand", "Where", "Equal", "GreaterOrEqual", "And", "IsNaN", "ReduceSum",
                         "Range", "Neg", "Reciprocal", "Exp", "Log", "Max", "Min", "Not", "Or", "Xor", "IsInf"}) {
    EXPECT_NE(find_graph_op(op), nullptr) << op;
  }
  EXPECT_EQ(ops.size(), 127u);
  EXPECT_EQ(find_graph_op("LSTM"), nullptr);
  EXPECT_EQ(find_graph_op("Conv")->pattern, OpPattern::OutFusable);
  EXPECT_EQ(find_graph_op("Add")->pattern, OpPattern::Broadcast);
  EXPECT_EQ(find_graph_op("Transpose")->pattern, OpPattern::Injective);
}

TEST(GraphOpsErrors, UnsupportedOpNamesNodeAndOp) {
  OneNode t;
  t.input("x", {2});
  std::string e = error_of([&] { t.infer("LSTM"); });
  EXPECT_NE(e.find("LSTM node 'n': op LSTM is not supported"), std::string::npos) << e;
  EXPECT_NE(e.find("Conv"), std::string::npos) << e;
  EXPECT_THROW(OneNode().input("x", {2}).infer("LSTM"), UnsupportedError);
}

TEST(GraphOpsErrors, DeclaredOutputTypeMustAgree) {
  OneNode t;
  t.input("x", {2, 3});
  t.graph.add_node("n", "Relu", {}, {t.graph.find("x")}, {"y"});
  t.graph.value(t.graph.find("y")).type = {{3, 2}, f32};
  std::string e = error_of([&] { infer_types(t.graph); });
  EXPECT_NE(e.find("output 'y' is declared float32[3,2] but the node computes float32[2,3]"), std::string::npos) << e;
}

// ---------------------------------------------------------------- elementwise

TEST(GraphOpsElementwise, BroadcastShapes) {
  EXPECT_EQ(OneNode().input("a", {2, 1, 4}).input("b", {3, 1}).infer("Add"), "float32[2,3,4]");
  EXPECT_EQ(OneNode().input("a", {}).input("b", {5}).infer("Mul"), "float32[5]");
  EXPECT_EQ(OneNode().input("a", {2, 3}, i64).input("b", {2, 3}, i64).infer("Div"), "int64[2,3]");
  // Pow's exponent may have another type; the result has the base's.
  EXPECT_EQ(OneNode().input("a", {2, 3}).input("b", {}, i64).infer("Pow"), "float32[2,3]");
}

TEST(GraphOpsErrors, MismatchedBroadcastNamesNodeAndShapes) {
  std::string e = error_of([] { OneNode().input("a", {2, 3}).input("b", {4}).infer("Add"); });
  EXPECT_NE(e.find("Add node 'n': inputs float32[2,3] and float32[4] do not broadcast"), std::string::npos) << e;
  e = error_of([] { OneNode().input("a", {2}).input("b", {2}, i64).infer("Sub"); });
  EXPECT_NE(e.find("Sub node 'n': input A is float32[2] but input B is int64[2]"), std::string::npos) << e;
}

TEST(GraphOpsElementwise, AddBroadcastsNumpyStyle) {
  OneNode t;
  t.feed("a", iota({2, 3})).feed("b", array({3}, f32, {10, 20, 30}));
  expect_near(values(t.run("Add")[0]), {11, 22, 33, 14, 25, 36});
}

TEST(GraphOpsElementwise, BeforeOpset7BroadcastFollowsAxis) {
  // B [3] matches A's dimension 1: B is read as [1, 3, 1].
  OneNode t(6);
  t.feed("a", iota({2, 3, 2})).feed("b", array({3}, f32, {100, 200, 300}));
  EXPECT_EQ(values(t.run("Add", attrs({{"broadcast", int64_t{1}}, {"axis", int64_t{1}}}))[0]),
            (std::vector<double>{101, 102, 203, 204, 305, 306, 107, 108, 209, 210, 311, 312}));
  std::string e = error_of([] { OneNode(6).input("a", {2, 3}).input("b", {3}).infer("Mul"); });
  EXPECT_NE(e.find("broadcast=0"), std::string::npos) << e;
}

TEST(GraphOpsElementwise, PowWithIntegerExponentAndIntegerBase) {
  OneNode t;
  t.feed("a", array({3}, f32, {1.5, -2, 3})).feed("b", array({}, i64, {2}));
  expect_near(values(t.run("Pow")[0]), {2.25, 4, 9});
  OneNode u;
  u.feed("a", array({3}, i64, {2, 3, 4})).feed("b", array({3}, i64, {3, 2, 1}));
  EXPECT_EQ(values(u.run("Pow")[0]), (std::vector<double>{8, 9, 4}));
}

TEST(GraphOpsElementwise, UnaryMath) {
  NDArray x = array({4}, f32, {-1, 0, 0.5, 4});
  expect_near(values(OneNode().feed("x", x).run("Relu")[0]), {0, 0, 0.5, 4});
  expect_near(values(OneNode().feed("x", x).run("Erf")[0]), {-0.8427007929, 0, 0.5204998778, 1});
  expect_near(values(OneNode().feed("x", x).run("Sigmoid")[0]), {0.2689414214, 0.5, 0.6224593312, 0.9820137900});
  expect_near(values(OneNode().feed("x", x).run("Tanh")[0]), {-0.7615941560, 0, 0.4621171573, 0.9993292997});
  expect_near(values(OneNode().feed("x", array({2}, f32, {4, 2.25})).run("Sqrt")[0]), {2, 1.5});
  expect_near(values(OneNode().feed("x", x).run("Identity")[0]), {-1, 0, 0.5, 4});
  std::string e = error_of([] { OneNode().input("x", {2}, i64).infer("Sqrt"); });
  EXPECT_NE(e.find("Sqrt node 'n': the input must be floating point, got int64[2]"), std::string::npos) << e;
}

TEST(GraphOpsElementwise, ClipBoundsByOpset) {
  NDArray x = array({4}, f32, {-3, -1, 1, 3});
  // Before opset 11: attributes.
  expect_near(values(OneNode(6).feed("x", x).run("Clip", attrs({{"min", -2.0}, {"max", 2.0}}))[0]), {-2, -1, 1, 2});
  // From 11: optional inputs, here min omitted and max computed at run time.
  OneNode t(13);
  t.feed("x", x).omitted().feed("max", array({}, f32, {0}));
  expect_near(values(t.run("Clip")[0]), {-3, -1, 0, 0});
}

TEST(GraphOpsElementwise, CastConvertsByTheToCode) {
  NDArray x = array({4}, f32, {-1.7, 0, 0.25, 2.9});
  EXPECT_EQ(OneNode().input("x", {4}).infer("Cast", attrs({{"to", int64_t{7}}})), "int64[4]");
  EXPECT_EQ(values(OneNode().feed("x", x).run("Cast", attrs({{"to", int64_t{6}}}))[0]),
            (std::vector<double>{-1, 0, 0, 2}));
  EXPECT_EQ(values(OneNode().feed("x", x).run("Cast", attrs({{"to", int64_t{9}}}))[0]),
            (std::vector<double>{1, 0, 1, 1}));
  std::string e = error_of([] { OneNode().input("x", {4}).infer("Cast", attrs({{"to", int64_t{8}}})); });
  EXPECT_NE(e.find("Cast node 'n': attribute to=8 (STRING) is a type Temper does not compute"), std::string::npos) << e;
}

TEST(GraphOpsElementwise, MoreUnaryMath) {
  NDArray x = array({6}, f32, {-2.5, -0.5, 0, 0.5, 1.5, 2.5});
  // Round takes halves to even.
  EXPECT_EQ(values(OneNode().feed("x", x).run("Round")[0]), (std::vector<double>{-2, -0, 0, 0, 2, 2}));
  EXPECT_EQ(values(OneNode().feed("x", array({3}, f32, {16777215, -8388609, 0.49999997})).run("Round")[0]),
            (std::vector<double>{16777215, -8388609, 0}));
  EXPECT_EQ(values(OneNode().feed("x", x).run("Sign")[0]), (std::vector<double>{-1, -1, 0, 1, 1, 1}));
  EXPECT_EQ(values(OneNode().feed("x", x).run("Neg")[0]), (std::vector<double>{2.5, 0.5, -0, -0.5, -1.5, -2.5}));
  EXPECT_EQ(values(OneNode().feed("x", array({3}, i64, {-3, 0, 4})).run("Abs")[0]), (std::vector<double>{3, 0, 4}));
  EXPECT_EQ(values(OneNode().feed("x", x).run("Floor")[0]), (std::vector<double>{-3, -1, 0, 0, 1, 2}));
  EXPECT_EQ(values(OneNode().feed("x", x).run("Ceil")[0]), (std::vector<double>{-2, -0, 0, 1, 2, 3}));
  expect_near(values(OneNode().feed("x", array({2}, f32, {1, 2.718281828})).run("Log")[0]), {0, 1});
  expect_near(values(OneNode().feed("x", array({2}, f32, {0, 1})).run("Exp")[0]), {1, 2.718281828});
  expect_near(values(OneNode().feed("x", array({2}, f32, {-4, 0.5})).run("Reciprocal")[0]), {-0.25, 2});
  // Softplus stays finite where e^x overflows float.
  expect_near(values(OneNode().feed("x", array({3}, f32, {-100, 0, 100})).run("Softplus")[0]), {0, 0.6931471806, 100});
  expect_near(values(OneNode().feed("x", x).run("LeakyRelu", attrs({{"alpha", 0.1}}))[0]),
              {-0.25, -0.05, 0, 0.5, 1.5, 2.5});
  expect_near(values(OneNode().feed("x", x).run("HardSigmoid")[0]), {0, 0.4, 0.5, 0.6, 0.8, 1});
  expect_near(values(OneNode().feed("x", array({3}, f32, {-4, 1, 4})).run("HardSwish")[0]), {0, 0.6666666667, 4});
  expect_near(values(OneNode().feed("x", x).run("Shrink", attrs({{"lambd", 1.0}, {"bias", 0.5}}))[0]),
              {-2, 0, 0, 0, 1, 2});
  expect_near(values(OneNode().feed("x", array({3}, f32, {-1e-3, 0.5, -3})).run("Asinh")[0]),
              {-0.0009999998, 0.4812118251, -1.8184464592}, 1e-6);
  std::string e = error_of([] { OneNode().input("x", {2}, i64).infer("Exp"); });
  EXPECT_NE(e.find("Exp node 'n': the input must be floating point, got int64[2]"), std::string::npos) << e;
}

// x86's idiv faults on a zero divisor and on the minimum over -1: a model that divides
// so must give numpy's answers (0, and the wrapped negation), not end the process.
TEST(GraphOpsElementwise, IntegerDivAndModByZeroOrMinusOneDoNotTrap) {
  const DataType i32 = DataType::int32();
  NDArray a = array({4}, i32, {7, -7, -2147483648.0, 9});
  NDArray b = array({4}, i32, {0, 2, -1, -1});
  EXPECT_EQ(values(OneNode().feed("a", a).feed("b", b).run("Div")[0]),
            (std::vector<double>{0, -3, -2147483648.0, -9}));
  EXPECT_EQ(values(OneNode().feed("a", a).feed("b", b).run("Mod")[0]), (std::vector<double>{0, 1, 0, 0}));
  EXPECT_EQ(values(OneNode().feed("a", a).feed("b", b).run("Mod", attrs({{"fmod", int64_t{1}}}))[0]),
            (std::vector<double>{0, -1, 0, 0}));
  NDArray u = array({2}, DataType::uint8(), {200, 9});
  NDArray z = array({2}, DataType::uint8(), {0, 4});
  EXPECT_EQ(values(OneNode().feed("a", u).feed("b", z).run("Div")[0]), (std::vector<double>{0, 2}));
}

TEST(GraphOpsElementwise, ModTakesTheDivisorsSignUnlessFmod) {
  NDArray a = array({4}, i64, {7, -7, 7, -7});
  NDArray b = array({4}, i64, {3, 3, -3, -3});
  EXPECT_EQ(values(OneNode().feed("a", a).feed("b", b).run("Mod")[0]), (std::vector<double>{1, 2, -2, -1}));
  EXPECT_EQ(values(OneNode().feed("a", a).feed("b", b).run("Mod", attrs({{"fmod", int64_t{1}}}))[0]),
            (std::vector<double>{1, -1, 1, -1}));
  std::string e = error_of([] {
    OneNode().input("a", {2}).input("b", {2}).infer("Mod", attrs({{"fmod", int64_t{1}}}));
  });
  EXPECT_NE(e.find("floating-point Mod (float32) is not supported"), std::string::npos) << e;
  EXPECT_THROW(OneNode().input("a", {2}).input("b", {2}).infer("Mod", attrs({{"fmod", int64_t{1}}})), UnsupportedError);
}

TEST(GraphOpsElementwise, VariadicMaxMinSumMeanBroadcast) {
  NDArray a = array({2, 2}, f32, {1, 5, 3, 2});
  NDArray b = array({2}, f32, {4, 0});
  NDArray c = array({1}, f32, {2});
  auto run = [&](const std::string& op) { return values(OneNode().feed("a", a).feed("b", b).feed("c", c).run(op)[0]); };
  EXPECT_EQ(run("Max"), (std::vector<double>{4, 5, 4, 2}));
  EXPECT_EQ(run("Min"), (std::vector<double>{1, 0, 2, 0}));
  EXPECT_EQ(run("Sum"), (std::vector<double>{7, 7, 9, 4}));
  expect_near(run("Mean"), {7.0 / 3, 7.0 / 3, 3, 4.0 / 3});
  EXPECT_EQ(values(OneNode().feed("a", a).run("Sum")[0]), (std::vector<double>{1, 5, 3, 2}));
  std::string e = error_of([] { OneNode().input("a", {2}).input("b", {2}, i64).infer("Max"); });
  EXPECT_NE(e.find("input data_0 is float32[2] but input data_1 is int64[2]"), std::string::npos) << e;
}

TEST(GraphOpsElementwise, PReluSlopePerChannelAndDropoutInInference) {
  NDArray x = array({1, 2, 2}, f32, {-1, 2, -3, 4});
  EXPECT_EQ(values(OneNode().feed("x", x).feed("s", array({2, 1}, f32, {0.5, 2})).run("PRelu")[0]),
            (std::vector<double>{-0.5, 2, -6, 4}));
  std::vector<NDArray> out = OneNode().feed("x", x).run("Dropout", {}, {"y", "mask"});
  EXPECT_EQ(values(out[0]), (std::vector<double>{-1, 2, -3, 4}));
  EXPECT_EQ(out[1].dtype(), DataType::boolean());
  EXPECT_EQ(values(out[1]), (std::vector<double>{1, 1, 1, 1}));
  NDArray yes = NDArray::empty({}, DataType::boolean());
  yes.set(0, 1);
  std::string e = error_of([&] { OneNode().input("x", {2}).omitted().constant("t", yes).infer("Dropout"); });
  EXPECT_NE(e.find("training mode is not supported"), std::string::npos) << e;
}

TEST(GraphOpsLogical, ComparisonsAndWhereBroadcast) {
  NDArray a = array({2, 2}, f32, {1, 2, 3, 4});
  NDArray b = array({2}, f32, {2, 2});
  EXPECT_EQ(OneNode().input("a", {2, 2}).input("b", {2}).infer("Less"), "bool[2,2]");
  EXPECT_EQ(values(OneNode().feed("a", a).feed("b", b).run("Equal")[0]), (std::vector<double>{0, 1, 0, 0}));
  EXPECT_EQ(values(OneNode().feed("a", a).feed("b", b).run("Greater")[0]), (std::vector<double>{0, 0, 1, 1}));
  EXPECT_EQ(values(OneNode().feed("a", a).feed("b", b).run("Less")[0]), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(values(OneNode().feed("a", a).feed("b", b).run("LessOrEqual")[0]), (std::vector<double>{1, 1, 0, 0}));
  EXPECT_EQ(values(OneNode().feed("a", a).feed("b", b).run("GreaterOrEqual")[0]), (std::vector<double>{0, 1, 1, 1}));
  NDArray mask = array({2}, DataType::boolean(), {1, 0});
  NDArray fill = array({}, f32, {-100});
  EXPECT_EQ(values(OneNode().feed("m", mask).feed("a", a).feed("f", fill).run("Where")[0]),
            (std::vector<double>{1, -100, 3, -100}));
  NDArray p = array({4}, DataType::boolean(), {0, 0, 1, 1});
  NDArray q = array({4}, DataType::boolean(), {0, 1, 0, 1});
  EXPECT_EQ(values(OneNode().feed("p", p).feed("q", q).run("And")[0]), (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(values(OneNode().feed("p", p).feed("q", q).run("Or")[0]), (std::vector<double>{0, 1, 1, 1}));
  EXPECT_EQ(values(OneNode().feed("p", p).feed("q", q).run("Xor")[0]), (std::vector<double>{0, 1, 1, 0}));
  EXPECT_EQ(values(OneNode().feed("p", p).run("Not")[0]), (std::vector<double>{1, 1, 0, 0}));
  std::string e = error_of([] { OneNode().input("a", {2}).input("b", {2}).infer("And"); });
  EXPECT_NE(e.find("And node 'n': input float32[2] is not bool"), std::string::npos) << e;
  e = error_of([] { OneNode().input("c", {2}).input("a", {2}).input("b", {2}).infer("Where"); });
  EXPECT_NE(e.find("input condition is float32[2], not bool"), std::string::npos) << e;
}

TEST(GraphOpsLogical, IsNaNAndIsInfBySign) {
  double inf = std::numeric_limits<double>::infinity();
  NDArray x = array({4}, f32, {std::nan(""), inf, -inf, 1});
  EXPECT_EQ(values(OneNode().feed("x", x).run("IsNaN")[0]), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(values(OneNode().feed("x", x).run("IsInf")[0]), (std::vector<double>{0, 1, 1, 0}));
  EXPECT_EQ(values(OneNode().feed("x", x).run("IsInf", attrs({{"detect_positive", int64_t{0}}}))[0]),
            (std::vector<double>{0, 0, 1, 0}));
}

TEST(GraphOpsReduce, ReductionsAxesAndKeepdims) {
  EXPECT_EQ(OneNode().input("x", {2, 3, 4}).infer("ReduceMean", attrs({{"axes", I{-1, 0}}})), "float32[1,3,1]");
  EXPECT_EQ(OneNode().input("x", {2, 3, 4}).infer("ReduceMean", attrs({{"keepdims", int64_t{0}}})), "float32[]");
  auto reduce = [](const std::string& op, Attributes a) {
    return values(OneNode().feed("x", iota({2, 3})).run(op, a)[0]);
  };
  Attributes rows = attrs({{"axes", I{1}}, {"keepdims", int64_t{0}}});
  expect_near(reduce("ReduceMean", rows), {2, 5});
  expect_near(reduce("ReduceMax", rows), {3, 6});
  expect_near(reduce("ReduceMin", rows), {1, 4});
  expect_near(reduce("ReduceProd", rows), {6, 120});
  expect_near(reduce("ReduceSumSquare", rows), {14, 77});
  expect_near(reduce("ReduceL1", rows), {6, 15});
  expect_near(reduce("ReduceL2", rows), {std::sqrt(14.0), std::sqrt(77.0)});
  expect_near(reduce("ReduceLogSum", rows), {std::log(6.0), std::log(15.0)});
  expect_near(reduce("ReduceLogSumExp", rows), {std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)),
                                                std::log(std::exp(4.0) + std::exp(5.0) + std::exp(6.0))});
  // LogSumExp does not overflow where e^x would.
  expect_near(values(OneNode().feed("x", array({2}, f32, {1000, 1000})).run("ReduceLogSumExp")[0]),
              {1000 + std::log(2.0)}, 1e-3);
}

TEST(GraphOpsReduce, ReduceSumAxesInputFromOpset13) {
  EXPECT_EQ(values(OneNode(11).feed("x", iota({2, 3})).run("ReduceSum", attrs({{"axes", I{0}}}))[0]),
            (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(values(OneNode(13).feed("x", iota({2, 3})).constant("axes", ints({1})).run("ReduceSum")[0]),
            (std::vector<double>{6, 15}));
  // No axes: all of them, or none with noop_with_empty_axes=1.
  EXPECT_EQ(values(OneNode(13).feed("x", iota({2, 3})).run("ReduceSum")[0]), (std::vector<double>{21}));
  EXPECT_EQ(
      values(OneNode(13).feed("x", iota({2, 3})).run("ReduceSum", attrs({{"noop_with_empty_axes", int64_t{1}}}))[0]),
      (std::vector<double>{1, 2, 3, 4, 5, 6}));
  std::string e = error_of([] { OneNode(13).input("x", {2, 3}).input("axes", {1}, i64).infer("ReduceSum"); });
  EXPECT_NE(e.find("input 1 (axes) 'axes' must be a constant"), std::string::npos) << e;
}

TEST(GraphOpsReduce, ArgMaxFirstOrLastIndex) {
  NDArray x = array({2, 3}, f32, {1, 3, 3, 2, 0, 2});
  EXPECT_EQ(OneNode().input("x", {2, 3}).infer("ArgMax", attrs({{"axis", int64_t{1}}})), "int64[2,1]");
  EXPECT_EQ(values(OneNode().feed("x", x).run("ArgMax", attrs({{"axis", int64_t{1}}}))[0]),
            (std::vector<double>{1, 0}));
  EXPECT_EQ(
      values(OneNode().feed("x", x).run("ArgMax", attrs({{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}}))[0]),
      (std::vector<double>{2, 2}));
  EXPECT_EQ(values(OneNode().feed("x", x).run("ArgMin", attrs({{"keepdims", int64_t{0}}}))[0]),
            (std::vector<double>{0, 1, 1}));
}

TEST(GraphOpsNn, LogSoftmaxIsStable) {
  expect_near(values(OneNode().feed("x", array({1, 3}, f32, {1000, 1000, 1000})).run("LogSoftmax")[0]),
              {-std::log(3.0), -std::log(3.0), -std::log(3.0)}, 1e-4);
}

// ---------------------------------------------------------------- Conv, Gemm, MatMul

TEST(GraphOpsNn, ConvShapes) {
  // Groups, strides, dilations, pads: the dilated 3x3 kernel spans 5.
  EXPECT_EQ(
      OneNode()
          .input("x", {1, 4, 7, 7})
          .input("w", {8, 2, 3, 3})
          .infer("Conv",
                 attrs({{"group", int64_t{2}}, {"strides", I{2, 2}}, {"dilations", I{2, 2}}, {"pads", I{1, 1, 1, 1}}})),
      "float32[1,8,3,3]");
  // SAME_UPPER: ceil(5 / 2) = 3 whatever the kernel; VALID: floor((5 - 3) / 2) + 1 = 2.
  EXPECT_EQ(OneNode()
                .input("x", {1, 1, 5, 5})
                .input("w", {1, 1, 3, 3})
                .infer("Conv", attrs({{"auto_pad", std::string("SAME_UPPER")}, {"strides", I{2, 2}}})),
            "float32[1,1,3,3]");
  EXPECT_EQ(OneNode()
                .input("x", {1, 1, 5, 5})
                .input("w", {1, 1, 3, 3})
                .infer("Conv", attrs({{"auto_pad", std::string("VALID")}, {"strides", I{2, 2}}})),
            "float32[1,1,2,2]");
  // 1-D with asymmetric pads.
  EXPECT_EQ(OneNode().input("x", {2, 3, 10}).input("w", {4, 3, 3}).infer("Conv", attrs({{"pads", I{0, 2}}})),
            "float32[2,4,10]");
}

TEST(GraphOpsErrors, ConvAttributesAndShapes) {
  std::string e = error_of([] {
    OneNode()
        .input("x", {1, 1, 5, 5})
        .input("w", {1, 1, 3, 3})
        .infer("Conv", attrs({{"auto_pad", std::string("SAME")}}));
  });
  EXPECT_NE(e.find("Conv node 'n': auto_pad 'SAME' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID"),
            std::string::npos)
      << e;
  e = error_of([] { OneNode().input("x", {1, 6, 5, 5}).input("w", {4, 2, 3, 3}).infer("Conv"); });
  EXPECT_NE(e.find("do not fit group=1"), std::string::npos) << e;
  e = error_of([] { OneNode().input("x", {1, 1, 4, 4, 4}).input("w", {1, 1, 3, 3, 3}).infer("Conv"); });
  EXPECT_NE(e.find("Temper serves 1-D and 2-D convolutions"), std::string::npos) << e;
}

TEST(GraphOpsNn, ConvWithPadsStridesAndBias) {
  // The 3x3 input 1..9 padded by 1, a 2x2 kernel of ones at stride 2, plus 10.
  OneNode t;
  t.feed("x", iota({1, 1, 3, 3})).feed("w", array({1, 1, 2, 2}, f32, {1, 1, 1, 1})).feed("b", array({1}, f32, {10}));
  std::vector<NDArray> y = t.run("Conv", attrs({{"pads", I{1, 1, 1, 1}}, {"strides", I{2, 2}}}));
  EXPECT_EQ(y[0].shape(), (I{1, 1, 2, 2}));
  EXPECT_EQ(values(y[0]), (std::vector<double>{11, 15, 21, 38}));
}

TEST(GraphOpsNn, ConvSamePadsTheOddUnitAtTheEndOrTheBeginning) {
  auto run = [](const std::string& auto_pad) {
    OneNode t;
    t.feed("x", iota({1, 1, 1, 3})).feed("w", array({1, 1, 1, 2}, f32, {1, 10}));
    return values(t.run("Conv", attrs({{"auto_pad", auto_pad}}))[0]);
  };
  EXPECT_EQ(run("SAME_UPPER"), (std::vector<double>{21, 32, 3}));
  EXPECT_EQ(run("SAME_LOWER"), (std::vector<double>{10, 21, 32}));
}

TEST(GraphOpsNn, Conv1dAndGroups) {
  OneNode t;
  t.feed("x", iota({1, 1, 5})).feed("w", array({1, 1, 3}, f32, {1, 0, -1}));
  EXPECT_EQ(values(t.run("Conv", attrs({{"pads", I{1, 1}}}))[0]), (std::vector<double>{-2, -2, -2, -2, 4}));
  // Two groups of one channel: each output channel sees its own input channel only.
  OneNode g;
  g.feed("x", iota({1, 2, 1, 2})).feed("w", array({2, 1, 1, 1}, f32, {10, 100}));
  EXPECT_EQ(values(g.run("Conv", attrs({{"group", int64_t{2}}}))[0]), (std::vector<double>{10, 20, 300, 400}));
}

TEST(GraphOpsNn, GemmShapesAndEpilogue) {
  EXPECT_EQ(OneNode()
                .input("a", {4, 3})
                .input("b", {5, 4})
                .infer("Gemm", attrs({{"transA", int64_t{1}}, {"transB", int64_t{1}}})),
            "float32[3,5]");
  std::string e = error_of([] { OneNode().input("a", {2, 3}).input("b", {3, 4}).input("c", {3, 4}).infer("Gemm"); });
  EXPECT_NE(e.find("Gemm node 'n': input C float32[3,4]"), std::string::npos) << e;
  // Y = 2 * A B^T + 0.5 * C, C broadcast along the rows.
  OneNode t;
  t.feed("a", iota({2, 2})).feed("b", array({2, 2}, f32, {1, 0, 1, 1})).feed("c", array({2}, f32, {10, 20}));
  std::vector<NDArray> y = t.run("Gemm", attrs({{"transB", int64_t{1}}, {"alpha", 2.0}, {"beta", 0.5}}));
  // A B^T = [[1, 3], [3, 7]].
  expect_near(values(y[0]), {7, 16, 11, 24});
}

TEST(GraphOpsNn, MatMulShapesFollowNumpy) {
  EXPECT_EQ(OneNode().input("a", {2, 1, 3, 4}).input("b", {5, 4, 6}).infer("MatMul"), "float32[2,5,3,6]");
  EXPECT_EQ(OneNode().input("a", {4}).input("b", {2, 4, 6}).infer("MatMul"), "float32[2,6]");
  EXPECT_EQ(OneNode().input("a", {3, 4}).input("b", {4}).infer("MatMul"), "float32[3]");
  EXPECT_EQ(OneNode().input("a", {4}).input("b", {4}).infer("MatMul"), "float32[]");
  std::string e = error_of([] { OneNode().input("a", {3, 4}).input("b", {5, 6}).infer("MatMul"); });
  EXPECT_NE(e.find("MatMul node 'n': A float32[3,4] and B float32[5,6] have inner extents 4 and 5"), std::string::npos)
      << e;
}

TEST(GraphOpsNn, MatMulBatchBroadcastAndVectors) {
  OneNode t;
  t.feed("a", array({2, 1, 2}, f32, {1, 2, 3, 4})).feed("b", array({2, 1}, f32, {5, 6}));
  EXPECT_EQ(values(t.run("MatMul")[0]), (std::vector<double>{17, 39}));
  // The batch of B broadcasts against A's missing one.
  OneNode u;
  u.feed("a", array({1, 2}, f32, {1, 1})).feed("b", array({3, 2, 1}, f32, {1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(values(u.run("MatMul")[0]), (std::vector<double>{3, 7, 11}));
  OneNode v;
  v.feed("a", array({2}, f32, {1, 2})).feed("b", array({2}, f32, {3, 4}));
  std::vector<NDArray> dot = v.run("MatMul");
  EXPECT_EQ(dot[0].ndim(), 0);
  EXPECT_EQ(values(dot[0]), (std::vector<double>{11}));
}

// ---------------------------------------------------------------- pooling

TEST(GraphOpsNn, PoolShapes) {
  auto pool = [](const std::string& op, I in, Attributes a) { return OneNode().input("x", in).infer(op, a); };
  Attributes k3s2 = attrs({{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}});
  EXPECT_EQ(pool("MaxPool", {1, 1, 4, 4}, k3s2), "float32[1,1,1,1]");
  k3s2.set("ceil_mode", int64_t{1});
  EXPECT_EQ(pool("AveragePool", {1, 1, 4, 4}, k3s2), "float32[1,1,2,2]");
  // ceil_mode rounds up (2 windows, not 1), but a window may not start past the input (2, not 3).
  Attributes ceil_s3 = attrs({{"kernel_shape", I{2}}, {"strides", I{3}}, {"ceil_mode", int64_t{1}}});
  EXPECT_EQ(pool("MaxPool", {1, 1, 4}, ceil_s3), "float32[1,1,2]");
  ceil_s3.set("kernel_shape", I{1});
  EXPECT_EQ(pool("MaxPool", {1, 1, 5}, ceil_s3), "float32[1,1,2]");
  EXPECT_EQ(pool("MaxPool", {1, 2, 5, 5},
                 attrs({{"kernel_shape", I{2, 2}}, {"auto_pad", std::string("SAME_LOWER")}, {"strides", I{2, 2}}})),
            "float32[1,2,3,3]");
  EXPECT_EQ(pool("MaxPool", {1, 1, 6, 6}, attrs({{"kernel_shape", I{2, 2}}, {"dilations", I{2, 2}}})),
            "float32[1,1,4,4]");
  EXPECT_EQ(OneNode().input("x", {2, 3, 5, 7}).infer("GlobalAveragePool"), "float32[2,3,1,1]");
  std::string e = error_of([] {
    OneNode().input("x", {1, 1, 4, 4}).infer("MaxPool", attrs({{"kernel_shape", I{2, 2}}}), {"y", "indices"});
  });
  EXPECT_NE(e.find("MaxPool node 'n': the Indices output is not supported"), std::string::npos) << e;
}

TEST(GraphOpsNn, PoolingWithCeilMode) {
  // ONNX's test_maxpool_2d_ceil and test_averagepool_2d_ceil: the last windows are clipped.
  Attributes a = attrs({{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}, {"ceil_mode", int64_t{1}}});
  EXPECT_EQ(values(OneNode().feed("x", iota({1, 1, 4, 4})).run("MaxPool", a)[0]),
            (std::vector<double>{11, 12, 15, 16}));
  expect_near(values(OneNode().feed("x", iota({1, 1, 4, 4})).run("AveragePool", a)[0]), {6, 7.5, 12, 13.5});
}

TEST(GraphOpsNn, AveragePoolCountsPaddingOnlyWhenAsked) {
  Attributes a = attrs({{"kernel_shape", I{2, 2}}, {"pads", I{1, 1, 1, 1}}});
  // The corner window holds x[0, 0] = 1 and three padding elements.
  std::vector<double> excluded = values(OneNode().feed("x", iota({1, 1, 2, 2})).run("AveragePool", a)[0]);
  expect_near(excluded, {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
  a.set("count_include_pad", int64_t{1});
  std::vector<double> included = values(OneNode().feed("x", iota({1, 1, 2, 2})).run("AveragePool", a)[0]);
  expect_near(included, {0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1});
}

TEST(GraphOpsNn, MaxPoolDilationsAndIntegers) {
  // A 2x2 window with dilation 2 over 1..16 reads (0,0), (0,2), (2,0), (2,2) from each corner.
  Attributes a = attrs({{"kernel_shape", I{2, 2}}, {"dilations", I{2, 2}}});
  EXPECT_EQ(values(OneNode().feed("x", iota({1, 1, 4, 4})).run("MaxPool", a)[0]),
            (std::vector<double>{11, 12, 15, 16}));
  // Padding never wins, also for int8 (its lowest value is the padding).
  NDArray x = array({1, 1, 1, 2}, DataType::int8(), {-100, -120});
  Attributes p = attrs({{"kernel_shape", I{1, 2}}, {"pads", I{0, 1, 0, 1}}});
  EXPECT_EQ(values(OneNode().feed("x", x).run("MaxPool", p)[0]), (std::vector<double>{-100, -100, -120}));
}

// ---------------------------------------------------------------- normalisations

TEST(GraphOpsNn, SoftmaxAxisByOpset) {
  // Zeros: before opset 13 axis 1 normalises over the 4 trailing elements, from 13 over 2.
  NDArray zeros = NDArray::zeros({2, 2, 2}, f32);
  expect_near(values(OneNode(11).feed("x", zeros).run("Softmax")[0]), std::vector<double>(8, 0.25));
  expect_near(values(OneNode(13).feed("x", zeros).run("Softmax", attrs({{"axis", int64_t{1}}}))[0]),
              std::vector<double>(8, 0.5));
  expect_near(values(OneNode(13).feed("x", array({2}, f32, {0, std::log(3.0)})).run("Softmax")[0]), {0.25, 0.75});
  std::string e = error_of([] { OneNode().input("x", {2, 3}).infer("Softmax", attrs({{"axis", int64_t{2}}})); });
  EXPECT_NE(e.find("Softmax node 'n': axis 2 is out of range for rank 2"), std::string::npos) << e;
}

TEST(GraphOpsNn, LayerNormalizationWithStatistics) {
  OneNode t;
  t.feed("x", iota({1, 4})).feed("scale", array({4}, f32, {1, 1, 2, 2})).feed("b", array({4}, f32, {0, 0, 0, 1}));
  EXPECT_EQ(OneNode()
                .input("x", {2, 3, 4})
                .input("s", {3, 4})
                .infer("LayerNormalization", attrs({{"axis", int64_t{1}}}), {"y", "mean", "inv_std"}),
            "float32[2,3,4] float32[2,1,1] float32[2,1,1]");
  std::vector<NDArray> out = t.run("LayerNormalization", {}, {"y", "mean", "inv_std"});
  double inv_std = 1 / std::sqrt(1.25 + 1e-5);
  expect_near(values(out[0]), {-1.5 * inv_std, -0.5 * inv_std, 1.0 * inv_std, 3.0 * inv_std + 1});
  expect_near(values(out[1]), {2.5});
  expect_near(values(out[2]), {inv_std});
}

TEST(GraphOpsNn, BatchNormalizationAndGlobalAveragePool) {
  OneNode t;
  t.feed("x", iota({1, 2, 1, 2}))
      .constant("scale", array({2}, f32, {1, 2}))
      .constant("b", array({2}, f32, {0, 1}))
      .constant("mean", array({2}, f32, {1, 3}))
      .constant("var", array({2}, f32, {4, 1}));
  // (x - mean) / sqrt(var + eps) * scale + b with eps = 0.
  expect_near(values(t.run("BatchNormalization", attrs({{"epsilon", 0.0}}))[0]), {0, 0.5, 1, 3});
  expect_near(values(OneNode().feed("x", iota({1, 2, 2, 2})).run("GlobalAveragePool")[0]), {2.5, 6.5});
  std::string e = error_of([] {
    OneNode t;
    t.input("x", {1, 2}).input("s", {2}).input("b", {2}).input("m", {2}).input("v", {2});
    t.infer("BatchNormalization", {}, {"y", "running_mean", "running_var"});
  });
  EXPECT_NE(e.find("training mode"), std::string::npos) << e;
}

TEST(GraphOpsReduce, CumSumExclusiveAndReverse) {
  NDArray x = array({4}, f32, {1, 2, 3, 4});
  NDArray axis = NDArray::empty({}, i64);
  axis.data_as<int64_t>()[0] = 0;
  auto cumsum = [&](Attributes a) { return values(OneNode().feed("x", x).constant("axis", axis).run("CumSum", a)[0]); };
  EXPECT_EQ(cumsum({}), (std::vector<double>{1, 3, 6, 10}));
  EXPECT_EQ(cumsum(attrs({{"exclusive", int64_t{1}}})), (std::vector<double>{0, 1, 3, 6}));
  EXPECT_EQ(cumsum(attrs({{"reverse", int64_t{1}}})), (std::vector<double>{10, 9, 7, 4}));
  EXPECT_EQ(cumsum(attrs({{"reverse", int64_t{1}}, {"exclusive", int64_t{1}}})), (std::vector<double>{9, 7, 4, 0}));
}

TEST(GraphOpsNn, HardmaxAndInstanceNormalization) {
  EXPECT_EQ(values(OneNode().feed("x", array({2, 3}, f32, {1, 3, 3, 5, 0, 2})).run("Hardmax")[0]),
            (std::vector<double>{0, 1, 0, 1, 0, 0}));
  // Each (n, c) plane to mean 0, variance 1, then * scale[c] + B[c].
  OneNode t;
  t.feed("x", array({1, 2, 2}, f32, {1, 3, 10, 12}))
      .feed("s", array({2}, f32, {2, 1}))
      .feed("b", array({2}, f32, {0, 5}));
  expect_near(values(t.run("InstanceNormalization")[0]), {-2, 2, 4, 6}, 1e-3);
}

TEST(GraphOpsNn, NegativeLogLikelihoodWeightsAndIgnoredTargets) {
  // log-probabilities [N=2, C=3]; targets 2 and 0 with weights [1, 2, 3].
  NDArray log_p = array({2, 3}, f32, {-1, -2, -3, -4, -5, -6});
  NDArray target = array({2}, i64, {2, 0});
  NDArray weight = array({3}, f32, {1, 2, 3});
  auto nll = [&](Attributes a) {
    return values(
        OneNode().feed("p", log_p).feed("t", target).feed("w", weight).run("NegativeLogLikelihoodLoss", a)[0]);
  };
  expect_near(nll(attrs({{"reduction", std::string("none")}})), {9, 4});
  expect_near(nll(attrs({{"reduction", std::string("sum")}})), {13});
  expect_near(nll({}), {13.0 / 4});
  expect_near(nll(attrs({{"ignore_index", int64_t{0}}})), {3});
  std::string e = error_of([] {
    OneNode().input("p", {2, 3}).input("t", {3}, i64).infer("NegativeLogLikelihoodLoss");
  });
  EXPECT_NE(e.find("scores float32[2,3] and targets int64[3] do not fit"), std::string::npos) << e;
}

TEST(GraphOpsTensor, OneHotAndEyeLike) {
  NDArray index = array({3}, i64, {0, -1, 2});
  NDArray depth = array({}, i64, {3});
  NDArray off_on = array({2}, f32, {0, 5});
  OneNode t;
  t.feed("i", index).constant("depth", depth).feed("v", off_on);
  EXPECT_EQ(values(t.run("OneHot")[0]), (std::vector<double>{5, 0, 0, 0, 0, 5, 0, 0, 5}));
  std::vector<NDArray> eye =
      OneNode().feed("x", iota({2, 3})).run("EyeLike", attrs({{"k", int64_t{1}}, {"dtype", int64_t{7}}}));
  EXPECT_EQ(eye[0].dtype(), i64);
  EXPECT_EQ(values(eye[0]), (std::vector<double>{0, 1, 0, 0, 0, 1}));
}

TEST(GraphOpsElementwise, TrigonometricFunctions) {
  NDArray x = array({3}, f32, {-0.5, 0, 0.75});
  expect_near(values(OneNode().feed("x", x).run("Sin")[0]), {std::sin(-0.5), 0, std::sin(0.75)});
  expect_near(values(OneNode().feed("x", x).run("Cos")[0]), {std::cos(-0.5), 1, std::cos(0.75)});
  expect_near(values(OneNode().feed("x", x).run("Tan")[0]), {std::tan(-0.5), 0, std::tan(0.75)});
  expect_near(values(OneNode().feed("x", x).run("Asin")[0]), {std::asin(-0.5), 0, std::asin(0.75)});
  expect_near(values(OneNode().feed("x", x).run("Acos")[0]), {std::acos(-0.5), std::acos(0.0), std::acos(0.75)});
  expect_near(values(OneNode().feed("x", x).run("Atan")[0]), {std::atan(-0.5), 0, std::atan(0.75)});
}

TEST(GraphOpsNn, ConvTransposeStridesBiasAndOutputShape) {
  NDArray x = array({1, 1, 2}, f32, {1, 2});
  NDArray w = array({1, 1, 2}, f32, {1, 10});
  EXPECT_EQ(values(OneNode().feed("x", x).feed("w", w).run("ConvTranspose", attrs({{"strides", I{2}}}))[0]),
            (std::vector<double>{1, 10, 2, 20}));
  // Stride 1: the two inputs' windows overlap and add; the bias adds to every output.
  EXPECT_EQ(values(OneNode().feed("x", x).feed("w", w).feed("b", array({1}, f32, {1})).run("ConvTranspose")[0]),
            (std::vector<double>{2, 13, 21}));
  // An output_shape beyond what the input reaches pads zeros at the end.
  EXPECT_EQ(values(OneNode().feed("x", x).feed("w", w).run("ConvTranspose",
                                                           attrs({{"strides", I{2}}, {"output_shape", I{5}}}))[0]),
            (std::vector<double>{1, 10, 2, 20, 0}));
  EXPECT_EQ(OneNode()
                .input("x", {1, 4, 5, 5})
                .input("w", {4, 3, 3, 3})
                .infer("ConvTranspose", attrs({{"group", int64_t{2}}, {"strides", I{2, 2}}, {"pads", I{1, 1, 1, 1}}})),
            "float32[1,6,9,9]");
  std::string e = error_of([] { OneNode().input("x", {1, 4, 5}).input("w", {3, 2, 3}).infer("ConvTranspose"); });
  EXPECT_NE(e.find("weight W float32[3,2,3] must have X's 4 channels first"), std::string::npos) << e;
}

TEST(GraphOpsNn, ResizeNearestAndLinearByCoordinateMode) {
  NDArray x = array({1, 1, 1, 2}, f32, {1, 2});
  // Opset 10: asymmetric coordinates, nearest floors.
  EXPECT_EQ(values(OneNode(10).feed("x", x).constant("s", array({4}, f32, {1, 1, 1, 2})).run("Resize")[0]),
            (std::vector<double>{1, 1, 2, 2}));
  // Opset 13, linear, half_pixel: coordinates -0.25, 0.25, 0.75, 1.25, clamped to [0, 1].
  OneNode linear(13);
  linear.feed("x", x).omitted().constant("s", array({4}, f32, {1, 1, 1, 2}));
  expect_near(values(linear.run("Resize", attrs({{"mode", std::string("linear")}}))[0]), {1, 1.25, 1.75, 2});
  OneNode corners(13);
  corners.feed("x", x).omitted().omitted().constant("sizes", ints({1, 1, 1, 3}));
  expect_near(
      values(corners.run("Resize", attrs({{"mode", std::string("linear")},
                                          {"coordinate_transformation_mode", std::string("align_corners")}}))[0]),
      {1, 1.5, 2});
  // Cubic convolution with a = -0.5 (Keys') reproduces a ramp wherever its four taps stay
  // inside (each output's half_pixel coordinate (o + 0.5) / 2 - 0.5 from o = 3 to 12).
  std::vector<double> ramp;
  for (int k = 0; k < 8; ++k) ramp.push_back(k);
  OneNode cubic(13);
  cubic.feed("x", array({8}, f32, ramp)).omitted().constant("s", array({1}, f32, {2}));
  std::vector<double> y =
      values(cubic.run("Resize", attrs({{"mode", std::string("cubic")}, {"cubic_coeff_a", -0.5}}))[0]);
  ASSERT_EQ(y.size(), 16u);
  for (int o = 3; o <= 12; ++o) EXPECT_NEAR(y[o], (o + 0.5) / 2 - 0.5, 1e-5) << "output " << o;
  std::string e = error_of([] {
    OneNode(10)
        .input("x", {1, 2})
        .constant("s", array({2}, f32, {1, 2}))
        .infer("Resize", attrs({{"mode", std::string("cubic")}}));
  });
  EXPECT_NE(e.find("mode=\"cubic\" is none of \"nearest\" and \"linear\""), std::string::npos) << e;
}

// ---------------------------------------------------------------- tensor ops

TEST(GraphOpsTensor, ConstantOfShapeRangeAndSize) {
  NDArray seven = NDArray::empty({1}, i64);
  seven.data_as<int64_t>()[0] = 7;
  std::vector<NDArray> out = OneNode().constant("s", ints({2, 2})).run("ConstantOfShape", attrs({{"value", seven}}));
  EXPECT_EQ(out[0].dtype(), i64);
  EXPECT_EQ(values(out[0]), (std::vector<double>{7, 7, 7, 7}));
  EXPECT_EQ(OneNode().constant("s", ints({3})).infer("ConstantOfShape"), "float32[3]");
  OneNode range;
  range.constant("start", array({}, f32, {1}))
      .constant("limit", array({}, f32, {2.2}))
      .constant("delta", array({}, f32, {0.5}));
  expect_near(values(range.run("Range")[0]), {1, 1.5, 2});
  EXPECT_EQ(OneNode().input("x", {2, 3, 4}).infer("Size"), "int64[]");
}

TEST(GraphOpsTensor, ExpandTileSplitTrilu) {
  NDArray x = array({2, 1}, f32, {1, 2});
  EXPECT_EQ(values(OneNode().feed("x", x).constant("s", ints({2, 3})).run("Expand")[0]),
            (std::vector<double>{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(OneNode().input("x", {2, 1}).constant("s", ints({3, 1, 1})).infer("Expand"), "float32[3,2,1]");
  EXPECT_EQ(values(OneNode().feed("x", x).constant("r", ints({2, 2})).run("Tile")[0]),
            (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2}));
  std::vector<NDArray> parts =
      OneNode(13).feed("x", iota({5})).constant("split", ints({2, 3})).run("Split", {}, {"a", "b"});
  EXPECT_EQ(values(parts[0]), (std::vector<double>{1, 2}));
  EXPECT_EQ(values(parts[1]), (std::vector<double>{3, 4, 5}));
  std::string e = error_of([] { OneNode().input("x", {5}).infer("Split", {}, {"a", "b"}); });
  EXPECT_NE(e.find("does not split into 2 equal parts"), std::string::npos) << e;
  EXPECT_EQ(values(OneNode().feed("x", iota({3, 3})).run("Trilu", attrs({{"upper", int64_t{0}}}))[0]),
            (std::vector<double>{1, 0, 0, 4, 5, 0, 7, 8, 9}));
  NDArray k = NDArray::empty({}, i64);
  k.data_as<int64_t>()[0] = 1;
  EXPECT_EQ(values(OneNode().feed("x", iota({2, 3})).constant("k", k).run("Trilu")[0]),
            (std::vector<double>{0, 2, 3, 0, 0, 6}));
}

TEST(GraphOpsTensor, DepthToSpaceAndBackAndGatherElements) {
  // DCR: channel (i*b + j)*C + c lands at (h*b + i, w*b + j).
  NDArray x = iota({1, 4, 1, 1});
  EXPECT_EQ(values(OneNode().feed("x", x).run("DepthToSpace", attrs({{"blocksize", int64_t{2}}}))[0]),
            (std::vector<double>{1, 2, 3, 4}));
  NDArray y = iota({1, 1, 2, 2});
  EXPECT_EQ(values(OneNode().feed("z", y).run("SpaceToDepth", attrs({{"blocksize", int64_t{2}}}))[0]),
            (std::vector<double>{1, 2, 3, 4}));
  NDArray crd = iota({1, 8, 1, 1});
  EXPECT_EQ(values(OneNode().feed("x", crd).run("DepthToSpace",
                                                attrs({{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}}))[0]),
            (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}));
  NDArray data = iota({2, 2});
  NDArray index = array({2, 2}, i64, {0, 0, 1, -2});
  EXPECT_EQ(values(OneNode().feed("d", data).feed("i", index).run("GatherElements", attrs({{"axis", int64_t{1}}}))[0]),
            (std::vector<double>{1, 1, 4, 3}));
}

TEST(GraphOpsTensor, TopKOrdersTiesByIndex) {
  NDArray x = array({2, 4}, f32, {3, 1, 3, 2, 0, 5, 5, 4});
  NDArray k = ints({2});
  std::vector<NDArray> largest = OneNode().feed("x", x).constant("k", k).run("TopK", {}, {"v", "i"});
  EXPECT_EQ(values(largest[0]), (std::vector<double>{3, 3, 5, 5}));
  EXPECT_EQ(values(largest[1]), (std::vector<double>{0, 2, 1, 2}));
  std::vector<NDArray> smallest =
      OneNode().feed("x", x).constant("k", k).run("TopK", attrs({{"largest", int64_t{0}}}), {"v", "i"});
  EXPECT_EQ(values(smallest[0]), (std::vector<double>{1, 2, 0, 4}));
  EXPECT_EQ(values(smallest[1]), (std::vector<double>{1, 3, 0, 3}));
  std::string e = error_of([] { OneNode().input("x", {2, 4}).constant("k", ints({5})).infer("TopK", {}, {"v", "i"}); });
  EXPECT_NE(e.find("K=5 is outside [1, 4]"), std::string::npos) << e;
}

TEST(GraphOpsTensor, GatherNDAndScatterND) {
  NDArray data = iota({2, 2});
  EXPECT_EQ(values(OneNode().feed("d", data).feed("i", array({2, 2}, i64, {0, 0, 1, 1})).run("GatherND")[0]),
            (std::vector<double>{1, 4}));
  EXPECT_EQ(values(OneNode().feed("d", data).feed("i", array({2, 1}, i64, {1, -2})).run("GatherND")[0]),
            (std::vector<double>{3, 4, 1, 2}));
  EXPECT_EQ(
      OneNode().input("d", {2, 3, 4}).input("i", {2, 1}, i64).infer("GatherND", attrs({{"batch_dims", int64_t{1}}})),
      "float32[2,4]");
  NDArray updates = array({2}, f32, {10, 20});
  NDArray where = array({2, 2}, i64, {0, 1, 1, 0});
  EXPECT_EQ(values(OneNode().feed("d", data).feed("i", where).feed("u", updates).run("ScatterND")[0]),
            (std::vector<double>{1, 10, 20, 4}));
  NDArray twice = array({2, 2}, i64, {0, 1, 0, 1});
  EXPECT_EQ(values(OneNode()
                       .feed("d", data)
                       .feed("i", twice)
                       .feed("u", updates)
                       .run("ScatterND", attrs({{"reduction", std::string("add")}}))[0]),
            (std::vector<double>{1, 32, 3, 4}));
}

TEST(GraphOpsNn, EinsumMatmulFormsAndImplicitOutput) {
  NDArray a = iota({2, 3});
  NDArray b = iota({3, 2});
  EXPECT_EQ(
      values(OneNode().feed("a", a).feed("b", b).run("Einsum", attrs({{"equation", std::string("ij,jk->ik")}}))[0]),
      (std::vector<double>{22, 28, 49, 64}));
  // Implicit output: the letters used once, alphabetically ("ik").
  EXPECT_EQ(values(OneNode().feed("a", a).feed("b", b).run("Einsum", attrs({{"equation", std::string("ij,jk")}}))[0]),
            (std::vector<double>{22, 28, 49, 64}));
  EXPECT_EQ(values(OneNode().feed("a", a).run("Einsum", attrs({{"equation", std::string("ij->ji")}}))[0]),
            (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(values(OneNode().feed("a", iota({2, 2})).run("Einsum", attrs({{"equation", std::string("ii->i")}}))[0]),
            (std::vector<double>{1, 4}));
  std::string e = error_of([] {
    OneNode().input("a", {2, 3}).input("b", {2, 2}).infer("Einsum", attrs({{"equation", std::string("ij,jk->ik")}}));
  });
  EXPECT_NE(e.find("letter 'j' of equation \"ij,jk->ik\" stands for both 3 and 2"), std::string::npos) << e;
}

TEST(GraphOpsNn, EinsumEllipsisAlignsRightAndBroadcasts) {
  auto einsum = [](OneNode& node, const char* equation) {
    return values(node.run("Einsum", attrs({{"equation", std::string(equation)}}))[0]);
  };
  // Dimensions under an ellipsis the output leaves out are summed.
  EXPECT_EQ(einsum(OneNode().feed("a", iota({2, 3})), "...j->j"), (std::vector<double>{5, 7, 9}));
  // A batch of 2 against a term without an ellipsis.
  EXPECT_EQ(einsum(OneNode().feed("a", iota({2, 1, 2})).feed("b", iota({2, 1})), "...ij,...jk->...ik"),
            (std::vector<double>{5, 11}));
  // An extent of 1 stretches to the other input's 3.
  EXPECT_EQ(einsum(OneNode().feed("a", iota({1, 2})).feed("b", iota({3, 2})), "...i,...i->..."),
            (std::vector<double>{5, 11, 17}));
  EXPECT_EQ(einsum(OneNode().feed("a", iota({2, 2, 2})), "... i i -> ... i"), (std::vector<double>{1, 4, 5, 8}));
  // Without "->" the ellipsis leads the output: "...ii" is a batch of traces.
  EXPECT_EQ(einsum(OneNode().feed("a", iota({2, 2, 2})), "...ii"), (std::vector<double>{5, 13}));
  std::string e = error_of([] {
    OneNode().input("a", {2, 2, 2}).input("b", {3, 2, 2}).infer("Einsum",
                                                                attrs({{"equation", std::string("...ij,...jk")}}));
  });
  EXPECT_NE(e.find("covers extents 2 and 3, which do not broadcast"), std::string::npos) << e;
  e = error_of([] { OneNode().input("a", {2}).infer("Einsum", attrs({{"equation", std::string("...ij->i")}})); });
  EXPECT_NE(e.find("has 2 letters but input 0 has rank 1"), std::string::npos) << e;
}

// ---------------------------------------------------------------- shape ops

TEST(GraphOpsShape, ReshapeCopiesZerosAndInfersMinusOne) {
  EXPECT_EQ(OneNode().input("x", {2, 3, 4}).constant("s", ints({0, -1})).infer("Reshape"), "float32[2,12]");
  EXPECT_EQ(OneNode().input("x", {2, 3, 4}).constant("s", ints({-1, 0, 2})).infer("Reshape"), "float32[4,3,2]");
  std::string e = error_of([] { OneNode().input("x", {2, 3}).constant("s", ints({4, -1})).infer("Reshape"); });
  EXPECT_NE(e.find("shape [4,-1] cannot hold the 6 elements of float32[2,3]"), std::string::npos) << e;
  EXPECT_EQ(values(OneNode().feed("x", iota({2, 3})).constant("s", ints({3, 2})).run("Reshape")[0]),
            (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(GraphOpsErrors, NonConstantReshapeShapeNamesTheInput) {
  std::string e = error_of([] { OneNode().input("x", {2, 3}).input("s", {2}, i64).infer("Reshape"); });
  EXPECT_NE(e.find("Reshape node 'n': input 1 (shape) 's' must be a constant"), std::string::npos) << e;
}

TEST(GraphOpsShape, FlattenTransposeConcat) {
  EXPECT_EQ(OneNode().input("x", {2, 3, 4}).infer("Flatten"), "float32[2,12]");
  EXPECT_EQ(OneNode().input("x", {2, 3, 4}).infer("Flatten", attrs({{"axis", int64_t{0}}})), "float32[1,24]");
  EXPECT_EQ(OneNode().input("x", {2, 3, 4}).infer("Flatten", attrs({{"axis", int64_t{-1}}})), "float32[6,4]");
  EXPECT_EQ(OneNode().input("x", {2, 3, 4}).infer("Transpose"), "float32[4,3,2]");
  EXPECT_EQ(values(OneNode().feed("x", iota({2, 3})).run("Transpose")[0]), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(OneNode().input("a", {2, 3}).input("b", {2, 5}).infer("Concat", attrs({{"axis", int64_t{-1}}})),
            "float32[2,8]");
  OneNode t;
  t.feed("a", iota({1, 2})).feed("b", array({1, 1}, f32, {9}));
  EXPECT_EQ(values(t.run("Concat", attrs({{"axis", int64_t{1}}}))[0]), (std::vector<double>{1, 2, 9}));
  std::string e = error_of([] { OneNode().input("x", {2, 3}).infer("Transpose", attrs({{"perm", I{0, 0}}})); });
  EXPECT_NE(e.find("perm [0,0] is not a permutation"), std::string::npos) << e;
}

TEST(GraphOpsShape, PadConstantModeByOpset) {
  EXPECT_EQ(OneNode(6).input("x", {2, 3}).infer("Pad", attrs({{"pads", I{0, 1, 2, 3}}})), "float32[4,7]");
  expect_near(values(OneNode(6).feed("x", iota({2})).run("Pad", attrs({{"pads", I{1, 2}}, {"value", 7.0}}))[0]),
              {7, 1, 2, 7, 7});
  // From opset 11 the pads are a constant input and the value an optional (computed) one.
  OneNode t(13);
  t.feed("x", iota({2})).constant("pads", ints({2, 1})).feed("v", array({}, f32, {9}));
  expect_near(values(t.run("Pad")[0]), {9, 9, 1, 2, 9});
}

TEST(GraphOpsShape, PadReflectAndEdge) {
  NDArray x = iota({1, 3});
  auto pad = [&](const std::string& mode) {
    return values(OneNode(13).feed("x", x).constant("pads", ints({0, 2, 0, 1})).run("Pad", attrs({{"mode", mode}}))[0]);
  };
  EXPECT_EQ(pad("reflect"), (std::vector<double>{3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(pad("edge"), (std::vector<double>{1, 1, 1, 2, 3, 3}));
  std::string e = error_of([] {
    OneNode(13)
        .input("x", {2, 3})
        .constant("pads", ints({0, 3, 0, 0}))
        .infer("Pad", attrs({{"mode", std::string("reflect")}}));
  });
  EXPECT_NE(e.find("Pad node 'n': pads [0,3,0,0] reflect past the ends of dimension 1 of float32[2,3]"),
            std::string::npos)
      << e;
  e = error_of([] {
    OneNode(13)
        .input("x", {2, 3})
        .constant("pads", ints({1, 1, 1, 1}))
        .infer("Pad", attrs({{"mode", std::string("wrap")}}));
  });
  EXPECT_NE(e.find("Pad node 'n': mode 'wrap' is none of 'constant', 'reflect', 'edge' and (from opset 19) 'wrap'"),
            std::string::npos)
      << e;
}

TEST(GraphOpsTensor, ScatterElementsAlongAnAxis) {
  auto scatter = [](int opset, Attributes a) {
    OneNode t(opset);
    t.feed("data", iota({2, 3}))
        .constant("indices", array({2, 2}, i64, {2, 2, -3, 0}))
        .feed("updates", array({2, 2}, f32, {10, 20, 30, 40}));
    return values(t.run("ScatterElements", std::move(a))[0]);
  };
  // Along axis 1: row 0's updates both aim at column 2 (the last wins), row 1's at 0 (-3) and 0.
  Attributes columns = attrs({{"axis", int64_t{1}}});
  EXPECT_EQ(scatter(13, columns), (std::vector<double>{1, 2, 20, 40, 5, 6}));
  columns.set("reduction", std::string("add"));
  EXPECT_EQ(scatter(16, columns), (std::vector<double>{1, 2, 33, 74, 5, 6}));
  columns.set("reduction", std::string("min"));
  EXPECT_EQ(scatter(18, columns), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  // Indices narrower than data off the axis: data's column 2 keeps its values.
  OneNode rows(11);
  rows.feed("data", iota({2, 3}))
      .constant("indices", array({1, 2}, i64, {1, 0}))
      .feed("updates", array({1, 2}, f32, {7, 8}));
  EXPECT_EQ(values(rows.run("ScatterElements")[0]), (std::vector<double>{1, 8, 3, 7, 5, 6}));
  std::string e = error_of([] {
    OneNode(11)
        .input("data", {2, 3})
        .input("indices", {3, 1}, i64)
        .input("updates", {3, 1})
        .infer("ScatterElements", attrs({{"axis", int64_t{1}}}));
  });
  EXPECT_NE(e.find("indices int64[3,1] are longer than data float32[2,3] in dimension 0"), std::string::npos) << e;
}

TEST(GraphOpsTensor, NonZeroOfAConstantIsEvaluated) {
  OneNode t;
  t.constant("x", array({2, 2}, f32, {1, 0, 2, 3}));
  EXPECT_EQ(t.infer("NonZero"), "int64[2,3]");
  std::vector<NDArray> out = find_graph_op("NonZero")->evaluate(t.graph, t.graph.nodes().back());
  EXPECT_EQ(values(out[0]), (std::vector<double>{0, 1, 1, 0, 0, 1}));
  std::string e = error_of([] { OneNode().input("x", {2, 2}).infer("NonZero"); });
  EXPECT_NE(e.find("input 0 (X) 'x' must be a constant"), std::string::npos) << e;
  e = error_of([] { OneNode().constant("x", array({2}, f32, {0, 0})).infer("NonZero"); });
  EXPECT_NE(e.find("no non-zero element, so the output would be empty"), std::string::npos) << e;
}

// ---------------------------------------------------------------- opsets 18 to 21

TEST(GraphOpsOpset18To21, PadAxesInputAndWrapMode) {
  // Opset 18: pads covers the dimensions the axes input names.
  OneNode t(18);
  t.feed("x", iota({2, 3})).constant("pads", ints({2, 1})).omitted().constant("axes", ints({-1}));
  expect_near(values(t.run("Pad")[0]), {0, 0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 0});
  // Opset 19: wrap takes the other end's elements.
  EXPECT_EQ(values(OneNode(19)
                       .feed("x", iota({1, 3}))
                       .constant("pads", ints({0, 2, 0, 1}))
                       .run("Pad", attrs({{"mode", std::string("wrap")}}))[0]),
            (std::vector<double>{2, 3, 1, 2, 3, 1}));
}

TEST(GraphOpsOpset18To21, EveryReductionTakesItsAxesAsAnInput) {
  EXPECT_EQ(values(OneNode(18).feed("x", iota({2, 3})).constant("axes", ints({1})).run("ReduceMax")[0]),
            (std::vector<double>{3, 6}));
  EXPECT_EQ(values(OneNode(18).feed("x", iota({2, 3})).constant("axes", ints({0})).run("ReduceMean")[0]),
            (std::vector<double>{2.5, 3.5, 4.5}));
  EXPECT_EQ(OneNode(18).input("x", {2, 3}).infer("ReduceL2", attrs({{"noop_with_empty_axes", int64_t{1}}})),
            "float32[2,3]");
}

TEST(GraphOpsOpset18To21, SplitIntoNumOutputs) {
  std::vector<NDArray> parts =
      OneNode(18).feed("x", iota({5})).run("Split", attrs({{"num_outputs", int64_t{2}}}), {"a", "b"});
  EXPECT_EQ(values(parts[0]), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(values(parts[1]), (std::vector<double>{4, 5}));
  std::string e = error_of([] {
    OneNode(18).input("x", {5}).infer("Split", attrs({{"num_outputs", int64_t{3}}}), {"a", "b"});
  });
  EXPECT_NE(e.find("num_outputs=3 but the node has 2 outputs"), std::string::npos) << e;
}

TEST(GraphOpsOpset18To21, ScatterNDMaxAndMin) {
  auto scatter = [](const std::string& reduction) {
    OneNode t(18);
    t.feed("data", iota({4}))
        .constant("indices", array({3, 1}, i64, {1, 1, 3}))
        .feed("updates", array({3}, f32, {5, 0, 2}));
    return values(t.run("ScatterND", attrs({{"reduction", reduction}}))[0]);
  };
  EXPECT_EQ(scatter("max"), (std::vector<double>{1, 5, 3, 4}));
  EXPECT_EQ(scatter("min"), (std::vector<double>{1, 0, 3, 2}));
}

TEST(GraphOpsOpset18To21, Mish) {
  auto mish = [](double x) { return x * std::tanh(std::log1p(std::exp(x))); };
  expect_near(values(OneNode(18).feed("x", array({3}, f32, {-2, 0, 1.5})).run("Mish")[0]),
              {mish(-2), mish(0), mish(1.5)});
}

TEST(GraphOpsOpset18To21, GroupNormalizationScalesPerGroupThenPerChannel) {
  // Two groups of two channels, each of one row of two: the groups are 1..4 and 5..8.
  double inv_std = 1 / std::sqrt(1.25 + 1e-5);
  std::vector<double> unit;
  for (int k = 0; k < 8; ++k) unit.push_back((k % 4 - 1.5) * inv_std);
  Attributes groups = attrs({{"num_groups", int64_t{2}}});
  OneNode per_group(18);
  per_group.feed("x", iota({1, 4, 1, 2}))
      .constant("scale", array({2}, f32, {1, 2}))
      .constant("bias", array({2}, f32, {0, 10}));
  std::vector<double> expected = unit;
  for (int k = 4; k < 8; ++k) expected[k] = 2 * unit[k] + 10;
  expect_near(values(per_group.run("GroupNormalization", groups)[0]), expected, 1e-4);
  // Opset 21: one scale and bias per channel.
  OneNode per_channel(21);
  per_channel.feed("x", iota({1, 4, 1, 2}))
      .constant("scale", array({4}, f32, {1, 1, 1, 3}))
      .constant("bias", array({4}, f32, {0, 0, 0, 1}));
  expected = unit;
  for (int k = 6; k < 8; ++k) expected[k] = 3 * unit[k] + 1;
  expect_near(values(per_channel.run("GroupNormalization", groups)[0]), expected, 1e-4);
  std::string e = error_of([&] {
    OneNode(21).input("x", {1, 4, 1, 2}).input("s", {2}).input("b", {2}).infer("GroupNormalization", groups);
  });
  EXPECT_NE(e.find("input scale is float32[2] but must be [4] (the channels)"), std::string::npos) << e;
  e = error_of([] {
    OneNode(18)
        .input("x", {1, 4, 2})
        .input("s", {3})
        .input("b", {3})
        .infer("GroupNormalization", attrs({{"num_groups", int64_t{3}}}));
  });
  EXPECT_NE(e.find("num_groups=3 does not divide the 4 channels"), std::string::npos) << e;
}

TEST(GraphOpsOpset18To21, ResizeAxesAspectRatioAndSymmetricHalfPixel) {
  // Opset 18: scales for the axes named; the others keep their extent.
  OneNode on_axes(18);
  on_axes.feed("x", iota({1, 1, 2, 2})).omitted().constant("s", array({2}, f32, {2, 2}));
  EXPECT_EQ(values(on_axes.run("Resize", attrs({{"axes", I{2, 3}}}))[0]),
            (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  // not_larger: one scale, the smaller of 4/2 and 4/4, for both axes.
  OneNode kept(18);
  kept.input("x", {1, 1, 2, 4}).omitted().omitted().constant("sizes", ints({4, 4}));
  EXPECT_EQ(kept.infer("Resize", attrs({{"axes", I{2, 3}}, {"keep_aspect_ratio_policy", std::string("not_larger")}})),
            "float32[1,1,2,4]");
  // Opset 19's half_pixel_symmetric: 3 to floor(4.5) = 4, the ends both on the input's.
  OneNode symmetric(19);
  symmetric.feed("x", array({3}, f32, {1, 2, 3})).omitted().constant("s", array({1}, f32, {1.5}));
  expect_near(values(symmetric.run(
                  "Resize", attrs({{"mode", std::string("linear")},
                                   {"coordinate_transformation_mode", std::string("half_pixel_symmetric")}}))[0]),
              {1, 1 + 2.0 / 3, 1 + 4.0 / 3, 3});
  std::string e = error_of([] {
    OneNode(18)
        .input("x", {1, 4})
        .omitted()
        .constant("s", array({2}, f32, {1, 0.5}))
        .infer("Resize", attrs({{"mode", std::string("linear")}, {"antialias", int64_t{1}}}));
  });
  EXPECT_NE(e.find("antialias=1 with a downscaling linear resize (dimension 1) is not supported"), std::string::npos)
      << e;
}

TEST(GraphOpsShape, ConstantAndShapeAreEvaluated) {
  OneNode c;
  EXPECT_EQ(c.infer("Constant", attrs({{"value_ints", I{4, 5}}})), "int64[2]");
  std::vector<NDArray> v = find_graph_op("Constant")->evaluate(c.graph, c.graph.nodes()[0]);
  EXPECT_EQ(values(v[0]), (std::vector<double>{4, 5}));
  EXPECT_EQ(OneNode().infer("Constant", attrs({{"value_float", 0.5}})), "float32[]");
  EXPECT_EQ(OneNode().infer("Constant", attrs({{"value", iota({2, 2})}})), "float32[2,2]");
  OneNode s;
  s.feed("x", iota({2, 3, 4}));
  EXPECT_EQ(s.infer("Shape", attrs({{"start", int64_t{-2}}})), "int64[2]");
  EXPECT_EQ(values(find_graph_op("Shape")->evaluate(s.graph, s.graph.nodes()[0])[0]), (std::vector<double>{3, 4}));
  // Compiled, too, when not folded.
  EXPECT_EQ(values(OneNode().feed("x", iota({2, 3, 4})).run("Shape")[0]), (std::vector<double>{2, 3, 4}));
}

TEST(GraphOpsShape, GatherWithNegativeAndComputedIndices) {
  EXPECT_EQ(OneNode().input("x", {5, 4, 3}).input("i", {2, 6}, i64).infer("Gather", attrs({{"axis", int64_t{1}}})),
            "float32[5,2,6,3]");
  EXPECT_EQ(OneNode().input("x", {5, 4}).constant("i", array({}, i64, {-1})).infer("Gather"), "float32[4]");
  OneNode t;
  t.feed("x", iota({2, 3})).feed("i", ints({-1, 0}));
  EXPECT_EQ(values(t.run("Gather", attrs({{"axis", int64_t{1}}}))[0]), (std::vector<double>{3, 1, 6, 4}));
  std::string e = error_of([] { OneNode().input("x", {5, 4}).constant("i", ints({5})).infer("Gather"); });
  EXPECT_NE(e.find("index 5 is out of range for axis 0 of float32[5,4]"), std::string::npos) << e;
}

TEST(GraphOpsShape, SqueezeAndUnsqueezeByOpset) {
  EXPECT_EQ(OneNode(11).input("x", {3}).infer("Unsqueeze", attrs({{"axes", I{0, -1}}})), "float32[1,3,1]");
  EXPECT_EQ(OneNode(13).input("x", {3, 4}).constant("axes", ints({1})).infer("Unsqueeze"), "float32[3,1,4]");
  EXPECT_EQ(OneNode(11).input("x", {1, 3, 1}).infer("Squeeze"), "float32[3]");
  EXPECT_EQ(OneNode(11).input("x", {1, 3, 1}).infer("Squeeze", attrs({{"axes", I{-1}}})), "float32[1,3]");
  EXPECT_EQ(OneNode(13).input("x", {1, 3, 1}).constant("axes", ints({0})).infer("Squeeze"), "float32[3,1]");
  std::string e = error_of([] { OneNode(13).input("x", {1, 3}).constant("axes", ints({1})).infer("Squeeze"); });
  EXPECT_NE(e.find("whose extent is not 1"), std::string::npos) << e;
  // To and from a scalar.
  std::vector<NDArray> s = OneNode(13).feed("x", array({1, 1}, f32, {7})).run("Squeeze");
  EXPECT_EQ(s[0].ndim(), 0);
  EXPECT_EQ(values(s[0]), (std::vector<double>{7}));
  EXPECT_EQ(values(OneNode(13).feed("x", array({}, f32, {7})).constant("a", ints({0})).run("Unsqueeze")[0]),
            (std::vector<double>{7}));
}

TEST(GraphOpsShape, SliceClampsAndSteps) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  auto slice = [](I shape, I starts, I ends, I axes, I steps) {
    OneNode t(13);
    t.input("x", shape).constant("starts", ints(starts)).constant("ends", ints(ends));
    if (!axes.empty()) t.constant("axes", ints(axes));
    if (axes.empty() && !steps.empty()) t.omitted();
    if (!steps.empty()) t.constant("steps", ints(steps));
    return t.infer("Slice");
  };
  EXPECT_EQ(slice({10, 5}, {-100, 1}, {big, -1}, {0, 1}, {}), "float32[10,3]");
  // A negative step from the back: start 9, end clamped to -1, every third: 9, 6, 3, 0.
  EXPECT_EQ(slice({10}, {-1}, {-100}, {}, {-3}), "float32[4]");
  EXPECT_EQ(slice({4, 6}, {1}, {5}, {-1}, {2}), "float32[4,2]");
  // Before opset 10: attributes.
  EXPECT_EQ(OneNode(9).input("x", {5, 6}).infer("Slice", attrs({{"starts", I{1}}, {"ends", I{3}}, {"axes", I{1}}})),
            "float32[5,2]");
  OneNode t(13);
  t.feed("x", iota({5}))
      .constant("starts", ints({-1}))
      .constant("ends", ints({-big}))
      .omitted()
      .constant("steps", ints({-2}));
  EXPECT_EQ(values(t.run("Slice")[0]), (std::vector<double>{5, 3, 1}));
  std::string e =
      error_of([] { OneNode(13).input("x", {5}).constant("s", ints({3})).constant("e", ints({1})).infer("Slice"); });
  EXPECT_NE(e.find("Slice node 'n': output 'y' would be float32[0]; Temper has no empty tensors"), std::string::npos)
      << e;
}

}  // namespace
}  // namespace temper::graph
