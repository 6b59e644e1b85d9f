// The graph IR on graphs built by hand: attributes, construction, the invariant check,
// dead-node removal and the printed form.
#include <gtest/gtest.h>

#include "compiler/graph/graph.h"
#include "compiler/ir/error.h"
#include "user_error_test_util.h"

namespace temper::graph {
namespace {

using testing_util::expect_user_error;

TensorType f32(std::vector<int64_t> shape) {
  return TensorType{std::move(shape), DataType::float32()};
}

// x -> Conv(w) -> Relu -> y, with a side branch (Sigmoid) nothing uses.
Graph conv_relu_with_dead_branch() {
  Graph g;
  g.name = "net";
  ValueId x = g.add_input("x", f32({1, 3, 8, 8}));
  ValueId w = g.add_constant("w", NDArray::zeros({8, 3, 3, 3}, DataType::float32()));
  g.add_constant("unused_bias", NDArray::zeros({8}, DataType::float32()));
  Attributes conv;
  conv.set("kernel_shape", std::vector<int64_t>{3, 3});
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  g.add_node("conv0", "Conv", conv, {x, w}, {"c"});
  g.add_node("", "Sigmoid", {}, {g.find("c")}, {"s"});
  g.add_node("relu0", "Relu", {}, {g.find("c")}, {"y"});
  g.mark_output(g.find("y"));
  return g;
}

TEST(GraphAttributes, TypedGettersAndFallbacks) {
  Attributes a;
  a.set("axis", int64_t{-1});
  a.set("alpha", 0.25);
  a.set("mode", std::string("constant"));
  a.set("perm", std::vector<int64_t>{0, 2, 1});
  a.set("value", NDArray::zeros({2}, DataType::int64()));
  EXPECT_EQ(a.get_int("axis"), -1);
  EXPECT_EQ(a.get_int_or("axis", 5), -1);
  EXPECT_EQ(a.get_int_or("keepdims", 1), 1);
  EXPECT_DOUBLE_EQ(a.get_float_or("alpha", 1.0), 0.25);
  EXPECT_DOUBLE_EQ(a.get_float_or("beta", 1.5), 1.5);
  EXPECT_EQ(a.get_string_or("mode", "reflect"), "constant");
  EXPECT_EQ(a.get_ints_or("perm", {}), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(a.get_ints_or("pads", {0, 0}), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(a.get_tensor("value").shape(), (std::vector<int64_t>{2}));
  EXPECT_TRUE(a.has("mode"));
  EXPECT_FALSE(a.has("pads"));
}

TEST(GraphAttributes, WrongKindOrMissingNamesTheAttribute) {
  Attributes a;
  a.set("axis", 1.5);
  a.set("perm", std::vector<int64_t>{1, 0});
  expect_user_error([&] { a.get_int("axis"); }, {"attribute 'axis' is float, expected int"});
  expect_user_error([&] { a.get_int_or("axis", 0); }, {"attribute 'axis' is float, expected int"});
  expect_user_error([&] { a.get_float_or("perm", 0); }, {"attribute 'perm' is ints, expected float"});
  expect_user_error([&] { a.get_string_or("perm", ""); }, {"'perm' is ints, expected string"});
  expect_user_error([&] { a.get_ints_or("axis", {}); }, {"'axis' is float, expected ints"});
  expect_user_error([&] { a.get_tensor("perm"); }, {"'perm' is ints, expected tensor"});
  expect_user_error([&] { a.get_int("group"); }, {"missing attribute 'group'"});
  expect_user_error([&] { a.get_tensor("value"); }, {"missing attribute 'value'"});
}

TEST(Graph, BuildsFindsAndPrints) {
  Graph g = conv_relu_with_dead_branch();
  g.verify();
  EXPECT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.nodes().size(), 3u);
  EXPECT_EQ(g.nodes()[1].name, "Sigmoid_1");  // an unnamed node
  EXPECT_EQ(g.value(g.find("y")).producer, 2);
  EXPECT_EQ(g.find("nothing"), kNoValue);
  EXPECT_FALSE(g.value(g.find("y")).type.known());
  g.value(g.find("c")).type = f32({1, 8, 8, 8});
  EXPECT_EQ(g.to_string(),
            "graph net\n"
            "input %x : float32[1,3,8,8]\n"
            "const %w : float32[8,3,3,3]\n"
            "const %unused_bias : float32[8]\n"
            "%c = Conv(%x, %w) {kernel_shape=[3,3], pads=[1,1,1,1]} : float32[1,8,8,8]\n"
            "%s = Sigmoid(%c) : ?\n"
            "%y = Relu(%c) : ?\n"
            "output %y\n");
}

TEST(Graph, PrintsEveryAttributeKindAndOmittedInputs) {
  Graph g;
  g.name = "kinds";
  ValueId x = g.add_input("x", TensorType{{4}, DataType::int64()});
  Attributes a;
  a.set("i", int64_t{3});
  a.set("f", 0.5);
  a.set("s", std::string("SAME_UPPER"));
  a.set("fs", std::vector<double>{1, 2.5});
  a.set("ss", std::vector<std::string>{"a", "b"});
  a.set("t", NDArray::zeros({2, 2}, DataType::boolean()));
  g.add_node("n", "Op", a, {x, kNoValue, x}, {"y", "z"});
  g.mark_output(g.find("z"));
  EXPECT_EQ(g.to_string(),
            "graph kinds\n"
            "input %x : int64[4]\n"
            "%y, %z = Op(%x, _, %x) {f=0.5, fs=[1,2.5], i=3, s=\"SAME_UPPER\", ss=[\"a\",\"b\"], t=tensor bool[2,2]} "
            ": ?, ?\n"
            "output %z\n");
}

TEST(Graph, RemoveDeadDropsUnusedNodesAndConstantsAndRenumbers) {
  Graph g = conv_relu_with_dead_branch();
  g.remove_dead();
  g.verify();
  ASSERT_EQ(g.nodes().size(), 2u);
  EXPECT_EQ(g.nodes()[0].name, "conv0");
  EXPECT_EQ(g.nodes()[1].name, "relu0");
  EXPECT_EQ(g.find("s"), kNoValue);
  EXPECT_EQ(g.find("unused_bias"), kNoValue);
  ASSERT_EQ(g.values().size(), 4u);  // x, w, c, y
  ValueId c = g.find("c");
  EXPECT_EQ(g.nodes()[1].inputs, std::vector<ValueId>{c});
  EXPECT_EQ(g.value(g.find("y")).producer, 1);
  EXPECT_EQ(g.outputs(), std::vector<ValueId>{g.find("y")});
  // Names stay unique after renumbering: a node may take a removed one.
  g.add_node("", "Sigmoid", {}, {c}, {"s"});
  g.verify();
}

TEST(Graph, RemoveDeadKeepsUnusedInputsAndEveryOutputOfALiveNode) {
  Graph g;
  ValueId x = g.add_input("x", f32({4, 2}));
  g.add_input("unused", f32({1}));
  g.add_node("split", "Split", {}, {x}, {"a", "b"});
  g.mark_output(g.find("b"));
  g.remove_dead();
  g.verify();
  EXPECT_EQ(g.inputs().size(), 2u);
  EXPECT_NE(g.find("a"), kNoValue);
  EXPECT_EQ(g.nodes()[0].outputs.size(), 2u);
}

TEST(Graph, NamesAreUnique) {
  Graph g;
  g.name = "g";
  ValueId x = g.add_input("x", f32({2}));
  expect_user_error([&] { g.add_input("x", f32({2})); }, {"the name 'x' is used twice"});
  expect_user_error([&] { g.add_constant("x", NDArray::zeros({1}, DataType::float32())); }, {"'x' is used twice"});
  g.add_node("relu", "Relu", {}, {x}, {"y"});
  expect_user_error([&] { g.add_node("relu", "Relu", {}, {x}, {"z"}); }, {"two nodes are named 'relu'"});
  expect_user_error([&] { g.add_node("other", "Relu", {}, {x}, {"y"}); },
                    {"node 'other' (Relu) writes 'y'", "already produced"});
  expect_user_error([&] { g.add_node("pair", "Split", {}, {x}, {"p", "p"}); }, {"writes 'p'"});
}

TEST(Graph, VerifyNamesTheBrokenInvariant) {
  {
    Graph g = conv_relu_with_dead_branch();
    std::swap(g.nodes()[0], g.nodes()[2]);  // relu before the conv it reads
    expect_user_error([&] { g.verify(); }, {"node 'relu0' (Relu) reads 'c'", "not in topological order"});
  }
  {
    Graph g = conv_relu_with_dead_branch();
    g.value(g.find("s")).producer = 2;  // relu0 does not write s
    expect_user_error([&] { g.verify(); }, {"node 'Sigmoid_1' (Sigmoid) writes 's', whose producer is recorded"});
  }
  {
    Graph g = conv_relu_with_dead_branch();
    g.value(g.find("c")).producer = -1;  // an orphan: no input, no constant, no node
    expect_user_error([&] { g.verify(); }, {"value 'c' has no producer"});
  }
  {
    Graph g = conv_relu_with_dead_branch();
    g.nodes()[2].inputs[0] = 99;
    expect_user_error([&] { g.verify(); }, {"node 'relu0' (Relu) reads value id 99"});
  }
  {
    Graph g = conv_relu_with_dead_branch();
    g.value(g.find("w")).type = f32({8, 3, 1, 1});
    expect_user_error([&] { g.verify(); }, {"constant 'w' holds float32[8,3,3,3] but its type says float32[8,3,1,1]"});
  }
  {
    Graph g = conv_relu_with_dead_branch();
    g.nodes()[1].name = "relu0";
    expect_user_error([&] { g.verify(); }, {"two nodes are named 'relu0'"});
  }
}

TEST(TensorType, SizeAndText) {
  EXPECT_EQ(f32({1, 3, 224, 224}).size(), 3 * 224 * 224);
  EXPECT_EQ(f32({1, 3, 224, 224}).to_string(), "float32[1,3,224,224]");
  EXPECT_EQ((TensorType{{}, DataType::int64()}.to_string()), "int64[]");
  EXPECT_EQ(TensorType{}.to_string(), "?");
}

}  // namespace
}  // namespace temper::graph
