#include "compiler/lower/linear_sum.h"

#include <limits>

#include "compiler/ir/structural_equal.h"
#include "compiler/lower/int_math.h"

namespace temper {

bool is_index_type(DataType t) {
  return t.is_int() && t.bits() >= 32 && t.is_scalar();
}

bool fits_in_type(int64_t v, DataType t) {
  if (t.bits() >= 64) return true;
  int64_t limit = int64_t{1} << (t.bits() - 1);
  return v >= -limit && v < limit;
}

bool LinearSum::add(const Expr& atom, int64_t coeff) {
  for (size_t i = 0; i < terms.size(); ++i) {
    if (!structural_equal(terms[i].atom, atom, /*map_vars=*/false)) continue;
    int64_t c;
    if (__builtin_add_overflow(terms[i].coeff, coeff, &c)) return false;
    if (c == 0) {
      terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      terms[i].coeff = c;
    }
    return true;
  }
  if (coeff != 0) terms.push_back({atom, coeff});
  return true;
}

bool LinearSum::add(const LinearSum& other, int64_t scale) {
  for (const Term& t : other.terms) {
    int64_t c;
    if (__builtin_mul_overflow(t.coeff, scale, &c) || !add(t.atom, c)) return false;
  }
  int64_t c;
  return !__builtin_mul_overflow(other.constant, scale, &c) && add_constant(c);
}

bool LinearSum::add_constant(int64_t c) {
  return !__builtin_add_overflow(constant, c, &constant);
}

namespace {

bool collect(const Expr& e, int64_t scale, LinearSum& out) {
  if (const int64_t* c = as_const_int(e)) {
    int64_t v;
    return !__builtin_mul_overflow(*c, scale, &v) && out.add_constant(v);
  }
  if (auto* op = e.as<AddNode>()) return collect(op->a, scale, out) && collect(op->b, scale, out);
  if (auto* op = e.as<SubNode>()) {
    // -scale overflows only for INT64_MIN.
    return collect(op->a, scale, out) && scale != std::numeric_limits<int64_t>::min() && collect(op->b, -scale, out);
  }
  if (auto* op = e.as<MulNode>()) {
    const int64_t* ca = as_const_int(op->a);
    const int64_t* cb = as_const_int(op->b);
    int64_t s;
    if (cb && !__builtin_mul_overflow(scale, *cb, &s)) return collect(op->a, s, out);
    if (ca && !__builtin_mul_overflow(scale, *ca, &s)) return collect(op->b, s, out);
    if (ca || cb) return false;
  }
  return out.add(e, scale);
}

Expr term_expr(const LinearSum::Term& t, int64_t magnitude, DataType dtype) {
  if (magnitude == 1) return t.atom;
  return t.atom * make_const(dtype, magnitude);
}

}  // namespace

std::optional<LinearSum> to_linear_sum(const Expr& e) {
  if (!is_index_type(e.dtype())) return std::nullopt;
  LinearSum s;
  s.dtype = e.dtype();
  if (!collect(e, 1, s)) return std::nullopt;
  return s;
}

std::optional<LinearSum> linear_difference(const Expr& a, const Expr& b) {
  if (!is_index_type(a.dtype()) || a.dtype() != b.dtype()) return std::nullopt;
  LinearSum s;
  s.dtype = a.dtype();
  if (!collect(a, 1, s) || !collect(b, -1, s)) return std::nullopt;
  return s;
}

Expr from_linear_sum(const LinearSum& s) {
  if (!fits_in_type(s.constant, s.dtype)) return Expr();
  for (const LinearSum::Term& t : s.terms) {
    if (!fits_in_type(t.coeff, s.dtype) || t.coeff == Interval::kNegInf) return Expr();
  }
  Expr result;
  for (const LinearSum::Term& t : s.terms) {
    if (t.coeff <= 0) continue;
    Expr x = term_expr(t, t.coeff, s.dtype);
    result = result.defined() ? result + x : x;
  }
  // With no positive term, a positive constant leads: 8 - x rather than 0 - x + 8.
  bool constant_first = !result.defined() && s.constant > 0;
  if (constant_first) result = make_const(s.dtype, s.constant);
  for (const LinearSum::Term& t : s.terms) {
    if (t.coeff >= 0) continue;
    Expr x = term_expr(t, -t.coeff, s.dtype);
    result = (result.defined() ? result : make_const(s.dtype, int64_t{0})) - x;
  }
  if (!result.defined()) return make_const(s.dtype, s.constant);
  if (!constant_first && s.constant > 0) result = result + make_const(s.dtype, s.constant);
  if (!constant_first && s.constant < 0) result = result - make_const(s.dtype, -s.constant);
  return result;
}

Interval linear_sum_bounds(const LinearSum& s, const Analyzer& analyzer) {
  Interval r = Interval::point(s.constant);
  for (const LinearSum::Term& t : s.terms) {
    Interval b = analyzer.bounds(t.atom);
    int64_t lo = mul_end(b.min, t.coeff);
    int64_t hi = mul_end(b.max, t.coeff);
    if (t.coeff < 0) std::swap(lo, hi);
    r = {lower_add(r.min, lo), upper_add(r.max, hi)};
  }
  return r;
}

std::optional<OffsetBounds> offset_bounds(const Expr& e, const std::function<bool(const Expr&)>& varies,
                                          const Analyzer& analyzer) {
  std::optional<LinearSum> s = to_linear_sum(e);
  if (!s) return std::nullopt;
  LinearSum fixed{s->dtype, {}, 0};
  LinearSum moving{s->dtype, {}, s->constant};
  for (const LinearSum::Term& t : s->terms) (varies(t.atom) ? moving : fixed).terms.push_back(t);
  Expr offset = from_linear_sum(fixed);
  if (!offset.defined()) return std::nullopt;
  return OffsetBounds{offset, linear_sum_bounds(moving, analyzer)};
}

}  // namespace temper
