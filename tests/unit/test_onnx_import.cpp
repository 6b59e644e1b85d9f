// The ONNX frontend on models written here with ONNX's protobuf classes, on TensorProto
// files, and over the models of Debian's libonnx-testdata.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "compiler/graph/graph_ops.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/ir/error.h"
#include "unit/onnx_test_models.h"

namespace temper::graph {
namespace {

using namespace testing;  // NOLINT: the model builders

const std::string kTestData = "/usr/share/libonnx-testdata/data";

TEST(OnnxImport, ConvReluWithInitializers) {
  Graph g = import_onnx(write_model("conv_relu.onnx", conv_relu_model()));
  g.verify();
  EXPECT_EQ(g.to_string(),
            "graph test_graph\n"
            "input %x : float32[1,3,8,8]\n"
            "const %w : float32[8,3,3,3]\n"
            "const %b : float32[8]\n"
            "%c = Conv(%x, %w, %b) {kernel_shape=[3,3], pads=[1,1,1,1]} : float32[1,8,8,8]\n"
            "%y = Relu(%c) : float32[1,8,8,8]\n"
            "output %y\n");
  EXPECT_EQ(g.opset, 13);
  // Initializers become constants, from raw_data (w) and from float_data (b).
  const Value& w = g.value(g.find("w"));
  ASSERT_TRUE(w.constant.has_value());
  EXPECT_EQ(w.producer, -1);
  EXPECT_DOUBLE_EQ(w.constant->get(0), 0.5);
  EXPECT_DOUBLE_EQ(w.constant->get(w.constant->size() - 1), 0.5);
  const Value& b = g.value(g.find("b"));
  ASSERT_TRUE(b.constant.has_value());
  for (int i = 0; i < 8; ++i) EXPECT_DOUBLE_EQ(b.constant->get(i), i + 1);
}

TEST(OnnxImport, DynamicDimsBoundByNameOrByShape) {
  std::string path = write_model("conv_relu_batch.onnx", conv_relu_model(/*batch_param=*/true));
  ImportOptions by_name;
  by_name.dims["N"] = 2;
  Graph g = import_onnx(path, by_name);
  EXPECT_EQ(g.value(g.inputs()[0]).type.to_string(), "float32[2,3,8,8]");
  EXPECT_EQ(g.value(g.outputs()[0]).type.to_string(), "float32[2,8,8,8]");

  ImportOptions by_shape;
  by_shape.input_shapes["x"] = {4, 3, 6, 6};
  Graph h = import_onnx(path, by_shape);
  EXPECT_EQ(h.value(h.inputs()[0]).type.to_string(), "float32[4,3,6,6]");
  EXPECT_EQ(h.value(h.outputs()[0]).type.to_string(), "float32[4,8,6,6]");

  // The data's shape binds the dynamic dimension only: the static ones stay as declared,
  // for the caller to check against the data.
  ImportOptions by_data;
  by_data.data_shapes["x"] = {3, 3, 6, 6};
  Graph d = import_onnx(path, by_data);
  EXPECT_EQ(d.value(d.inputs()[0]).type.to_string(), "float32[3,3,8,8]");
}

TEST(OnnxImport, InputsBoundAsConstantsAndInitializersListedAsInputs) {
  onnx::ModelProto m = conv_relu_model();
  add_input(m, "w", {int64_t{8}, int64_t{3}, int64_t{3}, int64_t{3}});  // as IR version 3 exporters list weights
  ImportOptions options;
  options.constants["x"] = NDArray::zeros({1, 3, 8, 8}, DataType::float32());
  options.fold_constants = false;
  Graph g = import_onnx_bytes(m.SerializeAsString(), "bound.onnx", options);
  EXPECT_TRUE(g.inputs().empty());
  EXPECT_TRUE(g.value(g.find("x")).constant.has_value());
  EXPECT_TRUE(g.value(g.find("w")).constant.has_value());
  EXPECT_EQ(g.value(g.find("y")).type.to_string(), "float32[1,8,8,8]");
}

TEST(OnnxImport, NodesOutOfOrderAreSortedAndUnnamedNodesNamed) {
  onnx::ModelProto m = make_model(11);
  add_input(m, "x", {int64_t{2}, int64_t{3}});
  add_node(m, "Sigmoid", {"r"}, {"y"});
  add_node(m, "Relu", {"x"}, {"r"});
  add_output(m, "y", {int64_t{2}, int64_t{3}});
  Graph g = import_onnx_bytes(m.SerializeAsString(), "unordered.onnx");
  g.verify();
  EXPECT_EQ(g.to_string(),
            "graph test_graph\n"
            "input %x : float32[2,3]\n"
            "%r = Relu(%x) : float32[2,3]\n"
            "%y = Sigmoid(%r) : float32[2,3]\n"
            "output %y\n");
  EXPECT_EQ(g.nodes()[0].name, "Relu_1");
  EXPECT_EQ(g.nodes()[1].name, "Sigmoid_0");
  EXPECT_EQ(g.opset, 11);
}

TEST(OnnxImport, EmptyInputNamesAreOmittedInputs) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", {int64_t{4}});
  add_float_initializer(m, "hi", {}, {0.5f});
  add_node(m, "Clip", {"x", "", "hi"}, {"y"}, "clip");
  add_output(m, "y", {int64_t{4}});
  Graph g = import_onnx_bytes(m.SerializeAsString(), "clip.onnx");
  const Node& clip = g.nodes().at(0);
  ASSERT_EQ(clip.inputs.size(), 3u);
  EXPECT_EQ(clip.inputs[1], kNoValue);
  EXPECT_EQ(clip.inputs[2], g.find("hi"));
}

// The shape subgraph PyTorch writes for a flatten: Shape, Gather, Unsqueeze, Concat
// feeding a Reshape. It folds into one constant shape at import.
TEST(OnnxImport, ShapeSubgraphsFoldIntoConstants) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", {int64_t{2}, int64_t{3}, int64_t{4}});
  add_int64_initializer(m, "zero", {}, {0});
  add_int64_initializer(m, "axes", {1}, {0});
  add_int64_initializer(m, "minus_one", {1}, {-1});
  add_node(m, "Shape", {"x"}, {"s"});
  add_node(m, "Gather", {"s", "zero"}, {"batch"});
  add_node(m, "Unsqueeze", {"batch", "axes"}, {"batch1"});
  set_int(add_node(m, "Concat", {"batch1", "minus_one"}, {"target"}), "axis", 0);
  add_node(m, "Reshape", {"x", "target"}, {"y"}, "flatten");
  add_output(m, "y", {int64_t{2}, int64_t{12}});
  Graph g = import_onnx_bytes(m.SerializeAsString(), "flatten.onnx");
  g.verify();
  ASSERT_EQ(g.nodes().size(), 1u) << g.to_string();
  EXPECT_EQ(g.nodes()[0].op, "Reshape");
  const Value& target = g.value(g.nodes()[0].inputs[1]);
  ASSERT_TRUE(target.constant.has_value());
  EXPECT_EQ(target.constant->get(0), 2);
  EXPECT_EQ(target.constant->get(1), -1);
  EXPECT_EQ(g.value(g.find("y")).type.to_string(), "float32[2,12]");
}

TEST(OnnxImport, ReadsTensorProtoFiles) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(2);
  t.add_dims(2);
  for (int64_t v : std::vector<int64_t>{1, -2, 3, 40000000000}) t.add_int64_data(v);
  NDArray a = read_tensor_proto(write_file("int64.pb", t.SerializeAsString()));
  EXPECT_EQ(a.dtype(), DataType::int64());
  EXPECT_EQ(a.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a.data_as<int64_t>()[3], 40000000000);

  onnx::TensorProto b;
  b.set_data_type(onnx::TensorProto::BOOL);
  b.add_dims(3);
  b.set_raw_data(std::string("\x01\x00\x01", 3));
  NDArray c = read_tensor_proto(write_file("bool.pb", b.SerializeAsString()));
  EXPECT_EQ(c.dtype(), DataType::boolean());
  EXPECT_EQ(c.get(0), 1);
  EXPECT_EQ(c.get(1), 0);

  onnx::TensorProto h;  // float16 bit patterns travel in int32_data
  h.set_data_type(onnx::TensorProto::FLOAT16);
  h.add_dims(2);
  h.add_int32_data(0x3c00);
  h.add_int32_data(0xc000);
  NDArray half = read_tensor_proto(write_file("half.pb", h.SerializeAsString()));
  EXPECT_EQ(half.get(0), 1.0);
  EXPECT_EQ(half.get(1), -2.0);

  std::string shipped = kTestData + "/node/test_relu/test_data_set_0/input_0.pb";
  if (std::filesystem::exists(shipped)) {
    NDArray x = read_tensor_proto(shipped);
    EXPECT_EQ(x.dtype(), DataType::float32());
    EXPECT_EQ(x.shape(), (std::vector<int64_t>{3, 4, 5}));
  }
}

// The node tests pass shapes, axes and slice bounds as int64 graph inputs; Temper needs
// them at compile time, so they are bound to the shipped input_<i>.pb (by position).
ImportOptions bind_int64_inputs(const onnx::GraphProto& graph, const std::filesystem::path& dir) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto& init : graph.initializer()) initializers.insert(init.name());
  ImportOptions options;
  int position = 0;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (initializers.count(input.name())) continue;
    std::filesystem::path data = dir / "test_data_set_0" / ("input_" + std::to_string(position++) + ".pb");
    if (input.type().tensor_type().elem_type() == onnx::TensorProto::INT64 && std::filesystem::exists(data)) {
      options.constants[input.name()] = read_tensor_proto(data.string());
    }
  }
  return options;
}

// Every model of a testdata folder whose ops are all in the op table must import, or
// fail with a UserError (an attribute value or dtype Temper does not serve); none may
// fail any other way. Returns the number imported.
int import_folder(const std::string& folder, int* with_supported_ops) {
  int imported = 0;
  *with_supported_ops = 0;
  std::vector<std::string> refused;
  std::vector<std::filesystem::path> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  for (const std::filesystem::path& dir : dirs) {
    std::string path = (dir / "model.onnx").string();
    if (!std::filesystem::exists(path)) continue;
    std::ifstream file(path, std::ios::binary);
    onnx::ModelProto model;
    if (!model.ParseFromIstream(&file)) {
      ADD_FAILURE() << "protobuf cannot parse " << path;
      continue;
    }
    bool supported = std::all_of(model.graph().node().begin(), model.graph().node().end(),
                                 [](const onnx::NodeProto& n) { return find_graph_op(n.op_type()) != nullptr; });
    if (!supported) continue;
    ++*with_supported_ops;
    try {
      Graph g = import_onnx(path, bind_int64_inputs(model.graph(), dir));
      g.verify();
      ++imported;
    } catch (const UserError& e) {
      refused.push_back(e.what());
    } catch (const std::exception& e) {
      ADD_FAILURE() << path << " failed other than with a UserError: " << e.what();
    }
  }
  std::cout << folder << ": " << imported << " of " << *with_supported_ops << " models with supported ops imported\n";
  for (const std::string& why : refused) std::cout << "  refused: " << why << "\n";
  return imported;
}

TEST(OnnxImport, BackendNodeTests) {
  if (!std::filesystem::exists(kTestData + "/node")) GTEST_SKIP() << "libonnx-testdata is not installed";
  int supported = 0;
  int imported = import_folder(kTestData + "/node", &supported);
  EXPECT_GE(imported, 200);
  EXPECT_GE(imported, supported * 4 / 5);
}

TEST(OnnxImport, PyTorchConvertedAndOperatorModels) {
  if (!std::filesystem::exists(kTestData + "/pytorch-converted")) GTEST_SKIP() << "libonnx-testdata is not installed";
  int supported = 0;
  int imported = import_folder(kTestData + "/pytorch-converted", &supported);
  EXPECT_GE(imported, 40);
  EXPECT_GE(imported, supported * 4 / 5);
  imported = import_folder(kTestData + "/pytorch-operator", &supported);
  EXPECT_GE(imported, supported * 4 / 5);
}

}  // namespace
}  // namespace temper::graph
