#include "compiler/lower/const_fold.h"

#include <cmath>
#include <limits>
#include <optional>

namespace temper {
namespace {

using i128 = __int128;

// v as a value of integer type t when it is exactly representable (no wrapping).
std::optional<int64_t> exact(i128 v, DataType t) {
  i128 lo, hi;
  if (t.is_bool()) {
    lo = 0, hi = 1;
  } else if (t.is_uint()) {
    lo = 0;
    hi = t.bits() >= 64 ? i128{std::numeric_limits<int64_t>::max()} : (i128{1} << t.bits()) - 1;
  } else {
    lo = -(i128{1} << (t.bits() - 1));
    hi = (i128{1} << (t.bits() - 1)) - 1;
  }
  if (v < lo || v > hi) return std::nullopt;
  return static_cast<int64_t>(v);
}

// v converted to integer type t modulo 2^bits (two's complement for signed types).
std::optional<int64_t> wrapped(i128 v, DataType t) {
  if (t.is_bool()) return v != 0 ? 1 : 0;
  if (t.bits() >= 64) return exact(v, t);
  i128 m = i128{1} << t.bits();
  i128 r = v % m;
  if (r < 0) r += m;
  if (t.is_int() && r >= m / 2) r -= m;
  return static_cast<int64_t>(r);
}

// Signed index types of 32+ bits must not overflow; everything narrower (and unsigned) wraps.
std::optional<int64_t> arith_result(i128 v, DataType t) {
  if (t.is_int() && t.bits() >= 32) return exact(v, t);
  return wrapped(v, t);
}

i128 floordiv128(i128 a, i128 b) {
  i128 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

Expr make_int(DataType t, std::optional<int64_t> v) {
  return v ? make_const(t, *v) : Expr();
}

// A comparison of two integers or two floats; undefined for other kinds.
template <typename T>
Expr fold_compare(NodeKind kind, T a, T b) {
  switch (kind) {
    case NodeKind::EQ:
      return make_bool(a == b);
    case NodeKind::NE:
      return make_bool(a != b);
    case NodeKind::LT:
      return make_bool(a < b);
    case NodeKind::LE:
      return make_bool(a <= b);
    case NodeKind::GT:
      return make_bool(a > b);
    case NodeKind::GE:
      return make_bool(a >= b);
    default:
      return Expr();
  }
}

Expr fold_int(NodeKind kind, DataType t, i128 a, i128 b) {
  switch (kind) {
    case NodeKind::Add:
      return make_int(t, arith_result(a + b, t));
    case NodeKind::Sub:
      return make_int(t, arith_result(a - b, t));
    case NodeKind::Mul:
      return make_int(t, arith_result(a * b, t));
    case NodeKind::Div:
      return b == 0 ? Expr() : make_int(t, arith_result(a / b, t));
    case NodeKind::Mod:
      return b == 0 ? Expr() : make_int(t, arith_result(a % b, t));
    case NodeKind::FloorDiv:
      return b == 0 ? Expr() : make_int(t, arith_result(floordiv128(a, b), t));
    case NodeKind::FloorMod:
      return b == 0 ? Expr() : make_int(t, arith_result(a - floordiv128(a, b) * b, t));
    case NodeKind::Min:
      return make_int(t, static_cast<int64_t>(a < b ? a : b));
    case NodeKind::Max:
      return make_int(t, static_cast<int64_t>(a > b ? a : b));
    case NodeKind::And:
      return make_bool(a != 0 && b != 0);
    case NodeKind::Or:
      return make_bool(a != 0 || b != 0);
    default:
      return fold_compare(kind, a, b);
  }
}

// The value a float of type t holds after rounding, or nullopt for types without an
// exact host type.
std::optional<double> round_to(DataType t, double v) {
  if (t.bits() == 32) return static_cast<double>(static_cast<float>(v));
  if (t.bits() == 64) return v;
  return std::nullopt;
}

Expr make_float(DataType t, double v) {
  std::optional<double> r = round_to(t, v);
  return r ? make_const(t, *r) : Expr();
}

Expr fold_float(NodeKind kind, DataType t, double a, double b) {
  if (!round_to(t, 0.0)) return Expr();
  switch (kind) {
    case NodeKind::Add:
      return make_float(t, a + b);
    case NodeKind::Sub:
      return make_float(t, a - b);
    case NodeKind::Mul:
      return make_float(t, a * b);
    case NodeKind::Div:
      return b == 0.0 ? Expr() : make_float(t, a / b);
    case NodeKind::Min:
      return std::isnan(a) || std::isnan(b) ? Expr() : make_float(t, a < b ? a : b);
    case NodeKind::Max:
      return std::isnan(a) || std::isnan(b) ? Expr() : make_float(t, a > b ? a : b);
    default:
      return fold_compare(kind, a, b);
  }
}

// IntImm values of unsigned 64-bit type above INT64_MAX would read as negative; such
// values are left alone.
bool readable_int(const IntImmNode* i) {
  return !(i->dtype.is_uint() && i->value < 0);
}

}  // namespace

Expr fold_binary(NodeKind kind, const Expr& a, const Expr& b) {
  if (!a.defined() || !b.defined() || a.dtype() != b.dtype() || !a.dtype().is_scalar()) return Expr();
  if (auto* x = a.as<IntImmNode>()) {
    auto* y = b.as<IntImmNode>();
    if (!y || !readable_int(x) || !readable_int(y)) return Expr();
    return fold_int(kind, a.dtype(), x->value, y->value);
  }
  if (auto* x = a.as<FloatImmNode>()) {
    auto* y = b.as<FloatImmNode>();
    return y ? fold_float(kind, a.dtype(), x->value, y->value) : Expr();
  }
  return Expr();
}

Expr fold_not(const Expr& a) {
  if (auto* x = a.as<IntImmNode>()) return make_bool(x->value == 0);
  return Expr();
}

Expr fold_cast(DataType t, const Expr& v) {
  if (!t.is_scalar()) return Expr();
  if (auto* x = v.as<IntImmNode>()) {
    if (!readable_int(x)) return Expr();
    if (t.is_float()) return make_float(t, static_cast<double>(x->value));
    if (t.is_integer() || t.is_bool()) return make_int(t, wrapped(x->value, t));
    return Expr();
  }
  if (auto* x = v.as<FloatImmNode>()) {
    if (t.is_float()) return make_float(t, x->value);
    if (t.is_bool()) return make_bool(x->value != 0.0);
    if (!t.is_integer() || std::isnan(x->value)) return Expr();
    double truncated = std::trunc(x->value);
    // Beyond +-2^100 the conversion is out of every integer type's range anyway.
    if (std::fabs(truncated) > 0x1p100) return Expr();
    return make_int(t, exact(static_cast<i128>(truncated), t));
  }
  return Expr();
}

}  // namespace temper
