// The pattern-recognition passes on graphs built by hand: layer norm and GELU in the forms
// exporters write become one LayerNormalization or Gelu node (the node list after the
// pass, the printed graph for the main form), near misses stay as they are, and the graph
// computes the same before and after (both run unfused by GraphExecutor on random inputs).
// A transformer encoder block like tests/correctness/make_test_models.py's ends with its
// GELU as one Gelu node in the MatMul's fused group after optimize_graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>

#include "compiler/graph/executor.h"
#include "compiler/graph/fusion.h"
#include "compiler/graph/optimize.h"
#include "compiler/graph/pass_recognize_gelu.h"
#include "compiler/graph/pass_recognize_layer_norm.h"
#include "compiler/graph/shape_inference.h"
#include "user_error_test_util.h"

namespace temper::graph {
namespace {

const DataType f32 = DataType::float32();

TensorType f32_type(std::vector<int64_t> shape) {
  return TensorType{std::move(shape), f32};
}

NDArray scalar(double value, std::vector<int64_t> shape = {}) {
  NDArray a = NDArray::empty(std::move(shape), f32);
  a.set(0, value);
  return a;
}

NDArray int64_array(const std::vector<int64_t>& values) {
  NDArray a = NDArray::empty({static_cast<int64_t>(values.size())}, DataType::int64());
  for (size_t i = 0; i < values.size(); ++i) a.set(static_cast<int64_t>(i), static_cast<double>(values[i]));
  return a;
}

std::vector<std::string> ops(const Graph& graph) {
  std::vector<std::string> found;
  for (const Node& node : graph.nodes()) found.push_back(node.op);
  return found;
}

// Both graphs run unfused on the same random inputs (scaled up, so that GELU sees its
// tails); every output must agree.
void expect_same_outputs(const Graph& before, const Graph& after) {
  std::map<std::string, NDArray> inputs;
  for (size_t i = 0; i < before.inputs().size(); ++i) {
    const Value& v = before.value(before.inputs()[i]);
    inputs[v.name] = NDArray::random(v.type.shape, v.type.dtype, 200 + i, -3.0, 3.0);
  }
  Target target = Target::parse("llvm");
  std::vector<NDArray> expected = GraphExecutor(before, target, ExecutorOptions{.fuse = false}).run(inputs);
  std::vector<NDArray> actual = GraphExecutor(after, target, ExecutorOptions{.fuse = false}).run(inputs);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t o = 0; o < actual.size(); ++o) {
    Comparison c = compare(actual[o], expected[o], 1e-4, 1e-5);
    EXPECT_TRUE(c.ok()) << "output " << o << ": " << c.message;
  }
}

// ---------------------------------------------------------------- layer norm

// How the decomposed layer norm is written; the defaults are PyTorch's export.
struct LayerNormForm {
  std::vector<int64_t> axes = {-1};
  bool square_by_mul = false;  // Mul(d, d) instead of Pow(d, 2)
  double exponent = 2.0;
  bool eps_first = false;       // Add(eps, var)
  bool eps_after_sqrt = false;  // Add(Sqrt(var), eps): another formula
  bool scale = true;
  bool shift = true;
  bool parameters_first = false;  // Mul(gamma, n) and Add(beta, y)
  std::vector<int64_t> gamma_shape = {8};
  bool gamma_is_input = false;         // not a constant
  bool centered_is_output = false;     // d is also a graph output
  bool result_read_elsewhere = false;  // a Relu reads the result, which stays a graph output
  int opset = 17;                      // from 18 the ReduceMeans take their axes as an input
};

// x float32[2,3,8] -> the layer norm of `form` -> out
Graph layer_norm_graph(const LayerNormForm& form) {
  Graph g;
  g.name = "ln";
  g.opset = form.opset;
  ValueId x = g.add_input("x", f32_type({2, 3, 8}));
  Attributes reduce;
  std::vector<ValueId> axes;
  if (form.opset >= 18) {
    NDArray given = NDArray::empty({static_cast<int64_t>(form.axes.size())}, DataType::int64());
    std::copy(form.axes.begin(), form.axes.end(), given.data_as<int64_t>());
    axes.push_back(g.add_constant("axes", given));
  } else {
    reduce.set("axes", form.axes);
  }
  auto with_axes = [&](ValueId v) {
    std::vector<ValueId> in = {v};
    in.insert(in.end(), axes.begin(), axes.end());
    return in;
  };
  g.add_node("mean", "ReduceMean", reduce, with_axes(x), {"mu"});
  g.add_node("sub", "Sub", {}, {x, g.find("mu")}, {"d"});
  ValueId d = g.find("d");
  if (form.square_by_mul) {
    g.add_node("square", "Mul", {}, {d, d}, {"sq"});
  } else {
    g.add_node("square", "Pow", {}, {d, g.add_constant("two", scalar(form.exponent))}, {"sq"});
  }
  g.add_node("var", "ReduceMean", reduce, with_axes(g.find("sq")), {"var"});
  ValueId eps = g.add_constant("eps", scalar(0.05));
  ValueId var = g.find("var");
  if (form.eps_after_sqrt) {
    g.add_node("sqrt", "Sqrt", {}, {var}, {"sd"});
    g.add_node("add_eps", "Add", {}, {g.find("sd"), eps}, {"s"});
  } else {
    g.add_node("add_eps", "Add", {}, form.eps_first ? std::vector{eps, var} : std::vector{var, eps}, {"v"});
    g.add_node("sqrt", "Sqrt", {}, {g.find("v")}, {"s"});
  }
  g.add_node("div", "Div", {}, {d, g.find("s")}, {"n"});
  ValueId result = g.find("n");
  auto affine = [&](const std::string& op, ValueId parameter, const std::string& out) {
    g.add_node(out, op, {}, form.parameters_first ? std::vector{parameter, result} : std::vector{result, parameter},
               {out});
    result = g.find(out);
  };
  if (form.scale) {
    ValueId gamma = form.gamma_is_input ? g.add_input("gamma", f32_type(form.gamma_shape))
                                        : g.add_constant("gamma", NDArray::random(form.gamma_shape, f32, 7, 0.5, 1.5));
    affine("Mul", gamma, "y");
  }
  if (form.shift) affine("Add", g.add_constant("beta", NDArray::random({8}, f32, 8)), "out");
  g.mark_output(result);
  if (form.centered_is_output) g.mark_output(d);
  if (form.result_read_elsewhere) {
    g.add_node("relu", "Relu", {}, {result}, {"r"});
    g.mark_output(g.find("r"));
  }
  infer_types(g);
  g.verify();
  return g;
}

// Recognises form's layer norm, checks the node list and the numbers.
void expect_layer_norm(const LayerNormForm& form, const std::vector<std::string>& expected_ops) {
  Graph before = layer_norm_graph(form);
  Graph after = before;
  EXPECT_EQ(recognize_layer_norm(after), 1);
  after.verify();
  EXPECT_EQ(ops(after), expected_ops);
  expect_same_outputs(before, after);
}

void expect_no_layer_norm(const LayerNormForm& form) {
  Graph g = layer_norm_graph(form);
  std::string before = g.to_string();
  EXPECT_EQ(recognize_layer_norm(g), 0);
  EXPECT_EQ(g.to_string(), before);
}

TEST(RecognizeLayerNorm, PyTorchExportBecomesOneNode) {
  Graph before = layer_norm_graph({});
  Graph after = before;
  EXPECT_EQ(recognize_layer_norm(after), 1);
  after.verify();
  EXPECT_EQ(after.to_string(),
            "graph ln\n"
            "input %x : float32[2,3,8]\n"
            "const %gamma : float32[8]\n"
            "const %beta : float32[8]\n"
            "%out = LayerNormalization(%x, %gamma, %beta) {axis=-1, epsilon=0.05} : float32[2,3,8]\n"
            "output %out\n");
  expect_same_outputs(before, after);
}

TEST(RecognizeLayerNorm, OtherSpellings) {
  const std::vector<std::string> one_node = {"LayerNormalization"};
  expect_layer_norm({.axes = {2}}, one_node);
  expect_layer_norm({.square_by_mul = true}, one_node);
  expect_layer_norm({.eps_first = true}, one_node);
  expect_layer_norm({.parameters_first = true}, one_node);
  // gamma [1,1,8] and a one-element gamma become [8] constants.
  expect_layer_norm({.gamma_shape = {1, 1, 8}}, one_node);
  expect_layer_norm({.gamma_shape = {1}}, one_node);
  // Opset 18: the axes a constant input.
  expect_layer_norm({.opset = 18}, one_node);
  expect_layer_norm({.axes = {2}, .opset = 18}, one_node);
  expect_no_layer_norm({.axes = {1}, .opset = 18});
}

TEST(RecognizeLayerNorm, WithoutScaleOrShift) {
  Graph g = layer_norm_graph({.scale = false, .shift = false});
  Graph before = g;
  EXPECT_EQ(recognize_layer_norm(g), 1);
  g.verify();
  EXPECT_EQ(g.to_string(),
            "graph ln\n"
            "input %x : float32[2,3,8]\n"
            "const %div_scale : float32[8]\n"
            "%n = LayerNormalization(%x, %div_scale) {axis=-1, epsilon=0.05} : float32[2,3,8]\n"
            "output %n\n");
  expect_same_outputs(before, g);
  expect_layer_norm({.scale = false}, {"LayerNormalization"});
}

TEST(RecognizeLayerNorm, AResultReadElsewhereKeepsItsName) {
  Graph before = layer_norm_graph({.result_read_elsewhere = true});
  Graph after = before;
  EXPECT_EQ(recognize_layer_norm(after), 1);
  EXPECT_EQ(ops(after), (std::vector<std::string>{"LayerNormalization", "Relu"}));
  EXPECT_EQ(after.value(after.outputs()[0]).name, "out");
  expect_same_outputs(before, after);
}

TEST(RecognizeLayerNorm, AScaleThatIsNoConstantStaysAMul) {
  expect_layer_norm({.gamma_is_input = true}, {"LayerNormalization", "Mul", "Add"});
}

TEST(RecognizeLayerNorm, NearMissesStay) {
  expect_no_layer_norm({.axes = {1}});
  expect_no_layer_norm({.axes = {-2}});
  expect_no_layer_norm({.exponent = 3.0});
  expect_no_layer_norm({.eps_after_sqrt = true});
  expect_no_layer_norm({.centered_is_output = true});
}

TEST(RecognizeLayerNorm, AStatisticReadElsewhereStays) {
  Graph g = layer_norm_graph({});
  g.add_node("var_copy", "Relu", {}, {g.find("var")}, {"var_relu"});
  g.mark_output(g.find("var_relu"));
  infer_types(g);
  std::string before = g.to_string();
  EXPECT_EQ(recognize_layer_norm(g), 0);
  EXPECT_EQ(g.to_string(), before);
}

// ---------------------------------------------------------------- GELU

enum class Squash { DivSqrt2, MulInvSqrt2, MulInvSqrt2First, TanhPow, TanhMul };
// Where the 0.5 and the second x go: (x * p) * 0.5, (x * 0.5) * p, x * (p * 0.5).
enum class Product { XTimesPThenHalf, HalfXTimesP, XTimesHalfP };

struct GeluForm {
  Squash squash = Squash::DivSqrt2;
  Product product = Product::XTimesPThenHalf;
  bool swap = false;  // every commutative node with its inputs the other way round
  double half = 0.5;
  double sqrt2 = std::numbers::sqrt2;
  bool erf_is_output = false;
  bool argument_read_elsewhere = false;  // a Relu reads x / sqrt(2)
};

// x float32[4,16] -> MatMul(w) -> Add(b) = h -> the GELU of `form` on h -> out
Graph gelu_graph(const GeluForm& form) {
  Graph g;
  g.name = "gelu";
  ValueId x = g.add_input("x", f32_type({4, 16}));
  ValueId w = g.add_constant("w", NDArray::random({16, 16}, f32, 1));
  ValueId b = g.add_constant("b", NDArray::random({16}, f32, 2));
  g.add_node("mm", "MatMul", {}, {x, w}, {"mm"});
  g.add_node("bias", "Add", {}, {g.find("mm"), b}, {"h"});
  ValueId h = g.find("h");
  auto pair = [&](ValueId a, ValueId c) { return form.swap ? std::vector{c, a} : std::vector{a, c}; };
  auto constant = [&](const std::string& name, double value) { return g.add_constant(name, scalar(value)); };
  auto binary = [&](const std::string& op, ValueId a, ValueId c, const std::string& out) {
    bool commutes = op == "Add" || op == "Mul";
    g.add_node(out, op, {}, commutes ? pair(a, c) : std::vector{a, c}, {out});
    return g.find(out);
  };
  switch (form.squash) {
    case Squash::DivSqrt2:
      g.add_node("erf", "Erf", {}, {binary("Div", h, constant("sqrt2", form.sqrt2), "scaled")}, {"f"});
      break;
    case Squash::MulInvSqrt2:
      g.add_node("erf", "Erf", {}, {binary("Mul", h, constant("inv_sqrt2", 1 / form.sqrt2), "scaled")}, {"f"});
      break;
    case Squash::MulInvSqrt2First:
      g.add_node("scaled", "Mul", {}, {constant("inv_sqrt2", 1 / form.sqrt2), h}, {"scaled"});
      g.add_node("erf", "Erf", {}, {g.find("scaled")}, {"f"});
      break;
    case Squash::TanhPow:
    case Squash::TanhMul: {
      ValueId cube = form.squash == Squash::TanhPow ? binary("Pow", h, constant("three", 3.0), "cube")
                                                    : binary("Mul", h, binary("Mul", h, h, "square"), "cube");
      ValueId term = binary("Mul", constant("kappa", 0.044715), cube, "term");
      ValueId inner = binary("Add", h, term, "inner");
      ValueId scaled = binary("Mul", constant("beta", std::sqrt(2 / std::numbers::pi)), inner, "scaled");
      g.add_node("tanh", "Tanh", {}, {scaled}, {"f"});
      break;
    }
  }
  ValueId f = g.find("f");
  ValueId p = binary("Add", f, constant("one", 1.0), "p");
  ValueId half = constant("half", form.half);
  switch (form.product) {
    case Product::XTimesPThenHalf:
      binary("Mul", binary("Mul", h, p, "xp"), half, "out");
      break;
    case Product::HalfXTimesP:
      binary("Mul", binary("Mul", h, half, "half_x"), p, "out");
      break;
    case Product::XTimesHalfP:
      binary("Mul", h, binary("Mul", p, half, "half_p"), "out");
      break;
  }
  g.mark_output(g.find("out"));
  if (form.erf_is_output) g.mark_output(f);
  if (form.argument_read_elsewhere) {
    g.add_node("relu", "Relu", {}, {g.find("scaled")}, {"r"});
    g.mark_output(g.find("r"));
  }
  infer_types(g);
  g.verify();
  return g;
}

void expect_gelu(const GeluForm& form, const std::string& approximate) {
  Graph before = gelu_graph(form);
  Graph after = before;
  EXPECT_EQ(recognize_gelu(after), 1);
  after.verify();
  ASSERT_EQ(ops(after), (std::vector<std::string>{"MatMul", "Add", "Gelu"}));
  const Node& gelu = after.nodes()[2];
  EXPECT_EQ(after.value(gelu.inputs[0]).name, "h");
  EXPECT_EQ(after.value(gelu.outputs[0]).name, "out");
  EXPECT_EQ(gelu.attrs.get_string_or("approximate", ""), approximate);
  expect_same_outputs(before, after);
}

void expect_no_gelu(const GeluForm& form) {
  Graph g = gelu_graph(form);
  std::string before = g.to_string();
  EXPECT_EQ(recognize_gelu(g), 0);
  EXPECT_EQ(g.to_string(), before);
}

TEST(RecognizeGelu, PyTorchErfExportBecomesOneNode) {
  Graph g = gelu_graph({});
  EXPECT_EQ(recognize_gelu(g), 1);
  g.verify();
  EXPECT_EQ(g.to_string(),
            "graph gelu\n"
            "input %x : float32[4,16]\n"
            "const %w : float32[16,16]\n"
            "const %b : float32[16]\n"
            "%mm = MatMul(%x, %w) : float32[4,16]\n"
            "%h = Add(%mm, %b) : float32[4,16]\n"
            "%out = Gelu(%h) {approximate=\"none\"} : float32[4,16]\n"
            "output %out\n");
}

TEST(RecognizeGelu, ErfSpellings) {
  // Each squash and each product once with and once without the inputs swapped (every
  // combination would compile twice as many kernels for no new case).
  bool swap = false;
  for (Squash squash : {Squash::DivSqrt2, Squash::MulInvSqrt2, Squash::MulInvSqrt2First}) {
    for (Product product : {Product::XTimesPThenHalf, Product::HalfXTimesP, Product::XTimesHalfP}) {
      SCOPED_TRACE(testing::Message() << "squash " << static_cast<int>(squash) << " product "
                                      << static_cast<int>(product) << " swap " << swap);
      expect_gelu({.squash = squash, .product = product, .swap = swap}, "none");
      swap = !swap;
    }
  }
  // sqrt(2) to five digits, within the tolerance.
  expect_gelu({.sqrt2 = 1.41421}, "none");
}

TEST(RecognizeGelu, TanhApproximation) {
  for (Squash squash : {Squash::TanhPow, Squash::TanhMul}) {
    for (bool swap : {false, true}) {
      SCOPED_TRACE(testing::Message() << "squash " << static_cast<int>(squash) << " swap " << swap);
      expect_gelu({.squash = squash, .product = Product::HalfXTimesP, .swap = swap}, "tanh");
    }
  }
}

TEST(RecognizeGelu, NearMissesStay) {
  expect_no_gelu({.half = 0.6});
  expect_no_gelu({.sqrt2 = 1.5});
  expect_no_gelu({.erf_is_output = true});
  expect_no_gelu({.argument_read_elsewhere = true});
}

TEST(RecognizeGelu, AProductWithAnotherValueStays) {
  // (y * (1 + erf(x / sqrt 2))) * 0.5 with y another value than x.
  Graph g;
  g.name = "not_gelu";
  ValueId x = g.add_input("x", f32_type({4, 16}));
  ValueId y = g.add_input("y", f32_type({4, 16}));
  g.add_node("scale", "Div", {}, {x, g.add_constant("sqrt2", scalar(std::numbers::sqrt2))}, {"scaled"});
  g.add_node("erf", "Erf", {}, {g.find("scaled")}, {"f"});
  g.add_node("shift", "Add", {}, {g.find("f"), g.add_constant("one", scalar(1.0))}, {"p"});
  g.add_node("xp", "Mul", {}, {y, g.find("p")}, {"yp"});
  g.add_node("half", "Mul", {}, {g.find("yp"), g.add_constant("half", scalar(0.5))}, {"out"});
  g.mark_output(g.find("out"));
  infer_types(g);
  std::string before = g.to_string();
  EXPECT_EQ(recognize_gelu(g), 0);
  EXPECT_EQ(g.to_string(), before);
}

TEST(GeluOp, RejectsAnUnknownApproximation) {
  Graph g;
  g.add_input("x", f32_type({4}));
  Attributes attrs;
  attrs.set("approximate", std::string("fast"));
  g.add_node("g", "Gelu", attrs, {g.find("x")}, {"y"});
  g.mark_output(g.find("y"));
  testing_util::expect_user_error([&] { infer_types(g); }, {"Gelu node 'g'", "approximate=\"fast\""});
}

// ---------------------------------------------------------------- the encoder block

// make_test_models.py's encoder at a smaller size: attention (2 heads), residual,
// LayerNormalization, an MLP with the Erf GELU as PyTorch exports it, residual.
Graph encoder_graph() {
  const int64_t seq = 4, dim = 8, heads = 2, hidden = 16;
  const int64_t head_dim = dim / heads;
  Graph g;
  g.name = "encoder";
  ValueId x = g.add_input("hidden", f32_type({1, seq, dim}));
  uint64_t seed = 10;
  auto weight = [&](const std::string& name, std::vector<int64_t> shape) {
    return g.add_constant(name, NDArray::random(std::move(shape), f32, seed++, -0.5, 0.5));
  };
  auto node = [&](const std::string& op, std::vector<ValueId> inputs, const std::string& out, Attributes attrs = {}) {
    g.add_node(out, op, std::move(attrs), std::move(inputs), {out});
    return g.find(out);
  };
  auto linear = [&](ValueId in, const std::string& name, int64_t from, int64_t to) {
    ValueId mm = node("MatMul", {in, weight("w" + name, {from, to})}, name + "_mm");
    return node("Add", {mm, weight("b" + name, {to})}, name);
  };
  ValueId heads_shape = g.add_constant("heads_shape", int64_array({1, seq, heads, head_dim}));
  std::map<std::string, ValueId> split;
  for (const std::string name : {"q", "k", "v"}) {
    ValueId r = node("Reshape", {linear(x, name, dim, dim), heads_shape}, name + "_heads");
    Attributes perm;
    perm.set("perm", name == "k" ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
    split[name] = node("Transpose", {r}, name + "_t", perm);
  }
  ValueId scores = node("MatMul", {split["q"], split["k"]}, "scores");
  ValueId scaled = node("Div", {scores, g.add_constant("sqrt_d", scalar(std::sqrt(head_dim)))}, "scaled");
  Attributes last_axis;
  last_axis.set("axis", int64_t{-1});
  ValueId attn = node("Softmax", {scaled}, "attn", last_axis);
  Attributes perm;
  perm.set("perm", std::vector<int64_t>{0, 2, 1, 3});
  ValueId context = node("Transpose", {node("MatMul", {attn, split["v"]}, "context")}, "context_t", perm);
  ValueId merged = node("Reshape", {context, g.add_constant("model_shape", int64_array({1, seq, dim}))}, "merged");
  ValueId residual = node("Add", {linear(merged, "o", dim, dim), x}, "residual1");
  Attributes ln = last_axis;
  ln.set("epsilon", 1e-5);
  ValueId normed =
      node("LayerNormalization", {residual, weight("ln_scale", {dim}), weight("ln_bias", {dim})}, "normed", ln);
  ValueId fc1 = linear(normed, "fc1", dim, hidden);
  ValueId erf = node("Erf", {node("Div", {fc1, g.add_constant("sqrt_2", scalar(std::numbers::sqrt2))}, "gelu_scaled")},
                     "gelu_erf");
  ValueId shifted = node("Add", {erf, g.add_constant("one", scalar(1.0))}, "gelu_shifted");
  ValueId gelu = node("Mul", {node("Mul", {fc1, shifted}, "gelu_prod"), g.add_constant("half", scalar(0.5))}, "gelu");
  ValueId out = node("Add", {linear(gelu, "fc2", hidden, dim), normed}, "encoded");
  g.mark_output(out);
  infer_types(g);
  g.verify();
  return g;
}

TEST(OptimizeGraph, EncoderGeluBecomesOneNodeInTheMatMulGroup) {
  Graph before = encoder_graph();
  Graph after = before;
  optimize_graph(after);
  after.verify();
  std::vector<std::string> found = ops(after);
  EXPECT_EQ(std::count(found.begin(), found.end(), "Gelu"), 1);
  EXPECT_EQ(std::count(found.begin(), found.end(), "LayerNormalization"), 1);
  EXPECT_EQ(std::count(found.begin(), found.end(), "Erf"), 0);
  // Div, Erf, Add, Mul, Mul became one Gelu.
  EXPECT_EQ(found.size(), before.nodes().size() - 4);
  expect_same_outputs(before, after);

  // fc1's MatMul takes its bias Add and the Gelu as its epilogue.
  ValueId gelu_out = after.find("gelu");
  int gelu_node = after.value(gelu_out).producer;
  bool grouped = false;
  for (const FusedGroup& group : partition_for_fusion(after)) {
    if (std::find(group.nodes.begin(), group.nodes.end(), gelu_node) == group.nodes.end()) continue;
    std::vector<std::string> group_ops;
    for (int n : group.nodes) group_ops.push_back(after.nodes()[n].op);
    EXPECT_EQ(group_ops, (std::vector<std::string>{"MatMul", "Add", "Gelu"}));
    grouped = true;
  }
  EXPECT_TRUE(grouped);
}

}  // namespace
}  // namespace temper::graph
