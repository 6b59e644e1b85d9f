#include "compiler/ir/type.h"

#include <ostream>

#include "compiler/ir/error.h"

namespace temper {

std::string DataType::to_string() const {
  std::string base;
  if (is_bool()) {
    base = "bool";
  } else {
    switch (code_) {
      case Code::Int: base = "int"; break;
      case Code::UInt: base = "uint"; break;
      case Code::Float: base = "float"; break;
      case Code::Handle: return "handle";
    }
    base += std::to_string(bits_);
  }
  if (lanes_ != 1) base += "x" + std::to_string(lanes_);
  return base;
}

DataType DataType::parse(const std::string& name) {
  std::string base = name;
  int lanes = 1;
  if (auto x = name.find('x'); x != std::string::npos) {
    base = name.substr(0, x);
    try {
      lanes = std::stoi(name.substr(x + 1));
    } catch (const std::exception&) {
      lanes = 0;
    }
  }
  static const std::pair<const char*, DataType> kNames[] = {
      {"bool", DataType::boolean()},   {"int8", DataType::int8()},       {"int16", DataType::int16()},
      {"int32", DataType::int32()},    {"int64", DataType::int64()},     {"uint8", DataType::uint8()},
      {"float16", DataType::float16()}, {"float32", DataType::float32()}, {"float64", DataType::float64()},
      {"handle", DataType::handle()}};
  for (const auto& [n, t] : kNames) {
    if (base == n && lanes >= 1) return t.with_lanes(lanes);
  }
  throw UserError(str("unknown dtype '", name,
                      "': use one of float32, float16, float64, int8, int16, int32, int64, uint8, bool"));
}

std::ostream& operator<<(std::ostream& os, const DataType& t) { return os << t.to_string(); }

}  // namespace temper
