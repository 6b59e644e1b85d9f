// The LLVM backend's internal interface, shared by the .cpp files of codegen/llvm only
// (it names LLVM types; nothing outside this folder includes it).
#pragma once

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/target/target.h"

namespace temper {

// The CPU name and feature string LLVM compiles for, "native" and defaults resolved.
struct LLVMCPU {
  std::string name;
  std::string features;
};
LLVMCPU resolve_cpu(const Target& target);

// A TargetMachine for the host's triple and target's CPU (position-independent code,
// optimisation level Aggressive). Throws UserError for an unknown CPU or feature.
std::unique_ptr<llvm::TargetMachine> create_target_machine(const Target& target);

// Translates lowered functions to an LLVM module for tm (emit_llvm_ir.cpp).
std::unique_ptr<llvm::Module> translate_to_llvm(const std::vector<PrimFunc>& lowered, llvm::LLVMContext& context,
                                                llvm::TargetMachine& tm);

// Runs the O3 pipeline, with loop and SLP vectorisation, tuned for tm.
void optimize_module(llvm::Module& module, llvm::TargetMachine& tm);

}  // namespace temper
