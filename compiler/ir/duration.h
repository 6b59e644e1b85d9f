// Durations as users write them (command-line flags, suite files): "90s", "30m", "8h",
// "1h30m", "2d", or plain seconds ("45").
#pragma once

#include <string>

namespace temper {

// Seconds; UserError naming the flag (or key) and the accepted forms for anything else.
double parse_duration(const std::string& text, const std::string& flag);
// "1h02m", "3m05s", "4.2s".
std::string format_duration(double seconds);
// "3.812 ms": a kernel's or a model's latency.
std::string format_ms(double seconds);

}  // namespace temper
