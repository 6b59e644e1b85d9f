// build(): the one path from scheduled PrimFuncs to callable code: lower each function
// (compiler/lower/lower.h), then hand the lowered functions to the target's backend.
// The CLI, the tests and the benchmarks all compile through here. A GPU target builds a
// GpuModule on the target's device (codegen/gpu/gpu_module.h): UserError when there is none.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/lower/lower.h"
#include "compiler/runtime/module.h"
#include "compiler/target/target.h"

namespace temper {

struct BuildResult {
  std::unique_ptr<Module> module;
  std::vector<PrimFunc> lowered;
  double lower_seconds = 0;    // lowering all functions
  double codegen_seconds = 0;  // backend: LLVM optimisation + JIT, or the C compiler
};

BuildResult build(const std::vector<PrimFunc>& scheduled, const Target& target, const LowerOptions& options = {});

// UserError now for a target whose every compile would fail the same way (an llvm
// target's CPU or feature LLVM does not know), so that a job says it once, before it
// starts, rather than as the compile error of each candidate in the log.
void check_target(const Target& target);

// Lowers and writes the functions as an object file (.o) or a shared library (.so) that
// load_shared_library() loads; LLVM targets only.
void export_library(const std::vector<PrimFunc>& scheduled, const Target& target, const std::string& path,
                    const LowerOptions& options = {});

// What `temper show --emit` prints: "ir" (as scheduled), "lowered", and the target's code:
// "c", "llvm", "asm" for CPU targets, "cuda" and "ptx" for cuda, "opencl" for opencl.
// options.log_passes prints the IR after each lowering pass on the way.
std::string emit(const std::vector<PrimFunc>& scheduled, const Target& target, const std::string& what,
                 const LowerOptions& options = {});

}  // namespace temper
