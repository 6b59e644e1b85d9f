#include "compiler/ir/error.h"

#include <iostream>
#include <mutex>
#include <set>

namespace temper {

void internal_error(const char* file, int line, const char* cond, const std::string& msg) {
  throw InternalError(str("internal error at ", file, ":", line, ": check '", cond, "' failed",
                          msg.empty() ? "" : ": ", msg));
}

void warn(const std::string& msg) {
  // Once per process: a tuning job compiles hundreds of candidates of one op, and would
  // repeat the same line for each (a loop of the same shape that cannot be vectorized).
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mutex);
  if (said.insert(msg).second) std::cerr << "warning: " << msg << "\n";
}

}  // namespace temper
