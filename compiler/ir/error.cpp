#include "compiler/ir/error.h"

#include <iostream>

namespace temper {

void internal_error(const char* file, int line, const char* cond, const std::string& msg) {
  throw InternalError(str("internal error at ", file, ":", line, ": check '", cond, "' failed",
                          msg.empty() ? "" : ": ", msg));
}

void warn(const std::string& msg) { std::cerr << "warning: " << msg << "\n"; }

}  // namespace temper
