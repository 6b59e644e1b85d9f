// The LLVM backend's entry points: JIT modules, exported objects and libraries, IR and
// assembly text.
#include "compiler/codegen/llvm/codegen_llvm.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/raw_ostream.h>

#include <signal.h>
#include <unistd.h>
#include <string.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>

#include "compiler/codegen/c/system_compiler.h"
#include "compiler/codegen/llvm/llvm_backend.h"
#include "compiler/ir/text.h"
#include "compiler/runtime/module.h"
#include "compiler/runtime/runtime_symbols.h"

namespace temper {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string error_text(llvm::Error error) {
  return llvm::toString(std::move(error));
}

// $TEMPER_TEST_CRASH_IN_LLVM names a function whose compile crashes (a segfault), or, as
// NAME:exit, ends the process (_exit(70), which no recovery catches), so that tests can
// check what a crash inside LLVM costs.
void crash_if_asked(const std::vector<PrimFunc>& lowered) {
  const char* asked = std::getenv("TEMPER_TEST_CRASH_IN_LLVM");
  if (!asked) return;
  std::string name = asked;
  bool exit = name.size() > 5 && name.ends_with(":exit");
  if (exit) name.resize(name.size() - 5);
  for (const PrimFunc& f : lowered) {
    if (f.name != name) continue;
    if (exit) _exit(70);
    raise(SIGSEGV);
  }
}

// Runs work (LLVM's part of compiling lowered) so that a crash inside LLVM -- a segfault
// or a failed internal check in a pass, on code one candidate's schedule made -- is a
// UserError for that module, not the end of the process: a tuning job compiles its
// candidates on threads of its own. llvm::CrashRecoveryContext catches the signal (or
// LLVM's fatal-error exit) on this thread and returns here; what the crashed code held is
// leaked. An exception work throws passes through as it is.
void recovering_llvm_crashes(const std::vector<PrimFunc>& lowered, const std::function<void()>& work) {
  static std::once_flag enabled;
  std::call_once(enabled, [] { llvm::CrashRecoveryContext::Enable(); });
  std::exception_ptr thrown;
  llvm::CrashRecoveryContext context;
  bool finished = context.RunSafely([&] {
    try {
      crash_if_asked(lowered);
      work();
    } catch (...) {
      thrown = std::current_exception();
    }
  });
  if (thrown) std::rethrow_exception(thrown);
  if (finished) return;
  std::vector<std::string> names;
  for (const PrimFunc& f : lowered) names.push_back(f.name);
  int signal_number = context.RetCode - 128;
  std::string how = signal_number > 0 && signal_number < NSIG ? str("signal ", signal_number, ", ", strsignal(signal_number))
                                                              : str("exit status ", context.RetCode);
  throw UserError(str("LLVM crashed compiling ", join(names, ", "), " (", how,
                      "): a bug in LLVM, or in the code Temper made for this schedule; the process goes on without it"));
}

// An optimised module for target, in its own context.
struct OptimizedModule {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::unique_ptr<llvm::Module> module;
};

OptimizedModule compile_to_llvm(const std::vector<PrimFunc>& lowered, const Target& target, bool optimize,
                                LLVMCompileTimes* times) {
  OptimizedModule m;
  m.tm = create_target_machine(target);
  m.context = std::make_unique<llvm::LLVMContext>();
  Clock::time_point start = Clock::now();
  m.module = translate_to_llvm(lowered, *m.context, *m.tm);
  if (times) times->emit_ms = ms_since(start);
  start = Clock::now();
  if (optimize) optimize_module(*m.module, *m.tm);
  if (times) times->optimize_ms = ms_since(start);
  return m;
}

std::string machine_code(OptimizedModule& m, llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager passes;
  TEMPER_CHECK(!m.tm->addPassesToEmitFile(passes, os, nullptr, type), "LLVM cannot emit this file type for ",
               m.tm->getTargetTriple().str());
  passes.run(*m.module);
  return std::string(buffer.begin(), buffer.end());
}

// What the JIT session reported while compiling (it reports errors there, not in the
// failed lookup's error).
class SessionErrors {
 public:
  void add(llvm::Error error) {
    std::lock_guard<std::mutex> lock(mutex_);
    text_ += (text_.empty() ? "" : "; ") + error_text(std::move(error));
  }
  std::string text() {
    std::lock_guard<std::mutex> lock(mutex_);
    return text_;
  }

 private:
  std::mutex mutex_;
  std::string text_;
};

// The functions of one JIT session. Each PackedFunc shares the session.
class LLVMJITModule final : public Module {
 public:
  LLVMJITModule(std::shared_ptr<llvm::orc::LLJIT> jit, std::map<std::string, TemperPackedCFunc> functions)
      : jit_(std::move(jit)), functions_(std::move(functions)) {}

  PackedFunc get_function(const std::string& name) override {
    auto it = functions_.find(name);
    if (it == functions_.end()) throw UserError(str("the LLVM module has no function '", name, "'"));
    return PackedFunc(name, it->second, jit_);
  }

 private:
  std::shared_ptr<llvm::orc::LLJIT> jit_;
  std::map<std::string, TemperPackedCFunc> functions_;
};

std::shared_ptr<llvm::orc::LLJIT> create_jit(const Target& target, const llvm::DataLayout& layout,
                                             const std::shared_ptr<SessionErrors>& errors) {
  LLVMCPU cpu = resolve_cpu(target);
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) throw UserError("LLVM JIT: " + error_text(builder.takeError()));
  builder->setCPU(cpu.name);
  builder->getFeatures() = llvm::SubtargetFeatures(cpu.features);
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*builder)).create();
  if (!jit) throw UserError("LLVM JIT: " + error_text(jit.takeError()));
  TEMPER_CHECK((*jit)->getDataLayout() == layout, "the JIT's data layout differs from the compiler's");
  (*jit)->getExecutionSession().setErrorReporter([errors](llvm::Error error) { errors->add(std::move(error)); });

  // The runtime and micro-kernels by address; anything else (libm, libgcc's float16
  // conversions, symbols tests define) from this process.
  llvm::orc::JITDylib& main = (*jit)->getMainJITDylib();
  llvm::orc::SymbolMap symbols;
  for (const auto& [name, address] : runtime_symbols()) {
    symbols[(*jit)->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                              llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  }
  if (auto error = main.define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
    throw UserError("LLVM JIT: " + error_text(std::move(error)));
  }
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(layout.getGlobalPrefix());
  if (!process) throw UserError("LLVM JIT: " + error_text(process.takeError()));
  main.addGenerator(std::move(*process));
  return std::shared_ptr<llvm::orc::LLJIT>(std::move(*jit));
}

}  // namespace

std::unique_ptr<Module> build_llvm(const std::vector<PrimFunc>& lowered, const Target& target,
                                   LLVMCompileTimes* times) {
  std::shared_ptr<llvm::orc::LLJIT> jit;
  std::map<std::string, TemperPackedCFunc> functions;
  recovering_llvm_crashes(lowered, [&] {
    OptimizedModule m = compile_to_llvm(lowered, target, true, times);
    Clock::time_point start = Clock::now();
    auto errors = std::make_shared<SessionErrors>();
    jit = create_jit(target, m.module->getDataLayout(), errors);
    llvm::orc::ThreadSafeModule module(std::move(m.module), std::move(m.context));
    if (auto error = jit->addIRModule(std::move(module))) throw UserError("LLVM JIT: " + error_text(std::move(error)));
    // Looking every function up compiles them now, so that errors (an unknown extern
    // symbol) surface here and the time is measured.
    for (const PrimFunc& f : lowered) {
      auto address = jit->lookup(function_symbol(f.name));
      if (!address) {
        std::string error = error_text(address.takeError());
        throw UserError(str("LLVM JIT, compiling ", f.name, ": ", errors->text(), " (", error, ")"));
      }
      functions[f.name] = address->toPtr<TemperPackedCFunc>();
    }
    if (times) times->jit_ms = ms_since(start);
  });
  return std::make_unique<LLVMJITModule>(std::move(jit), std::move(functions));
}

void export_llvm(const std::vector<PrimFunc>& lowered, const Target& target, const std::string& path) {
  std::filesystem::path out(path);
  std::string extension = out.extension().string();
  if (extension != ".o" && extension != ".so") {
    throw UserError(str("export_llvm writes an object file (.o) or a shared library (.so), not '", path, "'"));
  }
  std::string object;
  recovering_llvm_crashes(lowered, [&] {
    OptimizedModule m = compile_to_llvm(lowered, target, true, nullptr);
    object = machine_code(m, llvm::CodeGenFileType::ObjectFile);
  });
  std::filesystem::path object_path = extension == ".o" ? out : std::filesystem::path(path + ".tmp.o");
  {
    std::ofstream file(object_path, std::ios::binary);
    file.write(object.data(), static_cast<std::streamsize>(object.size()));
    if (!file) throw UserError(str("cannot write ", object_path.string()));
  }
  if (extension == ".o") return;
  // libm for float64 math; the runtime's symbols resolve in the program that loads the library.
  std::string arguments = str("-shared -o ", shell_quote(path), " ", shell_quote(object_path.string()), " -lm");
  try {
    run_system_compiler(arguments, "linking " + path);
  } catch (const UserError&) {
    std::filesystem::remove(object_path);
    throw;
  }
  std::filesystem::remove(object_path);
}

std::string emit_llvm_ir(const std::vector<PrimFunc>& lowered, const Target& target, bool optimize) {
  OptimizedModule m = compile_to_llvm(lowered, target, optimize, nullptr);
  std::string text;
  llvm::raw_string_ostream os(text);
  m.module->print(os, nullptr);
  return os.str();
}

std::string emit_asm(const std::vector<PrimFunc>& lowered, const Target& target) {
  OptimizedModule m = compile_to_llvm(lowered, target, true, nullptr);
  return machine_code(m, llvm::CodeGenFileType::AssemblyFile);
}

}  // namespace temper
