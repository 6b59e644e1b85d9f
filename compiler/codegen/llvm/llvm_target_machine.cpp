// The target machine LLVM compiles for, and the optimisation pipeline.
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>

#include <mutex>

#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/codegen/llvm/host_cpu.h"
#include "compiler/codegen/llvm/llvm_backend.h"
#include "compiler/ir/error.h"

namespace temper {
namespace {

const llvm::Target& native_llvm_target(const std::string& triple) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  TEMPER_CHECK(target, "LLVM has no target for the host triple ", triple, ": ", error);
  return *target;
}

// LLVM only warns about unknown CPUs and features, then ignores them: make them errors.
void check_cpu(const llvm::Target& target, const std::string& triple, const Target& t, const LLVMCPU& cpu) {
  // A generic subtarget knows every CPU and feature name (the named CPU would warn first).
  std::unique_ptr<llvm::MCSubtargetInfo> info(target.createMCSubtargetInfo(triple, "generic", ""));
  if (!info->isCPUStringValid(cpu.name)) {
    throw UserError(str("unknown CPU '", cpu.name, "' in target '", t.to_string(),
                        "': use an LLVM CPU name such as skylake-avx512 or znver3, or native"));
  }
  for (const std::string& attr : t.mattrs) {
    std::string name = attr.substr(1);
    bool known = false;
    for (const llvm::SubtargetFeatureKV& kv : info->getAllProcessorFeatures()) known |= name == kv.Key;
    if (!known) throw UserError(str("unknown CPU feature '", name, "' in -mattr of target '", t.to_string(), "'"));
  }
}

}  // namespace

LLVMCPU resolve_cpu(const Target& target) {
  LLVMCPU cpu;
  std::string features;
  if (target.mcpu == "native") {
    cpu.name = host_cpu_name();
    features = host_cpu_features();
  } else {
    cpu.name = target.mcpu.empty() ? "generic" : target.mcpu;
  }
  for (const std::string& attr : target.mattrs) features += (features.empty() ? "" : ",") + attr;
  cpu.features = features;
  return cpu;
}

std::unique_ptr<llvm::TargetMachine> create_target_machine(const Target& target) {
  if (target.kind != Target::Kind::LLVM) {
    throw UserError(str("the LLVM backend compiles for an 'llvm' target, got '", target.to_string(), "'"));
  }
  std::string triple = llvm::sys::getProcessTriple();
  const llvm::Target& llvm_target = native_llvm_target(triple);
  LLVMCPU cpu = resolve_cpu(target);
  check_cpu(llvm_target, triple, target, cpu);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(llvm_target.createTargetMachine(
      triple, cpu.name, cpu.features, options, llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  TEMPER_CHECK(tm, "LLVM could not create a target machine for ", triple, " ", cpu.name);
  return tm;
}

void check_llvm_target(const Target& target) {
  create_target_machine(target);
}

void optimize_module(llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  tuning.LoopUnrolling = true;
  llvm::PassBuilder builder(&tm, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(module, mam);
}

}  // namespace temper
