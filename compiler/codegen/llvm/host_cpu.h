// The host CPU as LLVM names it, for "-mcpu=native" and for fingerprinting a machine.
// Declared without LLVM types so that code outside codegen/llvm can ask.
#pragma once

#include <string>

namespace temper {

// "skylake-avx512", "znver3", ...
std::string host_cpu_name();
// The host's CPU features, comma separated and sorted: "+avx,+avx2,-avx512f,+fma,...".
std::string host_cpu_features();
// Whether host_cpu_features() enables feature ("fma", "avx512f").
bool host_has_feature(const std::string& feature);

}  // namespace temper
