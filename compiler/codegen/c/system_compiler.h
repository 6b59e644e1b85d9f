// Running the system C compiler (`cc`): the C backend compiles with it, the LLVM backend
// links shared libraries with it.
#pragma once

#include <string>

namespace temper {

// s quoted for the shell.
std::string shell_quote(const std::string& s);

// Runs `cc <arguments>`; throws UserError with `what`, the command and the compiler's
// output when it fails.
void run_system_compiler(const std::string& arguments, const std::string& what);

}  // namespace temper
