#include "compiler/runtime/float16.h"

#include <cstring>

namespace temper {

uint16_t float_to_half(float value) {
  uint32_t f;
  std::memcpy(&f, &value, sizeof f);
  uint32_t sign = (f >> 16) & 0x8000u;
  uint32_t exponent = (f >> 23) & 0xffu;
  uint32_t mantissa = f & 0x7fffffu;
  if (exponent == 0xffu) {  // inf or NaN (keep NaNs quiet and non-zero)
    return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u | (mantissa >> 13) : 0u));
  }
  int32_t half_exponent = static_cast<int32_t>(exponent) - 127 + 15;
  if (half_exponent >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
  if (half_exponent <= 0) {
    // Subnormal half (or zero): shift the mantissa, with its implicit bit, into place.
    if (half_exponent < -10) return static_cast<uint16_t>(sign);
    uint32_t m = mantissa | 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - half_exponent);
    uint32_t half_mantissa = m >> shift;
    uint32_t remainder = m & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (half_mantissa & 1u))) ++half_mantissa;
    return static_cast<uint16_t>(sign | half_mantissa);
  }
  uint32_t half = sign | (static_cast<uint32_t>(half_exponent) << 10) | (mantissa >> 13);
  uint32_t remainder = mantissa & 0x1fffu;
  // A carry out of the mantissa correctly bumps the exponent (up to inf).
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(half);
}

float half_to_float(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t f;
  if (exponent == 0x1f) {
    f = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    f = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    f = sign;
  } else {
    // Subnormal half: normalise into a float.
    int32_t e = -1;
    do {
      ++e;
      mantissa <<= 1;
    } while ((mantissa & 0x400u) == 0);
    f = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float value;
  std::memcpy(&value, &f, sizeof value);
  return value;
}

}  // namespace temper
