// The LLVM backend: lowered PrimFuncs (see codegen/c/lowered_func_analysis.h for the
// form) compiled through LLVM 19 into machine code for the target's CPU, run in process
// with ORC's LLJIT or exported as an object file or shared library. Every function
// follows the calling convention of runtime/c_runtime_api.h.
//
// What the generated code is like: one compute function per PrimFunc over noalias,
// aligned buffer pointers, behind a wrapper that checks the arguments; explicit vector
// types for vector IR; parallel loops outlined into `int32_t(int64_t i, void* closure)`
// and run by temper_parallel_for; "local" and small constant-size buffers as allocas in
// the entry block (so SROA promotes register tiles), the others from temper_alloc;
// floating point with the `contract` flag only (FMAs form, nothing reassociates); the O3
// pipeline. Math: LLVM intrinsics where they exist, libm for tanh and erf, float16 math
// in float32.
//
// This header has no LLVM types: LLVM's headers stay inside codegen/llvm/*.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/runtime/module.h"
#include "compiler/target/target.h"

namespace temper {

// Where the time of one build_llvm went, in milliseconds.
struct LLVMCompileTimes {
  double emit_ms = 0;      // Temper IR to LLVM IR
  double optimize_ms = 0;  // the O3 pipeline
  double jit_ms = 0;       // machine code generation and linking in the JIT
};

// JIT-compiles lowered (an "llvm" target) into a Module of this process. Throws UserError
// for IR that is not lowered or a target LLVM does not know.
std::unique_ptr<Module> build_llvm(const std::vector<PrimFunc>& lowered, const Target& target,
                                   LLVMCompileTimes* times = nullptr);

// UserError for an llvm target whose CPU or a feature LLVM does not know (what build_llvm
// would throw), without compiling anything.
void check_llvm_target(const Target& target);

// Writes an object file (path ending in .o) or a shared library (.so, linked by the
// system `cc`). load_shared_library() (runtime/shared_library_module.h) loads the latter.
void export_llvm(const std::vector<PrimFunc>& lowered, const Target& target, const std::string& path);

// The LLVM IR, after the O3 pipeline unless optimize is false.
std::string emit_llvm_ir(const std::vector<PrimFunc>& lowered, const Target& target, bool optimize = true);

// The target's assembly for the optimised module.
std::string emit_asm(const std::vector<PrimFunc>& lowered, const Target& target);

}  // namespace temper
