// The text of compiler/runtime/c_runtime_api.h, built into Temper (see
// cmake/c_runtime_api_text.cpp.in): generated C includes it, and the C backend writes it
// beside the generated code rather than pointing the compiler at a source tree.
#pragma once

namespace temper {

const char* c_runtime_api_text();

}  // namespace temper
