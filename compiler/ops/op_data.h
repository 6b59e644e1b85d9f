// Test data for an operator instance: random inputs drawn from each input's ValueRange,
// the reference outputs, and arrays for a compiled function to write. The CLI's `run`,
// the correctness tests and the benchmarks check compiled code through here, so "correct"
// means one thing everywhere.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/ops/workload.h"
#include "compiler/runtime/module.h"
#include "compiler/runtime/ndarray.h"

namespace temper::ops {

struct OpData {
  std::vector<NDArray> inputs;
  std::vector<NDArray> outputs;   // written by the function under test
  std::vector<NDArray> expected;  // written by the reference
  double tolerance_of_largest = 0;  // OpInstance::tolerance_of_largest

  // inputs ++ outputs, the order of the PrimFunc's parameters.
  std::vector<NDArray*> args();
};

// Random inputs (same seed, same data), zeroed outputs, and the reference's outputs.
OpData make_op_data(const OpInstance& op, uint64_t seed = 0);

// Compares outputs with expected at tolerances fit for the dtype and for floating-point
// sums whose order differs from the reference's.
Comparison check_outputs(const OpData& data);

// Runs f on data and checks its outputs; the Comparison says what differed. Outputs are
// poisoned first (NaN, or an out-of-range integer), so an element f never writes fails.
Comparison run_and_check(const PackedFunc& f, OpData& data);

}  // namespace temper::ops
