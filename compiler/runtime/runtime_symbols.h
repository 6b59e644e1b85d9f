// Every C function generated code may call, by symbol name: the C runtime API and the
// micro-kernels. The LLVM JIT defines these names in its session; a loaded shared
// library finds them among this program's exported symbols.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace temper {

std::vector<std::pair<std::string, void*>> runtime_symbols();

}  // namespace temper
