// Interval analysis: bounds of integer expressions, offset bounds, can_prove, assumptions and scopes.
#include <gtest/gtest.h>

#include <sstream>

#include "compiler/ir/printer.h"
#include "compiler/ir/substitute.h"
#include "compiler/lower/analyzer.h"
#include "compiler/lower/linear_sum.h"

namespace temper {
namespace {

std::string str_of(const Interval& i) {
  std::ostringstream os;
  os << i;
  return os.str();
}

class BoundsTest : public ::testing::Test {
 protected:
  Var i{"i"}, j{"j"}, x{"x"}, n{"n"};
  Analyzer an;
  void SetUp() override {
    an.bind(i, Range{0, 13});  // [0, 12]
    an.bind(j, Range{-4, 8});  // [-4, 3]
  }
  std::string b(const Expr& e) { return str_of(an.bounds(e)); }
};

TEST_F(BoundsTest, Variables) {
  EXPECT_EQ(b(i), "[0, 12]");
  EXPECT_EQ(b(x), "[-inf, +inf]");
  EXPECT_EQ(b(Var("u", DataType::uint8())), "[0, 255]");
  EXPECT_EQ(b(Var("b", DataType::boolean())), "[0, 1]");
  EXPECT_EQ(b(load(Buffer("A", DataType::int32(), {Expr(4)}), {i})), "[-inf, +inf]");  // any value of its type
  // A range with symbolic ends, bounded through the ends' bounds.
  Var k("k");
  an.bind(k, Range{i, Expr(20) - i});
  EXPECT_EQ(b(k), "[0, 19]");
}

TEST_F(BoundsTest, Arithmetic) {
  EXPECT_EQ(b(i * 8 + j), "[-4, 99]");
  EXPECT_EQ(b(i - j), "[-3, 16]");
  EXPECT_EQ(b(j * -3), "[-9, 12]");
  EXPECT_EQ(b(i * j), "[-48, 36]");
  EXPECT_EQ(b(x + 1), "[-inf, +inf]");
  EXPECT_EQ(b(max(x, 0)), "[0, +inf]");
  EXPECT_EQ(b(min(i, 5)), "[0, 5]");
  EXPECT_EQ(b(select(x < 0, i, j)), "[-4, 12]");
}

TEST_F(BoundsTest, Division) {
  EXPECT_EQ(b(floordiv(i, 4)), "[0, 3]");
  EXPECT_EQ(b(floordiv(j, 4)), "[-1, 0]");
  EXPECT_EQ(b(floormod(j, 4)), "[0, 3]");
  EXPECT_EQ(b(floormod(i, 16)), "[0, 12]");
  EXPECT_EQ(b(floormod(x, 8)), "[0, 7]");
  EXPECT_EQ(b(floordiv(x, 8)), "[-inf, +inf]");
  EXPECT_EQ(b(j / 4), "[-1, 0]");
  EXPECT_EQ(b((j - 4) / 4), "[-2, 0]");  // -1/4 truncates to 0 where floor gives -1
  EXPECT_EQ(b(j % 4), "[-3, 3]");
  EXPECT_EQ(b(i % 5), "[0, 4]");
  EXPECT_EQ(b(i / -2), "[-6, 0]");
  EXPECT_EQ(b(floordiv(i, x)), "[-inf, +inf]");  // the divisor may be zero
  EXPECT_EQ(b(floordiv(i, 4) - 1), "[-1, 2]");
}

TEST_F(BoundsTest, NarrowTypesWrap) {
  Var u("u", DataType::uint8());
  an.bind(u, Interval{250, 255});
  EXPECT_EQ(b(u + make_const(DataType::uint8(), int64_t{10})), "[0, 255]");  // may wrap
  EXPECT_EQ(b(u - make_const(DataType::uint8(), int64_t{10})), "[240, 245]");
  EXPECT_EQ(b(cast(DataType::int8(), i * 20)), "[-128, 127]");
  EXPECT_EQ(b(cast(DataType::int8(), i)), "[0, 12]");
  Var w("w", DataType::int64());
  an.bind(w, Interval{0, int64_t{1} << 40});
  EXPECT_EQ(b(cast(DataType::int32(), w)), "[-inf, +inf]");  // truncation wraps
  EXPECT_EQ(b(cast(DataType::int32(), floormod(w, make_const(DataType::int64(), int64_t{100})))), "[0, 99]");
}

TEST_F(BoundsTest, ComparisonsAndVectors) {
  EXPECT_EQ(b(i < 13), "[1, 1]");
  EXPECT_EQ(b(i < 12), "[0, 1]");
  EXPECT_EQ(b(j > 3), "[0, 0]");
  EXPECT_EQ(b(ramp(i * 8, Expr(1), 8)), "[0, 103]");
  EXPECT_EQ(b(broadcast(j, 4)), "[-4, 3]");
}

TEST_F(BoundsTest, CanProve) {
  EXPECT_TRUE(an.can_prove(i * 8 + j < 100));
  EXPECT_FALSE(an.can_prove(i * 8 + j < 99));
  EXPECT_TRUE(an.can_prove(floormod(x, 8) < 8));
  EXPECT_TRUE(an.can_prove(x + 1 > x));
  EXPECT_FALSE(an.can_prove(x * 2 > x));
  EXPECT_TRUE(an.can_prove(floordiv(i * 4 + 3, 4) == i));
}

// An index bounded while some variables move and the others stay fixed (the region a
// tile of a loop nest touches): the fixed terms stay symbolic.
TEST_F(BoundsTest, OffsetBoundsKeepFixedTermsSymbolic) {
  Var io("i_o"), ii("i_i");
  an.bind(ii, Range{0, 8});
  auto varies = [&](const Expr& term) { return uses_var(term, ii); };
  std::optional<OffsetBounds> r = offset_bounds(io * 8 + ii + 1, varies, an);
  ASSERT_TRUE(r);
  EXPECT_EQ(to_string(r->offset), "i_o * 8");
  EXPECT_EQ(str_of(r->rest), "[1, 8]");
  r = offset_bounds(ii * 2 - 1, varies, an);
  ASSERT_TRUE(r);
  EXPECT_EQ(to_string(r->offset), "0");
  EXPECT_EQ(str_of(r->rest), "[-1, 13]");
  // A term of both kinds varies: unbounded while i_o is unknown.
  r = offset_bounds(floordiv(io * 3 + ii, 4), varies, an);
  ASSERT_TRUE(r);
  EXPECT_EQ(to_string(r->offset), "0");
  EXPECT_EQ(str_of(r->rest), "[-inf, +inf]");
  EXPECT_FALSE(offset_bounds(cast(DataType::float32(), ii), varies, an).has_value());  // not an index
}

TEST_F(BoundsTest, AssumptionsTightenBoundsUntilTheScopeEnds) {
  {
    Analyzer::Scope scope(an);
    an.assume(i < 4 && x >= 2);
    EXPECT_EQ(b(i), "[0, 3]");
    EXPECT_EQ(b(x), "[2, +inf]");
    EXPECT_TRUE(an.can_prove(i * 8 + 7 < 32));
    an.assume(x * 3 < n);
    EXPECT_EQ(to_string(an.simplify(x * 3 < n)), "True");
    EXPECT_EQ(to_string(an.simplify(x * 3 >= n)), "False");
  }
  EXPECT_EQ(b(i), "[0, 12]");
  EXPECT_EQ(b(x), "[-inf, +inf]");
  EXPECT_EQ(to_string(an.simplify(x * 3 < n)), "x * 3 < n");
}

}  // namespace
}  // namespace temper
