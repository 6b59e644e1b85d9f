// Temper's three error channels (after Halide's src/Error.h):
//  - UserError: the input was wrong (a bad shape, an illegal schedule step, a
//    malformed workload string). The message says what was wrong and what to do.
//    UnsupportedError, a UserError, is the valid input Temper does not implement (an ONNX
//    op, attribute value or element type): the conformance suite counts it apart from
//    a wrong result.
//  - InternalError: Temper itself is wrong. Thrown by TEMPER_CHECK with file:line.
//  - warnings: printed, never thrown (see warn()).
// ScheduleError (compiler/schedule/) derives from UserError so a search can catch
// exactly the illegal-step case.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace temper {

class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class UnsupportedError : public UserError {
 public:
  using UserError::UserError;
};

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Concatenates its arguments with operator<< into one string.
template <typename... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

[[noreturn]] void internal_error(const char* file, int line, const char* cond, const std::string& msg);

// "warning: msg" on stderr, each distinct message once per process.
void warn(const std::string& msg);

}  // namespace temper

// An invariant of Temper's own code; a failure is a Temper bug, reported with file:line.
#define TEMPER_CHECK(cond, ...)                                                        \
  do {                                                                                 \
    if (!(cond)) ::temper::internal_error(__FILE__, __LINE__, #cond, ::temper::str(__VA_ARGS__)); \
  } while (0)
