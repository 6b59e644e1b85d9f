// A Module over a shared library that Temper exported (export_llvm to .so, build_c).
// The library's calls into the C runtime (temper_parallel_for, temper_alloc, ...) and into
// micro-kernels resolve against this program, which exports them (CMAKE_ENABLE_EXPORTS).
#pragma once

#include <memory>
#include <string>

#include "compiler/runtime/module.h"

namespace temper {

// Loads the library at path; throws UserError (with the loader's message) if it cannot.
std::unique_ptr<Module> load_shared_library(const std::string& path);

}  // namespace temper
