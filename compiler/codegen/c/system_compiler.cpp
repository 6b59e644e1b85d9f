#include "compiler/codegen/c/system_compiler.h"

#include <sys/wait.h>

#include <cstdio>

#include "compiler/ir/error.h"

namespace temper {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void run_system_compiler(const std::string& arguments, const std::string& what) {
  std::string command = "cc " + arguments;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw UserError(str(what, ": cannot run ", command));
  std::string output;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  int status = pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw UserError(str(what, " failed (", command, "):\n", output));
  }
}

}  // namespace temper
