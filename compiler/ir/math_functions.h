// The math functions a Pure call may name (call_pure(t, "exp", {x})): one list for te,
// the lowered-code checks and every backend. All take and return one floating-point type.
#pragma once

#include <string>
#include <vector>

namespace temper {

// The number of arguments of the math function `name` (exp, log, sqrt, rsqrt, tanh, erf,
// sigmoid, fabs, floor, ceil, sin, cos, tan, asin, acos, atan: 1; pow: 2; fma: 3), or -1
// if it is not one.
int math_function_arity(const std::string& name);

// The names of the math functions, comma-separated, for messages.
std::string math_function_names();

// The math functions C's libm (and CUDA's and OpenCL's math libraries) declare under the
// same name, with an "f" suffix for float in C and CUDA: names generated code must not
// use for anything else. rsqrt and sigmoid are not among them.
const std::vector<std::string>& libm_functions();

}  // namespace temper
