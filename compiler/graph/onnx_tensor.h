// ONNX TensorProtos and element types as Temper arrays and dtypes: the conversions the
// frontend (onnx_import.cpp) and read_tensor_proto share. The protobuf classes are only
// forward-declared here, so this header stays free of protobuf's headers.
#pragma once

#include <optional>
#include <string>

#include "compiler/ir/type.h"
#include "compiler/runtime/ndarray.h"

namespace onnx {
class TensorProto;
}

namespace temper::graph {

// The dtype of an ONNX element type (TensorProto::DataType), or nullopt for one Temper
// does not hold (string, complex, bfloat16, undefined).
std::optional<DataType> dtype_from_onnx(int elem_type);
// "FLOAT", "STRING", ... for messages; "type 42" for a code ONNX does not define.
std::string onnx_type_name(int elem_type);

// The tensor's data as an array. Reads raw_data or the typed field the element type
// uses. UserError naming `what` (e.g. "initializer 'w'") for an element type Temper does
// not hold, data kept in an external file, or a data length that does not match the dims.
NDArray tensor_from_proto(const onnx::TensorProto& proto, const std::string& what);

}  // namespace temper::graph
