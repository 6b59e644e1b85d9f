#include "compiler/ir/math_functions.h"

#include <utility>

#include "compiler/ir/text.h"

namespace temper {

namespace {

// name, arity, whether libm declares it
struct MathFunction {
  const char* name;
  int arity;
  bool libm;
};

constexpr MathFunction kMathFunctions[] = {
    {"exp", 1, true},  {"log", 1, true},      {"sqrt", 1, true}, {"rsqrt", 1, false}, {"tanh", 1, true},
    {"erf", 1, true},  {"sigmoid", 1, false}, {"fabs", 1, true}, {"floor", 1, true},  {"ceil", 1, true},
    {"sin", 1, true},  {"cos", 1, true},      {"tan", 1, true},  {"asin", 1, true},   {"acos", 1, true},
    {"atan", 1, true}, {"pow", 2, true},      {"fma", 3, true},
};

}  // namespace

int math_function_arity(const std::string& name) {
  for (const MathFunction& f : kMathFunctions) {
    if (name == f.name) return f.arity;
  }
  return -1;
}

std::string math_function_names() {
  std::vector<std::string> names;
  for (const MathFunction& f : kMathFunctions) names.push_back(f.name);
  return join(names, ", ");
}

const std::vector<std::string>& libm_functions() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const MathFunction& f : kMathFunctions) {
      if (f.libm) out.push_back(f.name);
    }
    return out;
  }();
  return names;
}

}  // namespace temper
