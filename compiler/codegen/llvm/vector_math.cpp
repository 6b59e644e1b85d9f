#include "compiler/codegen/llvm/vector_math.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include <cmath>
#include <initializer_list>
#include <limits>

namespace temper {
namespace {

// The coefficients: scripts/fit_vector_math.py's output, lowest degree first.
constexpr float kExpP[] = {0.5f, 0.166665778f, 0.0416669436f, 0.00836312585f, 0.00138938345f};
constexpr float kLogP[] = {0.333333313f,  -0.25000003f, 0.200007185f, -0.166673824f, 0.142485961f,
                           -0.124348037f, 0.116994232f, -0.114223868f, 0.0686262399f};
constexpr float kTanhP[] = {-0.333333343f, 0.133333102f, -0.0539602153f, 0.0217748582f, -0.00835972f, 0.00230779522f};
constexpr float kErfP[] = {0.128379166f,   -0.376126349f,  0.112836957f,  -0.0268596802f,
                           0.00520221284f, -0.000815987762f, 8.45350005e-05f};
constexpr float kErfcQ[] = {0.000307281734f, -1.13018417f,     -0.631905317f,   -0.110009976f,  0.0263838507f,
                            -0.00474736374f, 0.000594384328f, -4.57932874e-05f, 1.62489312e-06f};

// ln 2 split so that n * kLn2Hi is exact for the |n| <= 150 exp and log meet.
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;

// Emits one function's code; the float type (scalar or vector) is x's.
class MathEmitter {
 public:
  MathEmitter(llvm::IRBuilder<>& b, llvm::Value* x)
      : b_(b), type_(x->getType()), int_type_(type_->getWithNewType(b.getInt32Ty())) {}

  llvm::Value* f(float v) { return llvm::ConstantFP::get(type_, v); }
  llvm::Value* i(int32_t v) { return llvm::ConstantInt::get(int_type_, v, true); }
  llvm::Value* infinity() { return f(std::numeric_limits<float>::infinity()); }

  llvm::Value* mul_add(llvm::Value* a, llvm::Value* m, llvm::Value* c) {
    // fmuladd: one fma where the target has it, a multiply and an add where it has not.
    return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type_}, {a, m, c});
  }
  template <size_t N>
  llvm::Value* polynomial(const float (&c)[N], llvm::Value* u) {
    llvm::Value* p = f(c[N - 1]);
    for (size_t k = N - 1; k-- > 0;) p = mul_add(p, u, f(c[k]));
    return p;
  }
  llvm::Value* intrinsic(llvm::Intrinsic::ID id, std::initializer_list<llvm::Value*> args) {
    return b_.CreateIntrinsic(id, {type_}, llvm::ArrayRef<llvm::Value*>(args.begin(), args.size()));
  }
  // min/max written as compare+select: a nan x passes through, and x86 maps them to vminps/vmaxps.
  llvm::Value* at_least(llvm::Value* x, float lo) { return b_.CreateSelect(b_.CreateFCmpOLT(x, f(lo)), f(lo), x); }
  llvm::Value* at_most(llvm::Value* x, float hi) { return b_.CreateSelect(b_.CreateFCmpOGT(x, f(hi)), f(hi), x); }
  // 2^n for integer n in [-126, 127], built in the exponent field.
  llvm::Value* power_of_two(llvm::Value* n) {
    return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(n, i(127)), i(23)), type_);
  }

  // exp(x) = 2^n exp(r), n = round(x / ln 2), |r| <= ln2/2: exp(r) as 1 + r + r^2 P(r).
  llvm::Value* exp(llvm::Value* x) {
    // Where every lane has |x| <= 87 (or is nan), n is in [-126, 126] and 2^n one normal
    // float: one multiply scales, rounding only where the result is denormal. A lane beyond
    // (a softmax's masked keys, -1e4 or -inf) sends the whole vector down the full range's
    // path, which clamps and scales in two factors. The branch needs the builder at the end
    // of its block, as the code generator leaves it; anywhere else the full path runs alone.
    llvm::BasicBlock* here = b_.GetInsertBlock();
    if (!here || !here->getParent() || b_.GetInsertPoint() != here->end()) return exp_full_range(x);
    llvm::Value* fast = b_.CreateFMul(exp_mantissa(x), power_of_two(exp_exponent(x)));
    llvm::Value* beyond = b_.CreateFCmpOGT(intrinsic(llvm::Intrinsic::fabs, {x}), f(87.0f));
    if (beyond->getType()->isVectorTy()) beyond = b_.CreateOrReduce(beyond);
    llvm::Function* fn = here->getParent();
    llvm::BasicBlock* full = llvm::BasicBlock::Create(b_.getContext(), "exp.full_range", fn);
    llvm::BasicBlock* join = llvm::BasicBlock::Create(b_.getContext(), "exp.join", fn);
    b_.CreateCondBr(beyond, full, join);
    b_.SetInsertPoint(full);
    llvm::Value* slow = exp_full_range(x);
    llvm::BasicBlock* full_end = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    llvm::PHINode* result = b_.CreatePHI(type_, 2, "exp");
    result->addIncoming(fast, here);
    result->addIncoming(slow, full_end);
    return result;
  }

  // Every x: clamped where exp(x) is already inf (x > 88.73) or 0 (x < -103.98), so that n
  // stays in [-150, 128], and 2^n in two factors, one alone not reaching the denormal
  // results of n < -126.
  llvm::Value* exp_full_range(llvm::Value* x) {
    llvm::Value* xc = at_most(at_least(x, -104.0f), 89.0f);
    llvm::Value* ni = exp_exponent(xc);
    llvm::Value* n1 = b_.CreateAShr(ni, i(1));
    llvm::Value* n2 = b_.CreateSub(ni, n1);
    return b_.CreateFMul(b_.CreateFMul(exp_mantissa(xc), power_of_two(n1)), power_of_two(n2));
  }

  // n = round(x / ln 2) as an integer, by adding 1.5 * 2^23: the sum's low mantissa bits are n.
  static constexpr float kRound = 12582912.0f;
  llvm::Value* exp_round(llvm::Value* x) { return mul_add(x, f(1.44269504f), f(kRound)); }
  llvm::Value* exp_exponent(llvm::Value* x) {
    return b_.CreateSub(b_.CreateBitCast(exp_round(x), int_type_), b_.CreateBitCast(f(kRound), int_type_));
  }
  // exp(r) = exp(x) / 2^n.
  llvm::Value* exp_mantissa(llvm::Value* x) {
    llvm::Value* n = b_.CreateFSub(exp_round(x), f(kRound));
    llvm::Value* r = mul_add(n, f(-kLn2Hi), x);
    r = mul_add(n, f(-kLn2Lo), r);
    llvm::Value* p = mul_add(polynomial(kExpP, r), b_.CreateFMul(r, r), r);
    return b_.CreateFAdd(p, f(1.0f));
  }

  llvm::Value* log(llvm::Value* x) {
    // x = 2^e m, m in [sqrt(1/2), sqrt(2)); log x = e ln2 + log(1 + z), z = m - 1.
    // Denormals are scaled into the normal range first.
    llvm::Value* denormal = b_.CreateFCmpOLT(x, f(std::numeric_limits<float>::min()));
    llvm::Value* xs = b_.CreateSelect(denormal, b_.CreateFMul(x, f(8388608.0f)), x);
    llvm::Value* bits = b_.CreateBitCast(xs, int_type_);
    llvm::Value* e = b_.CreateSub(b_.CreateLShr(bits, i(23)), b_.CreateSelect(denormal, i(127 + 23), i(127)));
    llvm::Value* m = b_.CreateBitCast(b_.CreateOr(b_.CreateAnd(bits, i(0x007fffff)), i(0x3f800000)), type_);
    llvm::Value* above = b_.CreateFCmpOGT(m, f(1.41421356f));
    m = b_.CreateSelect(above, b_.CreateFMul(m, f(0.5f)), m);
    e = b_.CreateAdd(e, b_.CreateZExt(above, int_type_));
    llvm::Value* z = b_.CreateFSub(m, f(1.0f));
    llvm::Value* ef = b_.CreateSIToFP(e, type_);
    llvm::Value* z2 = b_.CreateFMul(z, z);
    llvm::Value* y = b_.CreateFMul(b_.CreateFMul(z2, z), polynomial(kLogP, z));
    y = mul_add(z2, f(-0.5f), y);
    y = mul_add(ef, f(kLn2Lo), y);
    llvm::Value* result = mul_add(ef, f(kLn2Hi), b_.CreateFAdd(z, y));
    // log(+inf) = inf, log(+-0) = -inf, log(x < 0) and log(nan) = nan.
    result = b_.CreateSelect(b_.CreateFCmpOEQ(x, infinity()), infinity(), result);
    result = b_.CreateSelect(b_.CreateFCmpOEQ(x, f(0.0f)), b_.CreateFNeg(infinity()), result);
    return b_.CreateSelect(b_.CreateFCmpULT(x, f(0.0f)), f(std::numeric_limits<float>::quiet_NaN()), result);
  }

  llvm::Value* tanh(llvm::Value* x) {
    // On a = |x| < 0.625: a + a u P(u), u = a^2; above: 1 - 2 / (exp(2a) + 1); then x's sign.
    llvm::Value* a = intrinsic(llvm::Intrinsic::fabs, {x});
    llvm::Value* u = b_.CreateFMul(a, a);
    llvm::Value* small = mul_add(b_.CreateFMul(a, u), polynomial(kTanhP, u), a);
    llvm::Value* e = exp(b_.CreateFMul(a, f(2.0f)));
    llvm::Value* large = b_.CreateFSub(f(1.0f), b_.CreateFDiv(f(2.0f), b_.CreateFAdd(e, f(1.0f))));
    return intrinsic(llvm::Intrinsic::copysign, {b_.CreateSelect(b_.CreateFCmpOLT(a, f(0.625f)), small, large), x});
  }

  llvm::Value* erf(llvm::Value* x) {
    // On a = |x| < 0.921875: a + a P(a^2); above: 1 - exp(Q(a)), a clamped at 3.925, where
    // erf rounds to 1; then x's sign.
    llvm::Value* a = intrinsic(llvm::Intrinsic::fabs, {x});
    llvm::Value* small = mul_add(a, polynomial(kErfP, b_.CreateFMul(a, a)), a);
    llvm::Value* large = b_.CreateFSub(f(1.0f), exp(polynomial(kErfcQ, at_most(a, 3.925f))));
    return intrinsic(llvm::Intrinsic::copysign, {b_.CreateSelect(b_.CreateFCmpOLT(a, f(0.921875f)), small, large), x});
  }

  llvm::Value* pow(llvm::Value* x, llvm::Value* y) {
    // |x|^y = exp(y log|x|) in double: log and exp to about 1e-15 relative, so that the
    // float result is the correctly rounded one but in rare ties (1 ulp stated). Then C's
    // special cases: x^0 = 1 and 1^y = 1 (NaN included), (-1)^+-inf = 1, a negative x to
    // a non-integer power NaN, and the sign of an odd integer power of a negative x (-0 too).
    llvm::Type* dt = type_->getWithNewType(b_.getDoubleTy());
    llvm::Type* it = type_->getWithNewType(b_.getInt64Ty());
    auto d = [&](double v) { return llvm::ConstantFP::get(dt, v); };
    auto l = [&](int64_t v) { return llvm::ConstantInt::get(it, v, true); };
    auto dmul_add = [&](llvm::Value* a, llvm::Value* m, llvm::Value* c) {
      return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {dt}, {a, m, c});
    };
    llvm::Value* ax = b_.CreateFPExt(intrinsic(llvm::Intrinsic::fabs, {x}), dt);
    // log|x| = e ln2 + 2 atanh(s), s = (m - 1) / (m + 1), m in [sqrt(1/2), sqrt(2)): |s| < 0.172,
    // the odd series to s^21. Every float, denormals included, is a normal double.
    llvm::Value* bits = b_.CreateBitCast(ax, it);
    llvm::Value* e = b_.CreateSub(b_.CreateLShr(bits, l(52)), l(1023));
    llvm::Value* m = b_.CreateBitCast(b_.CreateOr(b_.CreateAnd(bits, l(0x000fffffffffffffLL)), l(0x3ff0000000000000LL)), dt);
    llvm::Value* above = b_.CreateFCmpOGT(m, d(1.4142135623730951));
    m = b_.CreateSelect(above, b_.CreateFMul(m, d(0.5)), m);
    e = b_.CreateAdd(e, b_.CreateZExt(above, it));
    llvm::Value* s = b_.CreateFDiv(b_.CreateFSub(m, d(1.0)), b_.CreateFAdd(m, d(1.0)));
    llvm::Value* s2 = b_.CreateFMul(s, s);
    llvm::Value* series = d(1.0 / 21);
    for (int k = 19; k >= 1; k -= 2) series = dmul_add(series, s2, d(1.0 / k));
    constexpr double kLn2 = 0.6931471805599453;
    llvm::Value* log_ax = dmul_add(b_.CreateSIToFP(e, dt), d(kLn2), b_.CreateFMul(d(2.0), b_.CreateFMul(s, series)));
    log_ax = b_.CreateSelect(b_.CreateFCmpOEQ(ax, d(0.0)), d(-INFINITY), log_ax);
    log_ax = b_.CreateSelect(b_.CreateFCmpOEQ(ax, d(INFINITY)), d(INFINITY), log_ax);
    log_ax = b_.CreateSelect(b_.CreateFCmpUNO(ax, ax), ax, log_ax);
    llvm::Value* t = b_.CreateFMul(b_.CreateFPExt(y, dt), log_ax);
    // exp(t) = 2^n exp(r), |r| <= ln2 / 2, Taylor to r^14; t clamped where the float result
    // is already inf or 0 (an infinite or NaN t passes through the selects below).
    llvm::Value* tc = b_.CreateSelect(b_.CreateFCmpOGT(t, d(200.0)), d(200.0), t);
    tc = b_.CreateSelect(b_.CreateFCmpOLT(tc, d(-200.0)), d(-200.0), tc);
    llvm::Value* n = b_.CreateIntrinsic(llvm::Intrinsic::rint, {dt}, {b_.CreateFMul(tc, d(1.4426950408889634))});
    llvm::Value* r = dmul_add(n, d(-0.6931471803691238), tc);  // ln2 in two parts: n * hi is exact
    r = dmul_add(n, d(-1.9082149292705877e-10), r);
    llvm::Value* taylor = d(1.0 / 87178291200.0);  // 1 / 14!
    double inverse_factorial = 1.0 / 87178291200.0;
    for (int k = 13; k >= 0; --k) {
      inverse_factorial *= k + 1;
      taylor = dmul_add(taylor, r, d(inverse_factorial));
    }
    llvm::Value* two_n = b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(b_.CreateFPToSI(n, it), l(1023)), l(52)), dt);
    llvm::Value* result = b_.CreateFMul(taylor, two_n);
    result = b_.CreateSelect(b_.CreateFCmpOEQ(t, d(INFINITY)), d(INFINITY), result);
    result = b_.CreateSelect(b_.CreateFCmpOEQ(t, d(-INFINITY)), d(0.0), result);
    result = b_.CreateSelect(b_.CreateFCmpUNO(t, t), t, result);
    llvm::Value* magnitude = b_.CreateFPTrunc(result, type_);

    llvm::Value* integer = b_.CreateFCmpOEQ(intrinsic(llvm::Intrinsic::trunc, {y}), y);
    llvm::Value* half = b_.CreateFMul(y, f(0.5f));
    llvm::Value* odd = b_.CreateAnd(integer, b_.CreateFCmpONE(intrinsic(llvm::Intrinsic::trunc, {half}), half));
    llvm::Value* negative_x = b_.CreateICmpSLT(b_.CreateBitCast(x, int_type_), i(0));
    llvm::Value* out = b_.CreateSelect(b_.CreateAnd(negative_x, odd), b_.CreateFNeg(magnitude), magnitude);
    llvm::Value* nan = f(std::numeric_limits<float>::quiet_NaN());
    out = b_.CreateSelect(b_.CreateAnd(b_.CreateFCmpOLT(x, f(0.0f)), b_.CreateNot(integer)), nan, out);
    llvm::Value* abs_x = intrinsic(llvm::Intrinsic::fabs, {x});
    out = b_.CreateSelect(b_.CreateAnd(b_.CreateFCmpOEQ(abs_x, f(1.0f)),
                                       b_.CreateFCmpOEQ(intrinsic(llvm::Intrinsic::fabs, {y}), infinity())),
                          f(1.0f), out);
    return b_.CreateSelect(b_.CreateOr(b_.CreateFCmpOEQ(y, f(0.0f)), b_.CreateFCmpOEQ(x, f(1.0f))), f(1.0f), out);
  }

  llvm::Value* sigmoid(llvm::Value* x) {
    // With e = exp(-|x|): 1 / (1 + e) for x >= 0, e / (1 + e) below, so that exp never
    // overflows and results down to the denormals are right.
    llvm::Value* e = exp(b_.CreateFNeg(intrinsic(llvm::Intrinsic::fabs, {x})));
    llvm::Value* numerator = b_.CreateSelect(b_.CreateFCmpOLT(x, f(0.0f)), e, f(1.0f));
    return b_.CreateFDiv(numerator, b_.CreateFAdd(f(1.0f), e));
  }

 private:
  llvm::IRBuilder<>& b_;
  llvm::Type* type_;
  llvm::Type* int_type_;
};

}  // namespace

llvm::Value* vector_exp(llvm::IRBuilder<>& b, llvm::Value* x) { return MathEmitter(b, x).exp(x); }
llvm::Value* vector_log(llvm::IRBuilder<>& b, llvm::Value* x) { return MathEmitter(b, x).log(x); }
llvm::Value* vector_tanh(llvm::IRBuilder<>& b, llvm::Value* x) { return MathEmitter(b, x).tanh(x); }
llvm::Value* vector_erf(llvm::IRBuilder<>& b, llvm::Value* x) { return MathEmitter(b, x).erf(x); }
llvm::Value* vector_sigmoid(llvm::IRBuilder<>& b, llvm::Value* x) { return MathEmitter(b, x).sigmoid(x); }
llvm::Value* vector_pow(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) { return MathEmitter(b, x).pow(x, y); }

}  // namespace temper
