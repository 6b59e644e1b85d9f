// Cost-model features of lowered loop nests: the numbers expected for known nests
// (operation counts, loop structure, strides, footprints, vector lanes, parallel loops),
// and the fixed-length candidate vector that combines them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "compiler/lower/lower.h"
#include "compiler/schedule/schedule.h"
#include "compiler/te/te.h"
#include "cost_model/features.h"

namespace temper::cost_model {
namespace {

// C = A + B over 64 x 64 floats.
PrimFunc elementwise_add() {
  te::Tensor a = te::placeholder({64, 64}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({64, 64}, DataType::float32(), "B");
  te::Tensor c = te::compute(
      {64, 64}, [&](Var i, Var j) { return a(i, j) + b(i, j); }, "C");
  return te::create_prim_func({a, b, c}, "add");
}

// C[i, j] = sum_k A[i, k] * B[k, j] over 16 x 16 x 16.
PrimFunc matmul16() {
  te::Tensor a = te::placeholder({16, 16}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({16, 16}, DataType::float32(), "B");
  IterVar k = te::reduce_axis({0, 16}, "k");
  te::Tensor c = te::compute(
      {16, 16}, [&](Var i, Var j) { return te::sum(a(i, k) * b(k, j), {k}); }, "C");
  return te::create_prim_func({a, b, c}, "matmul");
}

// The features of the store's access to buffer (all zeros, and a failure, if none).
BufferAccessFeatures access(const StoreFeatures& s, const std::string& buffer) {
  auto it = std::find_if(s.accesses.begin(), s.accesses.end(), [&](const auto& a) { return a.buffer == buffer; });
  if (it == s.accesses.end()) {
    ADD_FAILURE() << "the store does not access " << buffer;
    return {};
  }
  return *it;
}

float feature(const std::vector<float>& v, const std::string& name) {
  const std::vector<std::string>& names = feature_names();
  auto it = std::find(names.begin(), names.end(), name);
  EXPECT_NE(it, names.end()) << name;
  return v[it - names.begin()];
}

// The store that does the reduction step (the one with multiply-adds).
StoreFeatures update_store(const std::vector<StoreFeatures>& rows) {
  auto it = std::find_if(rows.begin(), rows.end(), [](const auto& s) { return s.float_fma > 0; });
  if (it == rows.end()) {
    ADD_FAILURE() << "no store does multiply-adds";
    return {};
  }
  return *it;
}

TEST(CostModelFeatures, ElementwiseAddCountsEveryElementWithUnitStride) {
  std::vector<StoreFeatures> rows = extract_store_features(lower(elementwise_add()));
  ASSERT_EQ(rows.size(), 1u);
  const StoreFeatures& s = rows[0];
  EXPECT_EQ(s.buffer, "C");
  EXPECT_EQ(s.float_add_sub, 4096);
  EXPECT_EQ(s.float_mul, 0);
  EXPECT_EQ(s.float_fma, 0);
  EXPECT_EQ(s.num_loops, 2);
  EXPECT_EQ(s.loop_product, 4096);
  EXPECT_EQ(s.innermost_extent, 64);
  EXPECT_EQ(s.vector_lanes, 1);
  EXPECT_EQ(s.parallel_loops, 0);
  ASSERT_EQ(s.accesses.size(), 3u);
  for (const char* buffer : {"A", "B", "C"}) {
    BufferAccessFeatures a = access(s, buffer);
    EXPECT_EQ(a.stride, 1) << buffer;
    EXPECT_EQ(a.bytes, 4096 * 4) << buffer;
    EXPECT_EQ(a.unique_bytes, 4096 * 4) << buffer;
    EXPECT_EQ(a.reuse, 1) << buffer;
  }
}

TEST(CostModelFeatures, NaiveMatmulHasMultiplyAddsAndStridedB) {
  std::vector<StoreFeatures> rows = extract_store_features(lower(matmul16()));
  ASSERT_EQ(rows.size(), 2u);  // the init store and the update
  StoreFeatures s = update_store(rows);
  EXPECT_EQ(s.float_fma, 4096);
  EXPECT_EQ(s.float_add_sub, 0);
  EXPECT_EQ(s.float_mul, 0);
  EXPECT_EQ(s.num_loops, 3);
  EXPECT_EQ(s.loop_product, 4096);
  // Four flattened indices of the form x * 16 + y.
  EXPECT_EQ(s.int_arith, 8 * 4096);
  BufferAccessFeatures b = access(s, "B");
  EXPECT_EQ(b.stride, 16);
  EXPECT_EQ(b.bytes, 4096 * 4);
  EXPECT_EQ(b.unique_bytes, 256 * 4);
  EXPECT_EQ(b.reuse, 16);
  EXPECT_EQ(access(s, "A").stride, 1);
  // C is read and written at the same point for all 16 steps of the reduction.
  BufferAccessFeatures c = access(s, "C");
  EXPECT_EQ(c.stride, 0);
  EXPECT_EQ(c.bytes, 2 * 4096 * 4);
  EXPECT_EQ(c.unique_bytes, 256 * 4);
  EXPECT_EQ(s.accesses[0].buffer, "C");  // heaviest first
}

TEST(CostModelFeatures, MathDivisionAndComparisonAreCountedByKind) {
  te::Tensor a = te::placeholder({8, 8}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({8, 8}, DataType::float32(), "B");
  te::Tensor c = te::compute(
      {8, 8}, [&](Var i, Var j) { return max(te::exp(a(i, j)) / b(i, j), 0.0f); }, "C");
  std::vector<StoreFeatures> rows = extract_store_features(lower(te::create_prim_func({a, b, c}, "f")));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].float_math, 64);
  EXPECT_EQ(rows[0].float_div, 64);
  EXPECT_EQ(rows[0].float_cmp_select, 64);
  EXPECT_EQ(rows[0].float_add_sub + rows[0].float_mul + rows[0].float_fma, 0);
}

TEST(CostModelFeatures, ReorderMakingJInnermostGivesBUnitStride) {
  Schedule s(matmul16());
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  s.reorder({loops[0], loops[2], loops[1]});
  std::vector<StoreFeatures> rows = extract_store_features(lower(s.func()));
  StoreFeatures row = update_store(rows);
  EXPECT_EQ(row.float_fma, 4096);
  EXPECT_EQ(access(row, "B").stride, 1);
  EXPECT_EQ(access(row, "A").stride, 0);
  EXPECT_EQ(access(row, "C").stride, 1);

  std::vector<float> naive = candidate_features(lower(matmul16()));
  std::vector<float> reordered = candidate_features(lower(s.func()));
  ASSERT_EQ(naive.size(), reordered.size());
  EXPECT_NE(naive, reordered);
}

TEST(CostModelFeatures, VectorizedAndParallelLoopsShowInTheStore) {
  Schedule s(elementwise_add());
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  std::vector<LoopRV> j = s.split(loops[1], {std::nullopt, 8});
  s.vectorize(j[1]);
  s.parallel(loops[0]);
  std::vector<StoreFeatures> rows = extract_store_features(lower(s.func()));
  ASSERT_EQ(rows.size(), 1u);
  const StoreFeatures& row = rows[0];
  EXPECT_EQ(row.vector_lanes, 8);
  EXPECT_EQ(row.float_add_sub, 4096);  // per element, not per vector instruction
  EXPECT_EQ(row.num_loops, 2);
  EXPECT_EQ(row.loop_product, 512);
  EXPECT_EQ(row.innermost_extent, 8);
  EXPECT_EQ(row.parallel_loops, 1);
  EXPECT_EQ(row.parallel_extent, 64);
  EXPECT_EQ(access(row, "A").stride, 1);
  EXPECT_EQ(access(row, "A").unique_bytes, 4096 * 4);

  std::vector<float> v = candidate_features(lower(s.func()));
  EXPECT_FLOAT_EQ(feature(v, "store0.vector_lanes"), std::log2(9.0f));
  EXPECT_FLOAT_EQ(feature(v, "store0.parallel_extent"), std::log2(65.0f));
  EXPECT_FLOAT_EQ(feature(v, "store0.parallel_loops"), 1.0f);
  std::vector<float> plain = candidate_features(lower(elementwise_add()));
  EXPECT_FLOAT_EQ(feature(plain, "store0.vector_lanes"), 1.0f);
  EXPECT_FLOAT_EQ(feature(plain, "store0.parallel_loops"), 0.0f);
}

TEST(CostModelFeatures, UnrolledCopiesKeepTheTotals) {
  Schedule s(elementwise_add());
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  std::vector<LoopRV> j = s.split(loops[1], {std::nullopt, 4});
  s.unroll(j[1]);
  PrimFunc lowered = lower(s.func());
  std::vector<StoreFeatures> rows = extract_store_features(lowered);
  ASSERT_EQ(rows.size(), 4u);
  for (const StoreFeatures& row : rows) EXPECT_EQ(row.loop_product, 1024);
  std::vector<float> v = candidate_features(lowered);
  EXPECT_FLOAT_EQ(feature(v, "total.float_add_sub"), std::log2(4097.0f));
  EXPECT_FLOAT_EQ(feature(v, "total.num_stores"), std::log2(5.0f));
}

TEST(CostModelFeatures, LayoutIsNamedAndFixedLength) {
  const std::vector<std::string>& names = feature_names();
  EXPECT_EQ(names.size(), candidate_features(lower(elementwise_add())).size());
  EXPECT_EQ(names.size(), candidate_features(lower(matmul16())).size());
  EXPECT_EQ(names.size(), 10u + kTopStores * (14u + kBufferSlots * 4u));
  EXPECT_EQ(names.front(), "total.float_add_sub");
  EXPECT_EQ(names.back(), "store1.buf2.reuse");
  EXPECT_EQ(kFeatureLayoutVersion, 1);
  // The second store slot of a one-store program is empty.
  std::vector<float> v = candidate_features(lower(elementwise_add()));
  EXPECT_EQ(feature(v, "store1.loop_product"), 0.0f);
  EXPECT_FLOAT_EQ(feature(v, "total.float_add_sub"), std::log2(4097.0f));
}

TEST(CostModelFeatures, UnloweredFunctionIsRefused) {
  try {
    extract_store_features(elementwise_add());
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("lowered IR"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace temper::cost_model
