// Cost-model features of lowered loop nests: the numbers expected for known nests
// (operation counts, loop structure, strides, footprints, cache lines, reuse, the
// arithmetic-intensity curve, allocations, vector lanes, parallel loops), the
// fixed-length candidate vector that combines them, and extraction from several threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <thread>

#include "compiler/lower/lower.h"
#include "compiler/schedule/schedule.h"
#include "compiler/te/te.h"
#include "cost_model/features.h"
#include "schedule_space/template.h"

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
    EXPECT_EQ(a.lines, 4096 * 4 / 64) << buffer;
    EXPECT_EQ(a.unique_lines, 4096 * 4 / 64) << buffer;
    EXPECT_EQ(a.reuse_kind, ReuseKind::None) << buffer;
    EXPECT_EQ(a.reuse_count, 1) << buffer;
    EXPECT_EQ(a.reuse_distance_iters, 0) << buffer;
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
  EXPECT_EQ(access(s, "A").stride, 1);
  // C is read and written at the same point for all 16 steps of the reduction.
  BufferAccessFeatures c = access(s, "C");
  EXPECT_EQ(c.stride, 0);
  EXPECT_EQ(c.bytes, 2 * 4096 * 4);
  EXPECT_EQ(c.unique_bytes, 256 * 4);
  EXPECT_EQ(s.accesses[0].buffer, "C");  // heaviest first
}

// The bytes per iteration below: under k, the init store touches C (4 bytes) and the
// update C twice, A and B (16 bytes); 81920 bytes per call in all.
TEST(CostModelFeatures, NaiveMatmulCacheLinesAndReuse) {
  StoreFeatures s = update_store(extract_store_features(lower(matmul16())));
  // C[i*16 + j]: the 16x16 result is 16 lines, read once and written once.
  BufferAccessFeatures c = access(s, "C");
  EXPECT_EQ(c.unique_lines, 16);
  EXPECT_EQ(c.lines, 2 * 16);
  EXPECT_EQ(c.reuse_kind, ReuseKind::Loop);  // carried by k, the innermost loop
  EXPECT_EQ(c.reuse_count, 16);
  EXPECT_EQ(c.reuse_distance_iters, 1);
  EXPECT_EQ(c.reuse_distance_bytes, 20);
  // A[i*16 + k]: one line per run of k, rerun for every j; reuse carried by j.
  BufferAccessFeatures a = access(s, "A");
  EXPECT_EQ(a.lines, 256);
  EXPECT_EQ(a.unique_lines, 16);
  EXPECT_EQ(a.reuse_kind, ReuseKind::Loop);
  EXPECT_EQ(a.reuse_count, 16);
  EXPECT_EQ(a.reuse_distance_iters, 16);           // the 16 steps of k
  EXPECT_EQ(a.reuse_distance_bytes, 81920 / 256);  // one iteration of j
  // B[k*16 + j]: a 64-byte stride, one line per element, though the footprint is 16 lines.
  BufferAccessFeatures b = access(s, "B");
  EXPECT_EQ(b.lines, 4096);
  EXPECT_EQ(b.unique_lines, 16);
  EXPECT_EQ(b.reuse_kind, ReuseKind::Loop);  // carried by i
  EXPECT_EQ(b.reuse_count, 16);
  EXPECT_EQ(b.reuse_distance_iters, 256);
  EXPECT_EQ(b.reuse_distance_bytes, 81920 / 16);
}

// B[i] = A[i * 32] + A2[i * 2] over 256 floats.
TEST(CostModelFeatures, StridedAccessesTouchALinePerElementOrPerLineOfBytes) {
  Buffer A("A", DataType::float32(), {256 * 32});
  Buffer A2("A2", DataType::float32(), {256 * 2});
  Buffer B("B", DataType::float32(), {256});
  Var i("i");
  Stmt body = make_for(i, 0, 256, ForKind::Serial, store(B, load(A, {i * 32}) + load(A2, {i * 2}), {i}));
  std::vector<StoreFeatures> rows = extract_store_features(PrimFunc{"strided", {A, A2, B}, body});
  ASSERT_EQ(rows.size(), 1u);
  BufferAccessFeatures a = access(rows[0], "A");  // 128-byte steps
  EXPECT_EQ(a.stride, 32);
  EXPECT_EQ(a.bytes, 1024);
  EXPECT_EQ(a.unique_bytes, 1024);
  EXPECT_EQ(a.lines, 256);
  EXPECT_EQ(a.unique_lines, 256);
  BufferAccessFeatures a2 = access(rows[0], "A2");  // 8-byte steps: 2048 bytes spanned
  EXPECT_EQ(a2.stride, 2);
  EXPECT_EQ(a2.lines, 32);
  EXPECT_EQ(a2.unique_lines, 32);
  BufferAccessFeatures b = access(rows[0], "B");
  EXPECT_EQ(b.lines, 16);
  EXPECT_EQ(b.unique_lines, 16);
  for (const BufferAccessFeatures& x : rows[0].accesses) {
    EXPECT_EQ(x.reuse_kind, ReuseKind::None) << x.buffer;
    EXPECT_EQ(x.reuse_count, 1) << x.buffer;
  }
}

// B[i] += A[i + r], i < 8, r < 3: the windows overlap, A's footprint is 10 elements.
TEST(CostModelFeatures, OverlappingWindowIsCountedOnce) {
  Buffer A("A", DataType::float32(), {10});
  Buffer B("B", DataType::float32(), {8});
  Var i("i"), r("r");
  Stmt body = make_for(i, 0, 8, ForKind::Serial,
                       make_for(r, 0, 3, ForKind::Serial, store(B, load(B, {Expr(i)}) + load(A, {i + r}), {Expr(i)})));
  StoreFeatures s = extract_store_features(PrimFunc{"window", {A, B}, body})[0];
  BufferAccessFeatures a = access(s, "A");
  EXPECT_EQ(a.bytes, 24 * 4);
  EXPECT_EQ(a.unique_bytes, 10 * 4);
  EXPECT_EQ(a.unique_lines, 1);
  EXPECT_EQ(a.lines, 8);  // one short run of r per i
  EXPECT_EQ(a.reuse_kind, ReuseKind::None);
  EXPECT_EQ(access(s, "B").reuse_kind, ReuseKind::Loop);  // carried by r
  EXPECT_EQ(access(s, "B").reuse_count, 3);
}

TEST(CostModelFeatures, SameLocationTwiceInOneIterationIsSerialReuse) {
  Buffer A("A", DataType::float32(), {64});
  Buffer B("B", DataType::float32(), {64});
  Buffer C("C", DataType::float32(), {64});
  Var i("i");
  // C[i] = C[i] * C[i] + A[i]; B[i] = A[i] * 2: C three times in one store, A in two stores.
  Stmt body = make_for(i, 0, 64, ForKind::Serial,
                       seq({store(C, load(C, {Expr(i)}) * load(C, {Expr(i)}) + load(A, {Expr(i)}), {Expr(i)}),
                            store(B, load(A, {Expr(i)}) * 2.0f, {Expr(i)})}));
  std::vector<StoreFeatures> rows = extract_store_features(PrimFunc{"serial", {A, B, C}, body});
  ASSERT_EQ(rows.size(), 2u);
  BufferAccessFeatures c = access(rows[0], "C");
  EXPECT_EQ(c.reuse_kind, ReuseKind::Serial);
  EXPECT_EQ(c.reuse_count, 3);
  EXPECT_EQ(c.reuse_distance_iters, 0);
  EXPECT_EQ(c.reuse_distance_bytes, 3 * 4 + 4 + 4 + 4);  // one iteration of i: C three times, A twice, B
  EXPECT_EQ(access(rows[0], "A").reuse_kind, ReuseKind::Serial);
  EXPECT_EQ(access(rows[0], "A").reuse_count, 2);
  EXPECT_EQ(access(rows[1], "A").reuse_count, 2);
  EXPECT_EQ(access(rows[1], "B").reuse_kind, ReuseKind::None);
}

// allocate T[100] { T[i] = 1 }; for o { allocate L[1] in local { L = 0; for k { L += A[o*8 + k] }; B[o] = L } }
PrimFunc allocating_function() {
  Buffer A("A", DataType::float32(), {32});
  Buffer B("B", DataType::float32(), {4});
  Buffer T("T", DataType::float32(), {100});
  Buffer L("L", DataType::float32(), {1}, "local");
  Var i("i"), o("o"), k("k");
  Stmt fill = allocate(T, make_for(i, 0, 100, ForKind::Serial, store(T, make_const(DataType::float32(), 1.0), {i})));
  Stmt reduce = make_for(k, 0, 8, ForKind::Serial, store(L, load(L, {0}) + load(A, {o * 8 + k}), {0}));
  Stmt per_row = allocate(
      L, seq({store(L, make_const(DataType::float32(), 0.0), {0}), reduce, store(B, load(L, {0}), {Expr(o)})}));
  return PrimFunc{"alloc", {A, B}, seq({fill, make_for(o, 0, 4, ForKind::Serial, per_row)})};
}

TEST(CostModelFeatures, AllocationsAreCountedOnceWithTheirSizes) {
  ProgramFeatures p = extract_program_features(allocating_function());
  EXPECT_EQ(p.allocations.count, 2);
  EXPECT_EQ(p.allocations.total_bytes, 404);
  EXPECT_EQ(p.allocations.max_bytes, 400);
  EXPECT_EQ(p.allocations.local_bytes, 4);
  std::vector<float> v = candidate_features(allocating_function());
  EXPECT_FLOAT_EQ(feature(v, "alloc.count"), std::log2(3.0f));
  EXPECT_FLOAT_EQ(feature(v, "alloc.total_bytes"), std::log2(405.0f));
  EXPECT_FLOAT_EQ(feature(v, "alloc.max_bytes"), std::log2(401.0f));
  EXPECT_FLOAT_EQ(feature(v, "alloc.local_bytes"), std::log2(5.0f));
}

TEST(CostModelFeatures, LoopsAroundAnAllocationCarryNoReuseOfIt) {
  std::vector<StoreFeatures> rows = extract_store_features(allocating_function());
  ASSERT_EQ(rows.size(), 4u);  // T, L = 0, L += A, B
  BufferAccessFeatures l = access(rows[2], "L");
  EXPECT_EQ(l.reuse_kind, ReuseKind::Loop);
  EXPECT_EQ(l.reuse_count, 8);  // the steps of k, not of o as well: each o has its own L
  EXPECT_EQ(l.reuse_distance_iters, 1);
  EXPECT_EQ(access(rows[2], "A").reuse_kind, ReuseKind::None);
  // L = 0 and B[o] = L use L once each in an iteration of o.
  EXPECT_EQ(access(rows[3], "L").reuse_kind, ReuseKind::Serial);
  EXPECT_EQ(access(rows[3], "L").reuse_count, 2);
}

// Under k: 32 flops per run of k over C (4 bytes), A (64) and B (64); under j: 512 flops
// over 16 elements of C, 16 of A and all 256 of B; under i (and the whole function):
// 8192 flops over the three 1 KiB matrices.
TEST(CostModelFeatures, IntensityCurveOfNaiveMatmul) {
  PrimFunc lowered = lower(matmul16());
  ProgramFeatures p = extract_program_features(lowered);
  ASSERT_FALSE(p.heaviest_stores.empty());
  EXPECT_GT(p.stores[p.heaviest_stores[0]].float_fma, 0);
  EXPECT_DOUBLE_EQ(p.intensity_curve[0], 32.0 / 132);
  EXPECT_DOUBLE_EQ(p.intensity_curve[1], 512.0 / 1152);
  for (int point = 2; point < kCurvePoints; ++point) EXPECT_DOUBLE_EQ(p.intensity_curve[point], 8192.0 / 3072);
  std::vector<float> v = candidate_features(lowered);
  EXPECT_FLOAT_EQ(feature(v, "intensity.0"), std::log2(1 + 32.0 / 132));
  EXPECT_FLOAT_EQ(feature(v, "intensity.9"), std::log2(1 + 8192.0 / 3072));
}

// Register blocking raises the intensity of the innermost loop: four unrolled copies of
// the update share their loads of A.
TEST(CostModelFeatures, UnrolledBlockRaisesInnermostIntensity) {
  Schedule s(matmul16());
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  std::vector<LoopRV> j = s.split(loops[1], {std::nullopt, 4});
  s.reorder({loops[0], j[0], loops[2], j[1]});
  s.unroll(j[1]);
  ProgramFeatures blocked = extract_program_features(lower(s.func()));
  ProgramFeatures naive = extract_program_features(lower(matmul16()));
  // A run of k: 4 updates of 32 flops each over 4 elements of C, 16 of A (shared) and
  // 4 x 16 of B: 128 flops over 336 bytes.
  EXPECT_DOUBLE_EQ(blocked.intensity_curve[0], 128.0 / 336);
  EXPECT_GT(blocked.intensity_curve[0], naive.intensity_curve[0]);
  EXPECT_EQ(blocked.stores[blocked.heaviest_stores[0]].copies, 4);
}

// The innermost loop's body is what stays in registers: a 4 x 8 tile of C, vectorized along
// j and unrolled along i inside the k loop, keeps 32 accumulators across k and loads 4
// elements of A and 8 of B per 64 flops; without the unrolled rows the body does 16 flops
// per 9 loads.
TEST(CostModelFeatures, InnerBodyCountsTheRegisterTile) {
  auto tiled = [](bool unroll_rows) {
    Schedule s(matmul16());
    std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
    std::vector<LoopRV> i = s.split(loops[0], {std::nullopt, 4});
    std::vector<LoopRV> j = s.split(loops[1], {std::nullopt, 8});
    if (unroll_rows) {
      s.reorder({i[0], j[0], loops[2], i[1], j[1]});
      s.unroll(i[1]);
    } else {
      s.reorder({i[0], j[0], i[1], loops[2], j[1]});
    }
    s.vectorize(j[1]);
    return extract_program_features(lower(s.func())).inner;
  };
  InnerBodyFeatures tile = tiled(true);
  EXPECT_DOUBLE_EQ(tile.flops, 64);
  EXPECT_DOUBLE_EQ(tile.stored_elements, 32);
  EXPECT_DOUBLE_EQ(tile.loaded_elements, 12);
  EXPECT_DOUBLE_EQ(tile.carried_share, 1);
  EXPECT_DOUBLE_EQ(tile.flops_per_element, 64.0 / 12);
  InnerBodyFeatures row = tiled(false);
  EXPECT_DOUBLE_EQ(row.flops, 16);
  EXPECT_DOUBLE_EQ(row.stored_elements, 8);
  EXPECT_DOUBLE_EQ(row.loaded_elements, 9);
  EXPECT_DOUBLE_EQ(row.flops_per_element, 16.0 / 9);

  // The naive nest's innermost loop (k) moves nothing of C: one accumulator, carried.
  InnerBodyFeatures naive = extract_program_features(lower(matmul16())).inner;
  EXPECT_DOUBLE_EQ(naive.flops, 2);
  EXPECT_DOUBLE_EQ(naive.stored_elements, 1);
  EXPECT_DOUBLE_EQ(naive.carried_share, 1);
  std::vector<float> v = candidate_features(lower(matmul16()));
  EXPECT_FLOAT_EQ(feature(v, "inner.flops_per_element"), std::log2(1 + 2.0 / 2));
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
  EXPECT_EQ(access(row, "A").lines, 4096 * 4 / 64);
  EXPECT_EQ(row.parallel_position, 1);

  std::vector<float> v = candidate_features(lower(s.func()));
  EXPECT_FLOAT_EQ(feature(v, "store0.vector_lanes"), std::log2(9.0f));
  EXPECT_FLOAT_EQ(feature(v, "store0.parallel_extent"), std::log2(65.0f));
  EXPECT_FLOAT_EQ(feature(v, "store0.parallel_loops"), 1.0f);
  EXPECT_FLOAT_EQ(feature(v, "store0.parallel_position"), 1.0f);
  EXPECT_FLOAT_EQ(feature(v, "annot.parallel_loops"), 1.0f);
  EXPECT_FLOAT_EQ(feature(v, "annot.parallel_extent"), std::log2(65.0f));
  EXPECT_FLOAT_EQ(feature(v, "annot.parallel_share"), 1.0f);
  EXPECT_FLOAT_EQ(feature(v, "annot.vector_lanes"), std::log2(9.0f));
  EXPECT_FLOAT_EQ(feature(v, "annot.vector_share"), 1.0f);
  std::vector<float> plain = candidate_features(lower(elementwise_add()));
  EXPECT_FLOAT_EQ(feature(plain, "store0.vector_lanes"), 1.0f);
  EXPECT_FLOAT_EQ(feature(plain, "store0.parallel_loops"), 0.0f);
  EXPECT_FLOAT_EQ(feature(plain, "annot.parallel_share"), 0.0f);
  EXPECT_FLOAT_EQ(feature(plain, "annot.vector_share"), 0.0f);
}

TEST(CostModelFeatures, InnerParallelLoopHasItsPosition) {
  Schedule s(elementwise_add());
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  s.parallel(loops[1]);
  ProgramFeatures p = extract_program_features(lower(s.func()));
  ASSERT_EQ(p.stores.size(), 1u);
  EXPECT_EQ(p.stores[0].parallel_position, 2);
  EXPECT_EQ(p.annotations.parallel_position, 2);
  EXPECT_EQ(p.annotations.parallel_extent, 64);
}

TEST(CostModelFeatures, UnrollPragmaIsTheLargestOnAnEnclosingLoop) {
  Buffer A("A", DataType::float32(), {64});
  Var i("i"), j("j");
  Stmt inner = make_for(j, 0, 8, ForKind::Serial, store(A, make_const(DataType::float32(), 0.0), {i * 8 + j}), "",
                        {{"pragma_auto_unroll_max_step", int64_t{16}}});
  Stmt body = make_for(i, 0, 8, ForKind::Serial, inner, "", {{"pragma_auto_unroll_max_step", int64_t{64}}});
  std::vector<float> v = candidate_features(PrimFunc{"f", {A}, body});
  EXPECT_FLOAT_EQ(feature(v, "store0.unroll_max_step"), std::log2(65.0f));
  EXPECT_FLOAT_EQ(feature(v, "annot.unroll_max_step"), std::log2(65.0f));
}

TEST(CostModelFeatures, UnrolledCopiesKeepTheTotals) {
  Schedule s(elementwise_add());
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  std::vector<LoopRV> j = s.split(loops[1], {std::nullopt, 4});
  s.unroll(j[1]);
  PrimFunc lowered = lower(s.func());
  std::vector<StoreFeatures> rows = extract_store_features(lowered);
  ASSERT_EQ(rows.size(), 4u);
  for (const StoreFeatures& row : rows) {
    EXPECT_EQ(row.loop_product, 1024);
    EXPECT_EQ(row.copies, 4);
  }
  std::vector<float> v = candidate_features(lowered);
  EXPECT_FLOAT_EQ(feature(v, "total.float_add_sub"), std::log2(4097.0f));
  EXPECT_FLOAT_EQ(feature(v, "total.num_stores"), std::log2(5.0f));
  EXPECT_FLOAT_EQ(feature(v, "store0.copies"), std::log2(5.0f));
  // The four copies are one group: the second slot stays empty.
  EXPECT_EQ(feature(v, "store1.loop_product"), 0.0f);
}

TEST(CostModelFeatures, LayoutIsNamedAndFixedLength) {
  const std::vector<std::string>& names = feature_names();
  EXPECT_EQ(names.size(), candidate_features(lower(elementwise_add())).size());
  EXPECT_EQ(names.size(), candidate_features(lower(matmul16())).size());
  EXPECT_EQ(names.size(), 12u + 7u + 4u + kCurvePoints + 5u + kTopStores * (16u + kBufferSlots * 10u));
  EXPECT_EQ(names.size(), 130u);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  EXPECT_EQ(names.front(), "total.float_add_sub");
  EXPECT_EQ(names[23], "intensity.0");
  EXPECT_EQ(names[33], "inner.flops");
  EXPECT_EQ(names.back(), "store1.buf2.reuse_count");
  EXPECT_EQ(kFeatureLayoutVersion, 3);
  // The second store slot of a one-store program is empty.
  std::vector<float> v = candidate_features(lower(elementwise_add()));
  EXPECT_EQ(feature(v, "store1.loop_product"), 0.0f);
  EXPECT_FLOAT_EQ(feature(v, "total.float_add_sub"), std::log2(4097.0f));
}

TEST(CostModelFeatures, ThreadsExtractingAtOnceAgreeWithSerialExtraction) {
  std::unique_ptr<schedule_space::Task> task = schedule_space::Task::create(
      ops::Workload::parse("matmul:M=256,N=256,K=256"), Target::parse("llvm -mcpu=native"));
  Schedule vectorized(elementwise_add());
  std::vector<LoopRV> loops = vectorized.get_loops(vectorized.get_block("C"));
  vectorized.vectorize(vectorized.split(loops[1], {std::nullopt, 8})[1]);
  vectorized.parallel(loops[0]);
  const std::vector<PrimFunc> functions = {lower(elementwise_add()), lower(matmul16()), lower(vectorized.func()),
                                           allocating_function(), lower(task->apply(task->default_config()).func())};
  std::vector<std::vector<float>> serial;
  for (const PrimFunc& f : functions) serial.push_back(candidate_features(f));

  constexpr int kThreads = 4;
  constexpr int kRounds = 20;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        // Each thread walks the functions from another start, so different ones overlap.
        for (size_t n = 0; n < functions.size(); ++n) {
          size_t f = (n + t) % functions.size();
          if (candidate_features(functions[f]) != serial[f]) ++mismatches[t];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
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
