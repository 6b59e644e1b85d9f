// lower(): a scheduled PrimFunc becomes code-ready IR.
//
// Input: a PrimFunc with blocks inside loops (te::create_prim_func's output after
// schedule primitives). Output, the contract codegen relies on (verify_lowered checks it):
// - no Block, BlockRealize or Reduce nodes;
// - every buffer access has exactly one index, the row-major element offset; buffers
//   keep their identity and shape, so the parameters are the input's objects;
// - loops are Serial or Parallel (or ThreadBinding on GPU targets): Vectorized loops are
//   vector IR (ramps, broadcasts, vector loads and stores) or, when that is impossible,
//   serial loops with a warning; Unrolled loops are expanded;
// - each Allocate sits at the lowest common ancestor of its uses, shrunk to the region
//   accessed there, one-dimensional, "local" when small and constant-sized;
// - index arithmetic is simplified.
// The passes are listed in order in lower.cpp, one line each.
#pragma once

#include <ostream>

#include "compiler/ir/ir.h"

namespace temper {

// True in debug builds, or when Temper is built with TEMPER_VERIFY_IR.
bool verify_ir_by_default();

struct LowerOptions {
  bool log_passes = false;               // print the IR after each pass
  std::ostream* log = nullptr;           // where the log goes (stderr if null)
  bool verify = verify_ir_by_default();  // run the IR verifier after each pass
};

PrimFunc lower(const PrimFunc& f, const LowerOptions& opts = {});

}  // namespace temper
