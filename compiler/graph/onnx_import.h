// The ONNX frontend: a model file (ModelProto, opsets 6 to 21 of the default domain)
// into a Graph, through Debian's libonnx protobuf classes. Protobuf and ONNX headers stay
// inside compiler/graph/onnx_*.cpp.
//
// Initializers become constants. A graph input that is also an initializer is a constant
// unless the caller binds it otherwise; any other graph input may be bound to a constant
// (ImportOptions::constants). Dynamic dimensions ("batch", -1, 0) take their values from
// ImportOptions::dims (by dim_param name), ImportOptions::data_shapes (the shapes of the
// data to be passed) or ImportOptions::input_shapes; one left unbound
// is an error naming the input and the dimension. After import, types are inferred
// (shape_inference.h) and nodes whose inputs are all constants -- the shape-computing
// subgraphs exporters write (Shape, Gather, Unsqueeze, Concat, ... feeding a Reshape) --
// are folded into constants.
//
// Errors (UserError, naming the file and the node or value): a file that is missing,
// truncated or not an ONNX model; an opset outside 6..21 or another domain; an op or
// attribute Temper does not support (naming both, and the node); a cycle, a name used
// twice, an input that nothing produces.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"

namespace temper::graph {

struct ImportOptions {
  std::map<std::string, int64_t> dims;                             // dim_param name -> size
  std::map<std::string, std::vector<int64_t>> input_shapes;        // input name -> full shape
  // input name -> the shape of the data the caller will pass: binds the dynamic dimensions
  // it declares (its static dimensions, and names that are no input, are the caller's to check)
  std::map<std::string, std::vector<int64_t>> data_shapes;
  std::map<std::string, NDArray> constants;                        // input name -> bound data
  bool fold_constants = true;
};

Graph import_onnx(const std::string& path, const ImportOptions& options = {});
// The same from the bytes of a ModelProto; source names it in errors.
Graph import_onnx_bytes(const std::string& bytes, const std::string& source, const ImportOptions& options = {});

// A serialized TensorProto (the backend tests' input_*.pb / output_*.pb) as an array.
// UserError for a truncated file or a data type Temper does not hold.
NDArray read_tensor_proto(const std::string& path);

}  // namespace temper::graph
