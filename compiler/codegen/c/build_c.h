// The C backend's build: emit_c's source compiled by the system C compiler into a shared
// library, loaded as a Module.
#pragma once

#include <memory>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/runtime/module.h"
#include "compiler/target/target.h"

namespace temper {

// Compiles with `cc -O3 -march=<target's mcpu, native by default> -shared -fPIC` in a
// temporary directory and loads the library. target must be a "c" target; a compiler
// error throws UserError carrying the compiler's output.
std::unique_ptr<Module> build_c(const std::vector<PrimFunc>& lowered, const Target& target);

}  // namespace temper
