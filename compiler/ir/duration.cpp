#include "compiler/ir/duration.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "compiler/ir/error.h"

namespace temper {

double parse_duration(const std::string& text, const std::string& flag) {
  auto bad = [&] {
    return UserError(str(flag, " '", text, "' is not a duration: use seconds (45), or numbers with units d, h, m, s ",
                         "(90s, 30m, 8h, 1h30m)"));
  };
  if (text.empty()) throw bad();
  double total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    if (i == start) throw bad();
    double value;
    try {
      value = std::stod(text.substr(start, i - start));
    } catch (const std::exception&) {
      throw bad();
    }
    if (i == text.size()) {
      if (start != 0) throw bad();  // a bare number only on its own: "1h30" is ambiguous
      total += value;
      break;
    }
    switch (text[i++]) {
      case 'd': total += value * 86400; break;
      case 'h': total += value * 3600; break;
      case 'm': total += value * 60; break;
      case 's': total += value; break;
      default: throw bad();
    }
  }
  if (!(total > 0) || !std::isfinite(total)) throw bad();
  return total;
}

std::string format_duration(double seconds) {
  long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, s % 3600 / 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1fs", std::max(0.0, seconds));
  }
  return buf;
}

std::string format_ms(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", seconds * 1e3);
  return buf;
}

}  // namespace temper
