// Target strings (`llvm -mcpu=native`, `cuda -arch=sm_90 -device=1`): parsed, and the
// canonical string must parse to itself.
#include <cstdlib>

#include "compiler/target/target.h"
#include "fuzz/fuzz_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  temper::fuzz::refusal_is_fine([&] {
    std::string canonical = temper::Target::parse(temper::fuzz::as_string(data, size)).to_string();
    if (temper::Target::parse(canonical).to_string() != canonical) std::abort();
  });
  return 0;
}
