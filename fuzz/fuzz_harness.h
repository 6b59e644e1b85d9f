// What every fuzz harness in this folder shares. A harness defines LLVMFuzzerTestOneInput
// (libFuzzer's entry point) over one parser of untrusted input; the parser may refuse its
// input with a UserError (the message a user would see), and anything else that escapes
// -- another exception, a crash, a sanitizer report, a hang -- is a bug the fuzzer reports.
//
// The same harness sources build two ways: with libFuzzer (TEMPER_BUILD_FUZZERS, clang,
// scripts/fuzz.sh) to search for such inputs, and with replay_main.cpp into a plain
// program that the test suite runs over the seed corpus and every input a fuzzer ever
// found (fuzz/corpus/NAME, fuzz/regressions/NAME), so a bug once found stays fixed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/ir/error.h"

namespace temper::fuzz {

inline std::string as_string(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs f; a UserError is the parser refusing its input, which is fine.
template <typename F>
void refusal_is_fine(F f) {
  try {
    f();
  } catch (const UserError&) {
  }
}

}  // namespace temper::fuzz
