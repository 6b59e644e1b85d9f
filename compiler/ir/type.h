// Scalar and vector element types of the IR.
#pragma once

#include <cstdint>
#include <string>

namespace temper {

// A type is a code (int, uint, float, handle), a width in bits and a lane count.
// bool is uint1. A vector of n lanes has lanes == n; scalars have lanes == 1.
class DataType {
 public:
  enum class Code : uint8_t { Int, UInt, Float, Handle };

  constexpr DataType() = default;
  constexpr DataType(Code code, int bits, int lanes = 1) : code_(code), bits_(bits), lanes_(lanes) {}

  static constexpr DataType int8() { return {Code::Int, 8}; }
  static constexpr DataType int16() { return {Code::Int, 16}; }
  static constexpr DataType int32() { return {Code::Int, 32}; }
  static constexpr DataType int64() { return {Code::Int, 64}; }
  static constexpr DataType uint8() { return {Code::UInt, 8}; }
  static constexpr DataType boolean() { return {Code::UInt, 1}; }
  static constexpr DataType float16() { return {Code::Float, 16}; }
  static constexpr DataType float32() { return {Code::Float, 32}; }
  static constexpr DataType float64() { return {Code::Float, 64}; }
  static constexpr DataType handle() { return {Code::Handle, 64}; }

  Code code() const { return code_; }
  int bits() const { return bits_; }
  int lanes() const { return lanes_; }
  int bytes() const { return (bits_ + 7) / 8; }

  bool is_int() const { return code_ == Code::Int; }
  bool is_uint() const { return code_ == Code::UInt && bits_ != 1; }
  bool is_bool() const { return code_ == Code::UInt && bits_ == 1; }
  bool is_float() const { return code_ == Code::Float; }
  bool is_handle() const { return code_ == Code::Handle; }
  // int or uint (not bool): usable for index arithmetic.
  bool is_integer() const { return is_int() || is_uint(); }
  bool is_scalar() const { return lanes_ == 1; }
  bool is_vector() const { return lanes_ > 1; }

  DataType with_lanes(int lanes) const { return {code_, bits_, lanes}; }
  DataType element_of() const { return with_lanes(1); }

  bool operator==(const DataType& o) const = default;

  // "float32", "int8x16", "bool".
  std::string to_string() const;
  // Parses the names to_string() produces; throws UserError on anything else.
  static DataType parse(const std::string& name);

 private:
  Code code_ = Code::Int;
  int bits_ = 32;
  int lanes_ = 1;
};

std::ostream& operator<<(std::ostream& os, const DataType& t);

}  // namespace temper
