// Bad compute definitions fail when they are written, with a message that names the
// tensor, the expression and what to change.
#include <gtest/gtest.h>

#include "compiler/te/te.h"
#include "user_error_test_util.h"

namespace temper {
namespace {

using testing_util::expect_user_error;

TEST(TeErrors, MismatchedDtypes) {
  te::Tensor a = te::placeholder({8}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({8}, DataType::int32(), "B");
  expect_user_error([&] { te::compute({8}, [&](Var i) { return a(i) + b(i); }, "C"); },
                    {"mismatched dtypes", "float32", "int32", "cast"});
}

TEST(TeErrors, WrongNumberOfIndices) {
  te::Tensor a = te::placeholder({8, 4}, DataType::float32(), "A");
  expect_user_error([&] { te::compute({8}, [&](Var i) { return a(i); }, "C"); }, {"A", "2 dimensions", "1 indices"});
}

TEST(TeErrors, BodyArityDoesNotMatchShape) {
  te::Tensor a = te::placeholder({8, 4}, DataType::float32(), "A");
  expect_user_error([&] { te::compute({8, 4}, [&](Var i) { return a(i, 0); }, "C"); }, {"C", "1-argument", "1-D"});
}

TEST(TeErrors, NonPositiveExtent) {
  expect_user_error([] { te::placeholder({8, 0}, DataType::float32(), "A"); }, {"A", "dimension 1", "positive"});
  expect_user_error([] { te::reduce_axis({0, -3}, "k"); }, {"k", "-3", "positive"});
}

TEST(TeErrors, NestedReduction) {
  te::Tensor a = te::placeholder({8, 8}, DataType::float32(), "A");
  IterVar k = te::reduce_axis({0, 8}, "k");
  IterVar l = te::reduce_axis({0, 8}, "l");
  expect_user_error(
      [&] { te::compute({8}, [&](Var i) { return te::sum(a(i, k) * te::sum(a(k, l), {l}), {k}); }, "C"); },
      {"C", "outermost", "own stage"});
}

TEST(TeErrors, ReductionOverSpatialAxis) {
  te::Tensor a = te::placeholder({8}, DataType::float32(), "A");
  IterVar fake{Var("x"), Range{0, 8}, IterKind::Spatial};
  expect_user_error([&] { te::compute({1}, [&](Var) { return te::sum(a(fake.var), {fake}); }, "C"); },
                    {"x", "reduce_axis"});
}

TEST(TeErrors, MathOnIntegers) {
  te::Tensor a = te::placeholder({8}, DataType::int32(), "A");
  expect_user_error([&] { te::compute({8}, [&](Var i) { return te::exp(a(i)); }, "C"); },
                    {"exp", "floating-point", "int32"});
}

TEST(TeErrors, PlaceholderMissingFromArguments) {
  te::Tensor a = te::placeholder({8}, DataType::float32(), "A");
  te::Tensor c = te::compute({8}, [&](Var i) { return a(i) * 2.0f; }, "C");
  expect_user_error([&] { te::create_prim_func({c}, "f"); }, {"placeholder A", "not among the arguments"});
}

TEST(TeErrors, StoreOfWrongType) {
  Buffer b("B", DataType::int32(), {8});
  Var x("x", DataType::float32());
  expect_user_error([&] { store(b, x, {Expr(0)}); }, {"float32", "int32", "B", "cast"});
}

TEST(TeErrors, OutOfRangeIndex) {
  te::Tensor a = te::placeholder({8}, DataType::float32(), "A");
  expect_user_error([&] { te::compute({8}, [&](Var i) { return a(i + 1); }, "C"); },
                    {"compute C", "A", "[1, 8]", "extent is 8"});
  expect_user_error([&] { te::compute({4}, [&](Var) { return a(9); }, "D"); }, {"D", "[9, 9]"});
  IterVar k = te::reduce_axis({0, 9}, "k");
  expect_user_error([&] { te::compute({1}, [&](Var) { return te::sum(a(k), {k}); }, "S"); }, {"S", "[0, 8]"});
  // A guard does not make a read safe: both sides of a select may be evaluated.
  expect_user_error(
      [&] { te::compute({8}, [&](Var i) { return select(i > 0, a(i - 1), Expr(0.0f)); }, "P"); },
      {"P", "[-1, 6]", "clamp"});
  // Clamped under the guard, it is accepted.
  EXPECT_NO_THROW(te::compute({8}, [&](Var i) { return select(i > 0, a(max(i - 1, 0)), Expr(0.0f)); }, "Q"));
}

}  // namespace
}  // namespace temper
