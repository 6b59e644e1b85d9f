// The arithmetic simplifier, rule by rule: what it rewrites, and what it must leave.
#include <gtest/gtest.h>

#include <random>

#include "compiler/ir/printer.h"
#include "compiler/lower/analyzer.h"
#include "compiler/lower/simplify.h"
#include "unit/test_lower_builders.h"

namespace temper {
namespace {

class SimplifyTest : public ::testing::Test {
 protected:
  Var x{"x"}, y{"y"}, z{"z"}, i{"i"}, j{"j"}, n{"n"};
  Analyzer an;

  std::string s(const Expr& e) { return to_string(an.simplify(e)); }
};

TEST_F(SimplifyTest, FoldsIntegerConstants) {
  EXPECT_EQ(s(Expr(3) + Expr(4) * Expr(5)), "23");
  EXPECT_EQ(s(Expr(7) / Expr(-2)), "-3");  // truncating
  EXPECT_EQ(s(Expr(7) % Expr(-2)), "1");
  EXPECT_EQ(s(floordiv(Expr(7), Expr(-2))), "-4");
  EXPECT_EQ(s(floormod(Expr(7), Expr(-2))), "-1");
  EXPECT_EQ(s(floordiv(Expr(-7), Expr(2))), "-4");
  EXPECT_EQ(s(floormod(Expr(-7), Expr(2))), "1");
  EXPECT_EQ(s(min(Expr(3), Expr(-1)) + max(Expr(3), Expr(-1))), "2");
  EXPECT_EQ(s(Expr(3) < Expr(4) && Expr(5) == Expr(5)), "True");
}

TEST_F(SimplifyTest, DoesNotFoldDivisionByZeroOrSignedOverflow) {
  EXPECT_EQ(s(Expr(7) / Expr(0)), "truncdiv(7, 0)");
  EXPECT_EQ(s(floormod(Expr(7), Expr(0))), "7 % 0");
  EXPECT_EQ(s(Expr(2147483647) + Expr(1)), "2147483647 + 1");
  EXPECT_EQ(s(Expr(int64_t{1} << 40) * Expr(int64_t{1} << 30)), "int64(1099511627776) * int64(1073741824)");
}

TEST_F(SimplifyTest, NarrowAndUnsignedIntegersWrap) {
  EXPECT_EQ(s(make_const(DataType::int8(), int64_t{127}) + make_const(DataType::int8(), int64_t{1})), "int8(-128)");
  EXPECT_EQ(s(make_const(DataType::uint8(), int64_t{3}) - make_const(DataType::uint8(), int64_t{5})), "uint8(254)");
  EXPECT_EQ(s(cast(DataType::int8(), Expr(300))), "int8(44)");
  EXPECT_EQ(s(cast(DataType::boolean(), Expr(2))), "True");
}

TEST_F(SimplifyTest, FoldsFloatsWithTheirPrecision) {
  EXPECT_EQ(s(Expr(0.1f) + Expr(0.2f)), "0.300000012f");
  EXPECT_EQ(s(make_const(DataType::float64(), 0.1) + make_const(DataType::float64(), 0.2)), "float64(0.3)");
  EXPECT_EQ(s(cast(DataType::int32(), Expr(-2.7f))), "-2");
  EXPECT_EQ(s(cast(DataType::int32(), Expr(4e9f))), "int32(4e+09f)");  // out of range
  // float16 has no exact host type: left alone.
  Expr h = make_const(DataType::float16(), 1.0);
  EXPECT_EQ(s(h + h), "float16(1.0) + float16(1.0)");
}

TEST_F(SimplifyTest, FloatIdentitiesKeepSignedZeroAndNaN) {
  Var f("f", DataType::float32());
  EXPECT_EQ(s(f * Expr(1.0f)), "f");
  EXPECT_EQ(s(f - Expr(0.0f)), "f");
  EXPECT_EQ(s(f + Expr(0.0f)), "f + 0.0f");  // -0.0 + 0.0 is +0.0
  EXPECT_EQ(s(f * Expr(0.0f)), "f * 0.0f");  // inf * 0 is NaN
  EXPECT_EQ(s(f - f), "f - f");
  EXPECT_EQ(s(f == f), "f == f");
  EXPECT_EQ(s(!(f < Expr(1.0f))), "!(f < 1.0f)");
}

TEST_F(SimplifyTest, CollectsLinearTerms) {
  EXPECT_EQ(s(x + y - x), "y");
  EXPECT_EQ(s((x + 1) * 8 + y - 8), "x * 8 + y");
  EXPECT_EQ(s((i * 8 + j) * 16 + 3 - 1), "i * 128 + j * 16 + 2");
  EXPECT_EQ(s(Expr(8) - x * 2 + 1), "9 - x * 2");
  EXPECT_EQ(s(Expr(0) - x - 3), "0 - x - 3");
  EXPECT_EQ(s(x * y + y * 2 - x * y), "y * 2");
  EXPECT_EQ(s(x * 0 + y * 1), "y");
}

// What split, fuse and tile leave in block bindings, simplified with no loop bound
// (schedule primitives simplify so).
TEST_F(SimplifyTest, ScheduleIndicesWithNothingKnown) {
  EXPECT_EQ(s(i * 8 + (j * 4 + z) + 0), "i * 8 + j * 4 + z");
  EXPECT_EQ(s((i + 1) * 2 - i * 2), "2");
  EXPECT_EQ(s(i - j * 3 + 5), "i - j * 3 + 5");
  EXPECT_EQ(s(i * 8 + 7 - i * 8), "7");
  EXPECT_EQ(s(i * 8 - j * 8), "i * 8 - j * 8");
  EXPECT_EQ(s(floordiv(i * 8 + 3, 8)), "i");
  EXPECT_EQ(s(floordiv(j, 1)), "j");
  EXPECT_EQ(s(min(i + 3, i + 1)), "i + 1");
  EXPECT_EQ(s(i * 4 + j < i * 4 + j + 1), "True");
  EXPECT_EQ(to_string(simplify(floormod(i * 8 + j, 8))), "j % 8");
}

TEST_F(SimplifyTest, FloorDivisionByBounds) {
  an.bind(j, Range{0, 8});
  EXPECT_EQ(s(floordiv(i * 8 + j, 8)), "i");
  EXPECT_EQ(s(floormod(i * 8 + j, 8)), "j");
  EXPECT_EQ(s(floordiv(i * 16 + j + 8, 8)), "i * 2 + 1");
  EXPECT_EQ(s(floormod(i * 16 + j + 8, 8)), "j");
  EXPECT_EQ(s(floordiv(j, 8)), "0");
  EXPECT_EQ(s(floordiv(floordiv(x, 4), 8)), "x // 32");
  EXPECT_EQ(s(floormod(floormod(x, 16), 8)), "x % 8");
  EXPECT_EQ(s(floormod(floormod(x, 12), 8)), "x % 12 % 8");
}

TEST_F(SimplifyTest, FloorDivisionWithUnboundedRemainderKeepsTheRemainder) {
  // b unbounded: (a*8 + b) // 8 is not a.
  EXPECT_EQ(s(floordiv(x * 8 + y, 8)), "x + y // 8");
  EXPECT_EQ(s(floormod(x * 8 + y, 8)), "y % 8");
  EXPECT_EQ(s(floordiv(x * 6 + y, 4)), "(x * 6 + y) // 4");
  an.bind(y, Range{0, 9});  // one too many for 8
  EXPECT_EQ(s(floordiv(x * 8 + y, 8)), "x + y // 8");
}

TEST_F(SimplifyTest, TruncatingDivisionBecomesFloorWhenNonNegative) {
  an.bind(i, Range{0, 10});
  an.bind(j, Range{0, 4});
  EXPECT_EQ(s((i * 4 + j) / 4), "i");
  EXPECT_EQ(s((i * 4 + j) % 4), "j");
  EXPECT_EQ(s(x / 4), "truncdiv(x, 4)");  // x may be negative
}

TEST_F(SimplifyTest, RecombinesDivAndMod) {
  EXPECT_EQ(s(floordiv(x, 8) * 8 + floormod(x, 8)), "x");
  EXPECT_EQ(s(floordiv(x + y, 4) * 8 + floormod(x + y, 4) * 2), "x * 2 + y * 2");
  EXPECT_EQ(s(x - floordiv(x, 8) * 8), "x % 8");
}

TEST_F(SimplifyTest, MinMaxByBounds) {
  an.bind(j, Range{0, 8});
  EXPECT_EQ(s(min(i * 8 + j, i * 8 + 10)), "i * 8 + j");
  EXPECT_EQ(s(max(j, 0)), "j");
  EXPECT_EQ(s(min(j, 4)), "min(j, 4)");
  EXPECT_EQ(s(min(x, x)), "x");
  EXPECT_EQ(s(max(x + 1, x)), "x + 1");
}

TEST_F(SimplifyTest, ComparisonsByBoundsAndNormalForm) {
  an.bind(i, Range{0, 12});
  an.bind(j, Range{0, 8});
  EXPECT_EQ(s(i * 8 + j < 100), "True");
  EXPECT_EQ(s(i * 8 + j < 50), "i * 8 + j < 50");
  EXPECT_EQ(s(j >= 8), "False");
  EXPECT_EQ(s(x + 1 < y), "x < y - 1");
  EXPECT_EQ(s(Expr(5) < x), "x > 5");
  EXPECT_EQ(s(x * 2 + y == y + 4), "x * 2 == 4");
  EXPECT_EQ(s(!(x < y)), "x >= y");
  EXPECT_EQ(s(x == x), "True");
}

TEST_F(SimplifyTest, Logic) {
  Expr c = x < y;
  EXPECT_EQ(s(c && make_bool(true)), "x < y");
  EXPECT_EQ(s(c || make_bool(true)), "True");
  EXPECT_EQ(s(c && make_bool(false)), "False");
  EXPECT_EQ(s(!!c), "x < y");
  EXPECT_EQ(s(c && c), "x < y");
}

TEST_F(SimplifyTest, SelectAndLet) {
  an.bind(j, Range{0, 8});
  EXPECT_EQ(s(select(j < 8, x, y)), "x");
  EXPECT_EQ(s(select(x < y, z, z)), "z");
  Var t("t");
  EXPECT_EQ(s(let(t, Expr(3), t * x + t)), "x * 3 + 3");
  EXPECT_EQ(s(let(t, x * y, z + 1)), "z + 1");
  EXPECT_EQ(s(let(t, x * y, t + t)), "(let t = x * y in t * 2)");
}

TEST_F(SimplifyTest, VectorArithmetic) {
  EXPECT_EQ(s(broadcast(x, 4) + broadcast(Expr(1), 4)), "broadcast(x + 1, 4)");
  EXPECT_EQ(s(ramp(Expr(0), Expr(1), 8) + broadcast(i * 8, 8)), "ramp(i * 8, 1, 8)");
  EXPECT_EQ(s(ramp(x, Expr(1), 4) * broadcast(Expr(3), 4)), "ramp(x * 3, 3, 4)");
  EXPECT_EQ(s(ramp(x, Expr(2), 4) - ramp(x, Expr(2), 4)), "broadcast(0, 4)");
  EXPECT_EQ(s(broadcast(x, 4) - ramp(y, Expr(1), 4)), "ramp(x - y, -1, 4)");
  an.bind(i, Range{0, 4});
  EXPECT_EQ(s(floordiv(ramp(i * 8, Expr(1), 8), broadcast(Expr(8), 8))), "broadcast(i, 8)");
  EXPECT_EQ(s(floormod(ramp(i * 8, Expr(1), 8), broadcast(Expr(8), 8))), "ramp(0, 1, 8)");
  EXPECT_EQ(s(floordiv(ramp(x, Expr(16), 4), broadcast(Expr(8), 4))), "ramp(x // 8, 2, 4)");
  EXPECT_EQ(s(floormod(ramp(x, Expr(1), 4), broadcast(Expr(8), 4))), "ramp(x, 1, 4) % broadcast(8, 4)");
  EXPECT_EQ(s(ramp(i * 8, Expr(1), 8) < broadcast(Expr(40), 8)), "broadcast(True, 8)");
}

// Random integer expressions over loop variables with known ranges: the simplified
// function must compute exactly the same values at every point.
class RandomExpr {
 public:
  RandomExpr(unsigned seed, std::vector<Var> vars) : rng_(seed), vars_(std::move(vars)) {}

  Expr make(int depth) {
    if (depth == 0 || pick(5) == 0) return leaf();
    Expr a = make(depth - 1);
    switch (pick(13)) {
      case 0:
        return a + make(depth - 1);
      case 1:
        return a - make(depth - 1);
      case 2:
        return a * constant(-3, 3);
      case 3:
        return a * make(depth - 2 < 0 ? 0 : depth - 2);
      case 4:
        return floordiv(a, divisor());
      case 5:
        return floormod(a, divisor());
      case 6:
        return a / divisor();
      case 7:
        return a % divisor();
      case 8:
        return min(a, make(depth - 1));
      case 9:
        return max(a, make(depth - 1));
      case 10:
        return select(a < make(depth - 1), make(depth - 1), make(depth - 1));
      case 11:
        return select(a == make(depth - 1) || !(a > leaf()), a, leaf());
      default: {
        // The shapes split and fuse produce: (a*c + b) // d and % d.
        Expr sum = a * constant(1, 8) + make(depth - 1);
        return pick(2) ? floordiv(sum, divisor()) : floormod(sum, divisor());
      }
    }
  }

 private:
  std::mt19937 rng_;
  std::vector<Var> vars_;

  int pick(int n) { return static_cast<int>(rng_() % static_cast<unsigned>(n)); }
  Expr constant(int lo, int hi) { return Expr(lo + pick(hi - lo + 1)); }
  Expr divisor() {
    int d = pick(10) - 2;  // -2 .. 7, never zero
    return Expr(d >= 0 ? d + 1 : d);
  }
  Expr leaf() { return pick(3) ? Expr(vars_[pick(static_cast<int>(vars_.size()))]) : constant(-9, 9); }
};

// ...and every value lies within the bounds the analyzer gives.
TEST(SimplifyRandom, NeverChangesValuesAndBoundsHold) {
  Var x("x"), y("y"), z("z");
  RandomExpr gen(20240601, {x, y, z});
  Buffer out("out", DataType::int32(), {8 * 8 * 3});
  Analyzer an;
  an.bind(x, Range{0, 8});
  an.bind(y, Range{-4, 8});
  an.bind(z, Range{0, 3});
  for (int trial = 0; trial < 300; ++trial) {
    Expr e = gen.make(4);
    Stmt body = make_for(x, 0, 8, ForKind::Serial,
                         make_for(y, -4, 8, ForKind::Serial,
                                  make_for(z, 0, 3, ForKind::Serial, store(out, e, {x * 24 + (y + 4) * 3 + z}))));
    PrimFunc f{"f", {out}, body};
    PrimFunc g = simplify(f);
    SCOPED_TRACE(to_string(e) + "  simplified to  " + to_string(g.body));
    test::expect_same_results(f, g);
    std::vector<double> values(8 * 8 * 3);
    test::Interpreter().run(f, {&values});
    Interval b = an.bounds(e);
    for (double v : values) {
      ASSERT_TRUE(v >= static_cast<double>(b.min) && v <= static_cast<double>(b.max)) << v << " outside " << b;
    }
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace temper
