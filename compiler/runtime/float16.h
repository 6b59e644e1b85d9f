// IEEE 754 half precision <-> single precision, in portable bit arithmetic, for host code
// that fills or reads float16 arrays. Rounds to nearest even; keeps infinities and NaNs.
#pragma once

#include <cstdint>

namespace temper {

uint16_t float_to_half(float value);
float half_to_float(uint16_t bits);

}  // namespace temper
