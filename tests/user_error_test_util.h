// How tests check a UserError: the message fn throws, or that it names given words.
// Header-only: each test file is an executable of its own.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "compiler/ir/error.h"

namespace temper::testing_util {

// The message of the UserError fn throws; a test failure (and "") when it throws none.
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no UserError was thrown";
  return "";
}

// Runs fn, which must throw a UserError whose message contains every one of words.
template <typename Fn>
void expect_user_error(Fn&& fn, std::initializer_list<std::string> words) {
  std::string message = error_of(fn);
  for (const std::string& w : words) {
    EXPECT_NE(message.find(w), std::string::npos) << "missing '" << w << "' in: " << message;
  }
}

}  // namespace temper::testing_util
