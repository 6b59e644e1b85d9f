// The ONNX importer on arbitrary bytes: protobuf parsing, the graph's checks, shape and
// type inference (compiler/graph/onnx_import.h).
#include "compiler/graph/onnx_import.h"
#include "fuzz/fuzz_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  temper::fuzz::refusal_is_fine([&] { temper::graph::import_onnx_bytes(temper::fuzz::as_string(data, size), "fuzz.onnx"); });
  return 0;
}
