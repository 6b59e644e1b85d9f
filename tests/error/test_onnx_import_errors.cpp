// Bad ONNX models and tensor files fail at import with a UserError naming the file and
// the node, input or value at fault.
#include <gtest/gtest.h>

#include "compiler/graph/onnx_import.h"
#include "compiler/ir/error.h"
#include "unit/onnx_test_models.h"
#include "user_error_test_util.h"

namespace temper::graph {
namespace {

using namespace testing;  // NOLINT: the model builders

using testing_util::expect_user_error;

void expect_import_error(const onnx::ModelProto& m, std::initializer_list<std::string> words,
                         const ImportOptions& options = {}) {
  expect_user_error([&] { import_onnx_bytes(m.SerializeAsString(), "bad.onnx", options); }, words);
}

TEST(OnnxImportErrors, MissingFile) {
  expect_user_error([] { import_onnx("/nonexistent/model.onnx"); },
                    {"cannot read ONNX model '/nonexistent/model.onnx'", "no such file"});
}

TEST(OnnxImportErrors, EmptyTruncatedAndTextFiles) {
  std::string empty = write_file("empty.onnx", "");
  expect_user_error([&] { import_onnx(empty); }, {empty, "is not an ONNX model", "the file is empty"});

  std::string bytes = conv_relu_model().SerializeAsString();
  std::string truncated = write_file("truncated.onnx", bytes.substr(0, bytes.size() / 2));
  expect_user_error([&] { import_onnx(truncated); },
                    {truncated, "is not an ONNX model (cannot parse it as a ModelProto)"});

  std::string text = write_file("text.onnx", "This is a text file.\nIt holds no model at all.\n");
  expect_user_error([&] { import_onnx(text); }, {text, "is not an ONNX model"});
}

TEST(OnnxImportErrors, OpsetOutsideSixToTwentyOne) {
  onnx::ModelProto old_model = conv_relu_model();
  old_model.mutable_opset_import(0)->set_version(5);
  expect_import_error(old_model, {"bad.onnx uses ONNX opset 5", "supports opsets 6 to 21"});
  onnx::ModelProto new_model = conv_relu_model();
  new_model.mutable_opset_import(0)->set_version(22);
  expect_import_error(new_model, {"opset 22", "6 to 21"});
  onnx::ModelProto none = conv_relu_model();
  none.clear_opset_import();
  expect_import_error(none, {"imports no opset of the default ONNX domain"});
}

TEST(OnnxImportErrors, UnknownOpNamesNodeAndOp) {
  onnx::ModelProto m = make_model();
  add_input(m, "x", {int64_t{4}});
  add_node(m, "Relu", {"x"}, {"r"}, "first");
  add_node(m, "Frobnicate", {"r"}, {"y"}, "frob");
  add_output(m, "y", {int64_t{4}});
  expect_import_error(
      m, {"bad.onnx: Temper does not support the ONNX op 'Frobnicate' (1 node, first node 'frob' (Frobnicate))",
          "supported: ", "Conv", "Relu"});
  m.mutable_graph()->mutable_node(1)->clear_name();
  expect_import_error(m, {"first node 'Frobnicate_1' (Frobnicate)"});
}

// One message lists every unsupported op of the model with its count, and its type says
// "unsupported" (not a malformed model).
TEST(OnnxImportErrors, EveryUnknownOpListedWithItsCount) {
  onnx::ModelProto m = make_model();
  add_input(m, "x", {int64_t{4}});
  add_node(m, "Frobnicate", {"x"}, {"a"}, "f1");
  add_node(m, "Relu", {"a"}, {"b"}, "r");
  add_node(m, "Wibble", {"b"}, {"c"}, "w1");
  add_node(m, "Frobnicate", {"c"}, {"y"}, "f2");
  add_output(m, "y", {int64_t{4}});
  expect_import_error(m, {"Temper does not support the ONNX ops 'Frobnicate' (2 nodes, first node 'f1' (Frobnicate)), "
                          "'Wibble' (1 node, first node 'w1' (Wibble))"});
  EXPECT_THROW(import_onnx_bytes(m.SerializeAsString(), "bad.onnx"), UnsupportedError);
  // A malformed model is a UserError of its own kind, not "unsupported".
  onnx::ModelProto dangling = make_model();
  add_input(dangling, "x", {int64_t{4}});
  add_node(dangling, "Add", {"x", "nowhere"}, {"y"}, "add");
  add_output(dangling, "y", {int64_t{4}});
  try {
    import_onnx_bytes(dangling.SerializeAsString(), "bad.onnx");
    ADD_FAILURE() << "a dangling input was imported";
  } catch (const UnsupportedError& e) {
    ADD_FAILURE() << "a malformed model was called unsupported: " << e.what();
  } catch (const UserError&) {
  }
}

TEST(OnnxImportErrors, OtherDomain) {
  onnx::ModelProto m = make_model();
  add_input(m, "x", {int64_t{4}});
  add_node(m, "FusedGemm", {"x"}, {"y"}, "fused")->set_domain("com.microsoft");
  add_output(m, "y", {int64_t{4}});
  expect_import_error(m, {"node 'fused' (FusedGemm) is in the domain 'com.microsoft'", "only the default ONNX domain"});
}

TEST(OnnxImportErrors, DanglingInput) {
  onnx::ModelProto m = make_model();
  add_input(m, "x", {int64_t{4}});
  add_node(m, "Add", {"x", "bias"}, {"y"}, "add");
  add_output(m, "y", {int64_t{4}});
  expect_import_error(m, {"node 'add' reads 'bias', which no node, input or initializer produces"});
}

TEST(OnnxImportErrors, NameWrittenTwice) {
  onnx::ModelProto m = make_model();
  add_input(m, "x", {int64_t{4}});
  add_node(m, "Relu", {"x"}, {"y"}, "a");
  add_node(m, "Sigmoid", {"x"}, {"y"}, "b");
  add_output(m, "y", {int64_t{4}});
  expect_import_error(m, {"the name 'y' is written twice: by node 'a' (Relu) and by node 'b' (Sigmoid)"});

  onnx::ModelProto shadow = make_model();
  add_input(shadow, "x", {int64_t{4}});
  add_node(shadow, "Relu", {"x"}, {"x"}, "inplace");
  add_output(shadow, "x", {int64_t{4}});
  expect_import_error(shadow, {"node 'inplace' (Relu) writes 'x', which is already a graph input or initializer"});
}

TEST(OnnxImportErrors, CycleNamesANodeOnIt) {
  onnx::ModelProto m = make_model();
  add_input(m, "x", {int64_t{4}});
  add_node(m, "Relu", {"x"}, {"r"}, "entry");
  add_node(m, "Add", {"r", "c"}, {"a"}, "add");
  add_node(m, "Sigmoid", {"a"}, {"b"}, "sig");
  add_node(m, "Tanh", {"b"}, {"c"}, "tanh");
  add_output(m, "c", {int64_t{4}});
  expect_import_error(m, {"the graph has a cycle through node 'add': 'add' -> 'sig' -> 'tanh' -> 'add'"});
}

TEST(OnnxImportErrors, UnboundDynamicDimNamesInputAndDim) {
  onnx::ModelProto m = conv_relu_model(/*batch_param=*/true);
  expect_import_error(m, {"input 'x' has the dynamic dimension 'N' (axis 0), which nothing binds", "--dim N=N",
                          "--shape x=D0xD1x..."});
  ImportOptions other;
  other.dims["batch"] = 1;  // not the name the model uses
  expect_import_error(m, {"input 'x'", "'N'"}, other);

  onnx::ModelProto unnamed = conv_relu_model();
  unnamed.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(2)
      ->clear_dim_value();
  expect_import_error(unnamed, {"input 'x' has an unnamed dynamic dimension (axis 2)", "full shape of 'x'"});
}

TEST(OnnxImportErrors, BadBindings) {
  ImportOptions unknown;
  unknown.constants["nope"] = NDArray::zeros({1}, DataType::float32());
  expect_import_error(conv_relu_model(), {"cannot bind 'nope': the model has no input of that name"}, unknown);
  ImportOptions rank;
  rank.input_shapes["x"] = {1, 3, 8};
  expect_import_error(conv_relu_model(), {"input 'x' is given the shape [1, 3, 8]", "4 dimensions"}, rank);
  ImportOptions data_rank;
  data_rank.data_shapes["x"] = {1, 3, 8};
  expect_import_error(conv_relu_model(/*batch_param=*/true),
                      {"input 'x' is given data of shape [1, 3, 8]", "4 dimensions"}, data_rank);
  ImportOptions disagree;
  disagree.dims["N"] = 2;
  disagree.data_shapes["x"] = {3, 3, 8, 8};
  expect_import_error(conv_relu_model(/*batch_param=*/true),
                      {"the dynamic dimension 'N' is given as 2 but 3 in the data given for 'x' (axis 0)"}, disagree);
}

TEST(OnnxImportErrors, TensorsTemperCannotHold) {
  onnx::ModelProto strings = conv_relu_model();
  strings.mutable_graph()->mutable_initializer(1)->set_data_type(onnx::TensorProto::STRING);
  expect_import_error(strings, {"initializer 'b' has element type STRING", "does not support"});

  onnx::ModelProto short_data = conv_relu_model();
  short_data.mutable_graph()->mutable_initializer(1)->mutable_float_data()->RemoveLast();
  expect_import_error(short_data, {"initializer 'b' holds 7 values; its type float32[8] needs 8"});

  onnx::ModelProto external = conv_relu_model();
  onnx::TensorProto* w = external.mutable_graph()->mutable_initializer(0);
  w->clear_raw_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = w->add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  expect_import_error(external, {"initializer 'w' keeps its data in an external file ('weights.bin')"});

  onnx::ModelProto string_input = conv_relu_model();
  string_input.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::STRING);
  expect_import_error(string_input, {"input 'x' has element type STRING"});
}

TEST(OnnxImportErrors, UnsupportedAttributeKind) {
  onnx::ModelProto m = make_model();
  add_input(m, "x", {int64_t{4}});
  onnx::NodeProto* relu = add_node(m, "Relu", {"x"}, {"y"}, "relu");
  onnx::AttributeProto* a = relu->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name("sub");
  add_output(m, "y", {int64_t{4}});
  expect_import_error(m, {"node 'relu' (Relu): attribute 'body' is of kind GRAPH", "does not support"});
}

TEST(OnnxImportErrors, DeclaredOutputTypeDisagrees) {
  onnx::ModelProto m = conv_relu_model();
  m.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_value(4);
  expect_import_error(m, {"bad.onnx", "'y'", "float32[1,4,8,8]", "float32[1,8,8,8]"});
}

TEST(OnnxImportErrors, UndeclaredGraphOutput) {
  onnx::ModelProto m = conv_relu_model();
  add_output(m, "nowhere", {int64_t{1}});
  expect_import_error(m, {"graph output 'nowhere' is produced by no node, input or initializer"});
}

TEST(OnnxImportErrors, BadTensorFiles) {
  expect_user_error([] { read_tensor_proto("/nonexistent/input_0.pb"); },
                    {"cannot read tensor file '/nonexistent/input_0.pb'"});
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(1000);
  t.set_raw_data(std::string(4000, '\0'));
  std::string bytes = t.SerializeAsString();
  std::string truncated = write_file("truncated.pb", bytes.substr(0, bytes.size() - 100));
  expect_user_error([&] { read_tensor_proto(truncated); }, {truncated, "is not a TensorProto"});
  onnx::TensorProto complex;
  complex.set_name("z");
  complex.set_data_type(onnx::TensorProto::COMPLEX64);
  std::string complex_path = write_file("complex.pb", complex.SerializeAsString());
  expect_user_error([&] { read_tensor_proto(complex_path); }, {"tensor 'z' in", "element type COMPLEX64"});
  // Dims that promise far more data than the file holds (as a SequenceProto file read as a
  // tensor may): refused before anything is allocated.
  onnx::TensorProto huge;
  huge.set_data_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < 3; ++i) huge.add_dims(100000);
  huge.set_raw_data(std::string(16, '\0'));
  std::string huge_path = write_file("huge.pb", huge.SerializeAsString());
  expect_user_error([&] { read_tensor_proto(huge_path); }, {"holds 16 bytes of data", "needs 4000000000000000"});
  for (int i = 0; i < 3; ++i) huge.add_dims(100000);
  huge_path = write_file("huger.pb", huge.SerializeAsString());
  expect_user_error([&] { read_tensor_proto(huge_path); }, {"too large for any tensor"});
}

}  // namespace
}  // namespace temper::graph
