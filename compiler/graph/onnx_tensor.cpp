// TensorProto -> NDArray (see onnx_tensor.h), and read_tensor_proto (onnx_import.h).
#include "compiler/graph/onnx_tensor.h"

#include <onnx/onnx_pb.h>  // defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML=1)

#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "compiler/graph/onnx_import.h"
#include "compiler/ir/error.h"

namespace temper::graph {

namespace {

using onnx::TensorProto;

// Copies a repeated typed field element by element, converting to the array's element
// type T (int32_data carries int8 ... uint16, bool and float16 bit patterns).
template <typename T, typename Field>
void copy_field(const Field& field, const NDArray& out) {
  T* data = out.data_as<T>();
  for (int i = 0; i < field.size(); ++i) data[i] = static_cast<T>(field.Get(i));
}

// The element count of the typed field the element type stores its values in.
int typed_field_size(const TensorProto& proto) {
  switch (proto.data_type()) {
    case TensorProto::FLOAT:
      return proto.float_data_size();
    case TensorProto::DOUBLE:
      return proto.double_data_size();
    case TensorProto::INT64:
      return proto.int64_data_size();
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      return proto.uint64_data_size();
    default:
      return proto.int32_data_size();
  }
}

void copy_typed_field(const TensorProto& proto, const NDArray& out) {
  switch (proto.data_type()) {
    case TensorProto::FLOAT:
      copy_field<float>(proto.float_data(), out);
      break;
    case TensorProto::DOUBLE:
      copy_field<double>(proto.double_data(), out);
      break;
    case TensorProto::INT64:
      copy_field<int64_t>(proto.int64_data(), out);
      break;
    case TensorProto::UINT32:
      copy_field<uint32_t>(proto.uint64_data(), out);
      break;
    case TensorProto::UINT64:
      copy_field<uint64_t>(proto.uint64_data(), out);
      break;
    case TensorProto::INT32:
      copy_field<int32_t>(proto.int32_data(), out);
      break;
    case TensorProto::INT16:
      copy_field<int16_t>(proto.int32_data(), out);
      break;
    case TensorProto::INT8:
      copy_field<int8_t>(proto.int32_data(), out);
      break;
    case TensorProto::UINT16:
    case TensorProto::FLOAT16:
      copy_field<uint16_t>(proto.int32_data(), out);
      break;
    case TensorProto::UINT8:
      copy_field<uint8_t>(proto.int32_data(), out);
      break;
    case TensorProto::BOOL:
      copy_field<bool>(proto.int32_data(), out);
      break;
    default:
      TEMPER_CHECK(false, "no typed field for ONNX type ", proto.data_type());
  }
}

}  // namespace

std::optional<DataType> dtype_from_onnx(int elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT:
      return DataType::float32();
    case TensorProto::DOUBLE:
      return DataType::float64();
    case TensorProto::FLOAT16:
      return DataType::float16();
    case TensorProto::INT8:
      return DataType::int8();
    case TensorProto::INT16:
      return DataType::int16();
    case TensorProto::INT32:
      return DataType::int32();
    case TensorProto::INT64:
      return DataType::int64();
    case TensorProto::UINT8:
      return DataType::uint8();
    case TensorProto::UINT16:
      return DataType(DataType::Code::UInt, 16);
    case TensorProto::UINT32:
      return DataType(DataType::Code::UInt, 32);
    case TensorProto::UINT64:
      return DataType(DataType::Code::UInt, 64);
    case TensorProto::BOOL:
      return DataType::boolean();
    default:
      return std::nullopt;
  }
}

std::string onnx_type_name(int elem_type) {
  if (TensorProto::DataType_IsValid(elem_type)) {
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(elem_type));
  }
  return str("type ", elem_type);
}

NDArray tensor_from_proto(const TensorProto& proto, const std::string& what) {
  std::optional<DataType> dtype = dtype_from_onnx(proto.data_type());
  if (!dtype) {
    throw UnsupportedError(
        str(what, " has element type ", onnx_type_name(proto.data_type()), ", which Temper does not support"));
  }
  if (proto.data_location() == TensorProto::EXTERNAL || proto.external_data_size() > 0) {
    std::string location;
    for (const auto& entry : proto.external_data()) {
      if (entry.key() == "location") location = entry.value();
    }
    throw UserError(str(what, " keeps its data in an external file ('", location,
                        "'), which Temper does not read: save the model with its data inside"));
  }
  if (proto.has_segment()) throw UserError(str(what, " is a segment of a larger tensor, which Temper does not read"));
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  // The data must match the dims before anything is allocated: a file that is not a
  // tensor may still parse as one, with absurd dims.
  int64_t elements = 1;
  for (int64_t extent : shape) {
    if (extent < 0) throw UserError(str(what, " has a negative dimension (", shape_to_string(shape), ")"));
    if (extent > 0 && elements > std::numeric_limits<int64_t>::max() / extent) {
      throw UserError(str(what, " has dimensions ", shape_to_string(shape), " too large for any tensor"));
    }
    elements *= extent;
  }
  if (proto.has_raw_data()) {
    // raw_data is little-endian, like the hosts Temper runs on.
    if (static_cast<int64_t>(proto.raw_data().size()) != elements * dtype->bytes()) {
      throw UserError(str(what, " holds ", proto.raw_data().size(), " bytes of data; its type ", *dtype,
                          shape_to_string(shape), " needs ", elements * dtype->bytes()));
    }
    NDArray out = NDArray::empty(shape, *dtype);
    std::memcpy(out.data(), proto.raw_data().data(), proto.raw_data().size());
    return out;
  }
  if (typed_field_size(proto) != elements) {
    throw UserError(str(what, " holds ", typed_field_size(proto), " values; its type ", *dtype, shape_to_string(shape),
                        " needs ", elements));
  }
  NDArray out = NDArray::empty(shape, *dtype);
  copy_typed_field(proto, out);
  return out;
}

NDArray read_tensor_proto(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw UserError(str("cannot read tensor file '", path, "': no such file or not readable"));
  std::ostringstream bytes;
  bytes << file.rdbuf();
  TensorProto proto;
  if (bytes.str().empty() || !proto.ParseFromString(bytes.str())) {
    throw UserError(
        str(path, " is not a TensorProto (cannot parse it", bytes.str().empty() ? ": the file is empty" : "", ")"));
  }
  std::string what = proto.name().empty() ? str("the tensor in ", path) : str("tensor '", proto.name(), "' in ", path);
  return tensor_from_proto(proto, what);
}

}  // namespace temper::graph
