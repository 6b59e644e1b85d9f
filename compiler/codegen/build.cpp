#include "compiler/codegen/build.h"

#include <chrono>
#include <sstream>

#include "compiler/codegen/c/build_c.h"
#include "compiler/codegen/c/codegen_c.h"
#include "compiler/codegen/gpu/device_program.h"
#include "compiler/codegen/gpu/gpu_module.h"
#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/ir/printer.h"

namespace temper {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<PrimFunc> lower_all(const std::vector<PrimFunc>& scheduled, const LowerOptions& options) {
  std::vector<PrimFunc> lowered;
  lowered.reserve(scheduled.size());
  for (const PrimFunc& f : scheduled) lowered.push_back(lower(f, options));
  return lowered;
}

}  // namespace

void check_target(const Target& target) {
  if (target.kind == Target::Kind::LLVM) check_llvm_target(target);
}

BuildResult build(const std::vector<PrimFunc>& scheduled, const Target& target, const LowerOptions& options) {
  BuildResult r;
  auto t0 = std::chrono::steady_clock::now();
  r.lowered = lower_all(scheduled, options);
  r.lower_seconds = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  switch (target.kind) {
    case Target::Kind::LLVM:
      r.module = build_llvm(r.lowered, target);
      break;
    case Target::Kind::C:
      r.module = build_c(r.lowered, target);
      break;
    case Target::Kind::CUDA:
    case Target::Kind::OpenCL:
      r.module = std::make_unique<GpuModule>(build_device_program(r.lowered, target), open_gpu_device(target));
      break;
  }
  r.codegen_seconds = seconds_since(t0);
  return r;
}

void export_library(const std::vector<PrimFunc>& scheduled, const Target& target, const std::string& path,
                    const LowerOptions& options) {
  if (target.kind != Target::Kind::LLVM) {
    throw UserError(str("exporting a library needs an llvm target, got '", target.to_string(), "'"));
  }
  export_llvm(lower_all(scheduled, options), target, path);
}

std::string emit(const std::vector<PrimFunc>& scheduled, const Target& target, const std::string& what,
                 const LowerOptions& options) {
  if (what == "ir") {
    std::ostringstream os;
    for (const PrimFunc& f : scheduled) os << f;
    return os.str();
  }
  std::vector<PrimFunc> lowered = lower_all(scheduled, options);
  if (what == "lowered") {
    std::ostringstream os;
    for (const PrimFunc& f : lowered) os << f;
    return os.str();
  }
  if (what == "cuda" || what == "opencl" || what == "ptx") return emit_device_code(lowered, target, what);
  if (target.is_gpu()) {
    throw UserError(str("--emit ", what, " does not fit target '", target.to_string(), "': use ir, lowered, ",
                        target.kind == Target::Kind::CUDA ? "cuda or ptx" : "opencl"));
  }
  if (what == "c") return emit_c(lowered);
  if (what == "llvm") return emit_llvm_ir(lowered, target);
  if (what == "asm") return emit_asm(lowered, target);
  throw UserError(
      str("unknown --emit '", what, "': use one of ir, lowered, c, llvm, asm (cuda, ptx, opencl for GPU targets)"));
}

}  // namespace temper
