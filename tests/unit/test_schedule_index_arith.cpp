// The index arithmetic schedule primitives rely on: simplification to ordered linear
// sums and interval bounds over loop ranges.
#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/schedule/index_arith.h"

namespace temper::schedule_detail {
namespace {

TEST(IndexArith, SimplifyFlattensAndFolds) {
  Var i("i"), j("j"), k("k");
  EXPECT_EQ(to_string(simplify(i * 8 + (j * 4 + k) + 0)), "i * 8 + j * 4 + k");
  EXPECT_EQ(to_string(simplify((i + 1) * 2 - i * 2)), "2");
  EXPECT_EQ(to_string(simplify(i - j * 3 + 5)), "i - j * 3 + 5");
  EXPECT_EQ(to_string(simplify(floordiv(i * 8 + 3, 8))), "i");
  EXPECT_EQ(to_string(simplify(floormod(i * 8 + j, 8))), "j % 8");
  EXPECT_EQ(to_string(simplify(floordiv(j, 1))), "j");
  EXPECT_EQ(to_string(simplify(min(i + 3, i + 1))), "i + 1");
  EXPECT_EQ(to_string(simplify(i * 4 + j < i * 4 + j + 1)), "True");
  EXPECT_EQ(to_string(simplify(make_bool(true) && i < 10)), "i < 10");
}

TEST(IndexArith, ConstantDifference) {
  Var i("i"), j("j");
  EXPECT_EQ(constant_difference(i * 8 + 7, i * 8), std::optional<int64_t>(7));
  EXPECT_EQ(constant_difference(i * 8, j * 8), std::nullopt);
}

TEST(IndexArith, BoundsOverLoopRanges) {
  Var io("i_o"), ii("i_i"), f("f");
  VarRanges inner = {{ii.get(), Range{Expr(0), Expr(8)}}};
  std::optional<Interval> b = bound(io * 8 + ii, inner);
  ASSERT_TRUE(b);
  EXPECT_EQ(to_string(b->min), "i_o * 8");
  EXPECT_EQ(to_string(b->max), "i_o * 8 + 7");
  // Within one period a floormod grows with its operand; across periods it spans [0, c).
  b = bound(floormod(io * 8 + ii, 8), inner);
  EXPECT_EQ(to_string(b->min) + " " + to_string(b->max), "0 7");
  VarRanges fused = {{f.get(), Range{Expr(0), Expr(128)}}};
  b = bound(floormod(f, 16), fused);
  EXPECT_EQ(to_string(b->min) + " " + to_string(b->max), "0 15");
  b = bound(floordiv(f, 16) - 1, fused);
  EXPECT_EQ(to_string(b->min) + " " + to_string(b->max), "-1 6");
  Buffer a("A", DataType::int32(), {Expr(4)});
  EXPECT_FALSE(bound(load(a, {f}), fused).has_value());
}

}  // namespace
}  // namespace temper::schedule_detail
