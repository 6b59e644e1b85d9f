// Small ONNX models written with ONNX's protobuf classes, for the frontend's tests (no
// Python needed). Tests that include this link onnx_proto and protobuf (tests/CMakeLists.txt).
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <fstream>
#include <string>
#include <variant>
#include <vector>

namespace temper::graph::testing {

// A dimension: a size, or a dim_param name.
using Dim = std::variant<int64_t, std::string>;

inline onnx::ModelProto make_model(int64_t opset = 13) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("temper-test");
  onnx::OperatorSetIdProto* op = model.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  model.mutable_graph()->set_name("test_graph");
  return model;
}

inline void set_value_info(onnx::ValueInfoProto* info, const std::string& name, std::vector<Dim> dims,
                           int elem_type = onnx::TensorProto::FLOAT) {
  info->set_name(name);
  onnx::TypeProto_Tensor* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (const Dim& d : dims) {
    if (const int64_t* size = std::get_if<int64_t>(&d)) {
      shape->add_dim()->set_dim_value(*size);
    } else {
      shape->add_dim()->set_dim_param(std::get<std::string>(d));
    }
  }
}

inline void add_input(onnx::ModelProto& m, const std::string& name, std::vector<Dim> dims,
                      int elem_type = onnx::TensorProto::FLOAT) {
  set_value_info(m.mutable_graph()->add_input(), name, std::move(dims), elem_type);
}

inline void add_output(onnx::ModelProto& m, const std::string& name, std::vector<Dim> dims,
                       int elem_type = onnx::TensorProto::FLOAT) {
  set_value_info(m.mutable_graph()->add_output(), name, std::move(dims), elem_type);
}

// An output with an element type but no shape: its type is left to inference.
inline void add_untyped_output(onnx::ModelProto& m, const std::string& name) {
  onnx::ValueInfoProto* info = m.mutable_graph()->add_output();
  info->set_name(name);
  info->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

inline onnx::NodeProto* add_node(onnx::ModelProto& m, const std::string& op, std::vector<std::string> inputs,
                                 std::vector<std::string> outputs, const std::string& name = "") {
  onnx::NodeProto* node = m.mutable_graph()->add_node();
  node->set_op_type(op);
  node->set_name(name);
  for (const std::string& in : inputs) node->add_input(in);
  for (const std::string& out : outputs) node->add_output(out);
  return node;
}

inline void set_ints(onnx::NodeProto* node, const std::string& name, std::vector<int64_t> values) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

inline void set_int(onnx::NodeProto* node, const std::string& name, int64_t value) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

// A float initializer with the values in float_data (raw = false) or raw_data.
inline void add_float_initializer(onnx::ModelProto& m, const std::string& name, std::vector<int64_t> dims,
                                  const std::vector<float>& values, bool raw = false) {
  onnx::TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  if (raw) {
    t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  } else {
    for (float v : values) t->add_float_data(v);
  }
}

inline void add_int64_initializer(onnx::ModelProto& m, const std::string& name, std::vector<int64_t> dims,
                                  const std::vector<int64_t>& values) {
  onnx::TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

// x[1,3,8,8] -> Conv(w[8,3,3,3], b[8], pads 1) -> Relu -> y[1,8,8,8], the batch named "N"
// when batch_param is set.
inline onnx::ModelProto conv_relu_model(bool batch_param = false) {
  onnx::ModelProto m = make_model();
  add_input(m, "x", {batch_param ? Dim{std::string("N")} : Dim{int64_t{1}}, int64_t{3}, int64_t{8}, int64_t{8}});
  add_float_initializer(m, "w", {8, 3, 3, 3}, std::vector<float>(8 * 3 * 3 * 3, 0.5f), /*raw=*/true);
  add_float_initializer(m, "b", {8}, {1, 2, 3, 4, 5, 6, 7, 8});
  onnx::NodeProto* conv = add_node(m, "Conv", {"x", "w", "b"}, {"c"}, "conv");
  set_ints(conv, "kernel_shape", {3, 3});
  set_ints(conv, "pads", {1, 1, 1, 1});
  add_node(m, "Relu", {"c"}, {"y"}, "relu");
  if (batch_param) {
    add_untyped_output(m, "y");
  } else {
    add_output(m, "y", {int64_t{1}, int64_t{8}, int64_t{8}, int64_t{8}});
  }
  return m;
}

// Writes bytes to a fresh file in the test's temporary folder; returns its path.
inline std::string write_file(const std::string& name, const std::string& bytes) {
  std::string path = ::testing::TempDir() + "temper_onnx_" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

inline std::string write_model(const std::string& name, const onnx::ModelProto& m) {
  return write_file(name, m.SerializeAsString());
}

}  // namespace temper::graph::testing
