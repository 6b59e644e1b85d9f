// NumPy .npy files, as `temper run --input NAME=FILE.npy` reads them (compiler/runtime/npy.h).
#include "compiler/runtime/npy.h"
#include "fuzz/fuzz_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  temper::fuzz::refusal_is_fine([&] { temper::parse_npy(temper::fuzz::as_string(data, size), "fuzz.npy"); });
  return 0;
}
