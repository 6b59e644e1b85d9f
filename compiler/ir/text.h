// Small text helpers for messages and listings.
#pragma once

#include <cstdint>
#include <string>

namespace temper {

// "1 record", "3 records".
inline std::string plural(int64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// The items (anything a std::string can be made of) with separator between them.
template <typename Container>
std::string join(const Container& items, const std::string& separator) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += separator;
    out += std::string(item);
    first = false;
  }
  return out;
}

}  // namespace temper
