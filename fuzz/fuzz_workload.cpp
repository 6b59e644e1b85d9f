// Workload strings (`matmul:M=64,N=64,K=64`), parsed and instantiated as an op: what every
// command and the tuning log take. The canonical string must parse to itself.
#include <cstdlib>

#include "compiler/ops/workload.h"
#include "fuzz/fuzz_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using temper::ops::Workload;
  temper::fuzz::refusal_is_fine([&] {
    Workload w = Workload::parse(temper::fuzz::as_string(data, size));
    std::string canonical = w.to_string();
    if (Workload::parse(canonical).to_string() != canonical) std::abort();
    temper::ops::instantiate(w);
  });
  return 0;
}
