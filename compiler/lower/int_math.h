// Integer arithmetic shared by the analyzer and the simplifier: floor division and
// modulo on int64, and interval-end arithmetic where Interval::kNegInf / kPosInf are
// infinities and a result that does not fit becomes the infinity on its side.
#pragma once

#include <cstdint>

#include "compiler/lower/analyzer.h"

namespace temper {

// b != 0, and not (a == INT64_MIN && b == -1).
inline int64_t floordiv_i64(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int64_t floormod_i64(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

inline bool is_inf(int64_t x) {
  return x == Interval::kNegInf || x == Interval::kPosInf;
}

// A lower end: -inf absorbs, overflow gives -inf.
inline int64_t lower_add(int64_t a, int64_t b) {
  int64_t r;
  if (a == Interval::kNegInf || b == Interval::kNegInf || __builtin_add_overflow(a, b, &r) || is_inf(r)) {
    return Interval::kNegInf;
  }
  return r;
}
// An upper end: +inf absorbs, overflow gives +inf.
inline int64_t upper_add(int64_t a, int64_t b) {
  int64_t r;
  if (a == Interval::kPosInf || b == Interval::kPosInf || __builtin_add_overflow(a, b, &r) || is_inf(r)) {
    return Interval::kPosInf;
  }
  return r;
}
inline int64_t negate_end(int64_t a) {
  if (a == Interval::kNegInf) return Interval::kPosInf;
  if (a == Interval::kPosInf) return Interval::kNegInf;
  return -a;
}
// A product of two ends; an infinite or overflowing product takes the infinity of its sign.
inline int64_t mul_end(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool negative = (a < 0) != (b < 0);
  int64_t r;
  if (is_inf(a) || is_inf(b) || __builtin_mul_overflow(a, b, &r) || is_inf(r)) {
    return negative ? Interval::kNegInf : Interval::kPosInf;
  }
  return r;
}
// floor(a / b) of two ends, b != 0; an infinite a stays infinite, a finite a over an
// infinite b is 0 or -1.
inline int64_t floordiv_end(int64_t a, int64_t b) {
  bool negative = (a < 0) != (b < 0);
  if (is_inf(a)) return negative ? Interval::kNegInf : Interval::kPosInf;
  if (is_inf(b)) return (a == 0 || !negative) ? 0 : -1;
  return floordiv_i64(a, b);
}

}  // namespace temper
