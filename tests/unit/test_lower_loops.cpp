// The loop passes: guard_padded_taps and hoist_guards, partition_loops, vectorize_loops,
// unroll_loops.
#include <gtest/gtest.h>

#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/lower/guard_padded_taps.h"
#include "compiler/lower/hoist_guards.h"
#include "compiler/lower/partition_loops.h"
#include "compiler/lower/simplify.h"
#include "compiler/lower/unroll_loops.h"
#include "compiler/lower/vectorize_loops.h"
#include "unit/test_lower_builders.h"

namespace temper {
namespace {

using test::expect_same_results;

// B[i] = A[i] * 2 for i < 100, with i split by 8: a tail predicate.
PrimFunc split_scale(ForKind inner_kind) {
  Buffer A("A", DataType::float32(), {100});
  Buffer B("B", DataType::float32(), {100});
  Var io("io"), ii("ii");
  Expr i = io * 8 + ii;
  Stmt body = make_for(io, 0, 13, ForKind::Parallel,
                       make_for(ii, 0, 8, inner_kind, if_then_else(i < 100, store(B, load(A, {i}) * 2.0f, {i}))));
  return PrimFunc{"scale", {A, B}, body};
}

// A 1-D conv of 7 outputs, a 3-tap window and inlined padding of 1 on both sides, for 2
// rows (the guard's other variable): out[y][o] += pad(in)[y + r - 1][o + s - 1] * w[s].
// The innermost loop runs over a 4-lane channel vector (kind: vectorized or serial).
PrimFunc padded_conv(ForKind lane_kind, bool lane_in_guard = false) {
  Buffer in("in", DataType::float32(), {2, 7, 4});
  Buffer w("w", DataType::float32(), {3, 4});
  Buffer out("out", DataType::float32(), {2, 7, 4});
  Var y("y"), r("r"), o("o"), s("s"), c("c");
  Expr row = y + r - 1, col = o + s - 1;
  Expr inside = row >= 0 && row < 2 && col >= 0 && col < 7;
  if (lane_in_guard) inside = inside && c < 3;
  Expr tap = select(inside, load(in, {min(max(row, 0), 1), min(max(col, 0), 6), c}), 0.0f);
  Stmt acc = store(out, load(out, {y, o, c}) + tap * load(w, {s, c}), {y, o, c});
  Stmt body = make_for(y, 0, 2, ForKind::Parallel,
                       make_for(r, 0, 3, ForKind::Serial,
                                make_for(s, 0, 3, ForKind::Serial,
                                         make_for(o, 0, 7, ForKind::Serial, make_for(c, 0, 4, lane_kind, acc)))));
  return PrimFunc{"conv", {in, w, out}, body};
}

int count_nodes(const PrimFunc& f, NodeKind kind) {
  int n = 0;
  post_order_visit(f.body, [&](const Node* node) { n += node->kind == kind; });
  return n;
}

TEST(GuardPaddedTaps, AZeroPaddedTapBecomesAGuardedAccumulation) {
  PrimFunc f = padded_conv(ForKind::Vectorized);
  PrimFunc g = guard_padded_taps(f);
  EXPECT_EQ(count_nodes(g, NodeKind::Select), 0) << g;
  EXPECT_EQ(count_nodes(g, NodeKind::IfThenElse), 1) << g;
  verify(g, "guard_padded_taps");
  expect_same_results(f, g);
}

TEST(GuardPaddedTaps, AGuardPerLaneOrReadingABufferStaysASelect) {
  PrimFunc per_lane = padded_conv(ForKind::Vectorized, /*lane_in_guard=*/true);
  EXPECT_TRUE(guard_padded_taps(per_lane).body.same_as(per_lane.body));
  // Serial lanes: the same guard is an ordinary branch.
  PrimFunc serial = padded_conv(ForKind::Serial, /*lane_in_guard=*/true);
  EXPECT_EQ(count_nodes(guard_padded_taps(serial), NodeKind::Select), 0);
  // A guard that reads a buffer, and a select whose other value is not zero.
  Buffer a("a", DataType::float32(), {4});
  Buffer m("m", DataType::int32(), {4});
  Var i("i");
  Stmt loaded = store(a, load(a, {i}) + select(load(m, {i}) > 0, 2.0f, 0.0f), {i});
  Stmt nonzero = store(a, load(a, {i}) + select(i > 1, 2.0f, 1.0f), {i});
  PrimFunc h{"h", {a, m}, make_for(i, 0, 4, ForKind::Serial, seq({loaded, nonzero}))};
  EXPECT_TRUE(guard_padded_taps(h).body.same_as(h.body));
}

TEST(HoistGuards, GuardsLeaveTheLoopsTheyDoNotDependOnAndMerge) {
  PrimFunc f = padded_conv(ForKind::Vectorized);
  PrimFunc g = hoist_guards(guard_padded_taps(f));
  // Above the lanes, below the column loop whose variable the guard reads.
  EXPECT_EQ(to_string(g.body),
            "parallel for (y, 0, 2) {\n"
            "  for (r, 0, 3) {\n"
            "    for (s, 0, 3) {\n"
            "      for (o, 0, 7) {\n"
            "        if (y + r - 1 >= 0 && y + r - 1 < 2 && o + s - 1 >= 0 && o + s - 1 < 7) {\n"
            "          vectorized for (c, 0, 4) {\n"
            "            out[y, o, c] = out[y, o, c] + in[min(max(y + r - 1, 0), 1), min(max(o + s - 1, 0), 6), c] "
            "* w[s, c]\n"
            "          }\n"
            "        }\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "}\n");
  expect_same_results(f, g);
  // Partitioning then splits the window's column loops where the guard is decided, and
  // the taps in the padded columns are gone; the rows' guard stays, one per window row
  // (the parallel loop is not split: its first row would run on one thread).
  PrimFunc p = hoist_guards(simplify(partition_loops(simplify(g))));
  verify(p, "partition_loops");
  EXPECT_EQ(count_nodes(p, NodeKind::Select), 0) << p;
  auto* rows = p.body.as<ForNode>();
  ASSERT_TRUE(rows && rows->for_kind == ForKind::Parallel) << p;
  auto* window_row = rows->body.as<ForNode>();
  ASSERT_TRUE(window_row && window_row->body.as<IfThenElseNode>()) << p;
  EXPECT_EQ(count_nodes(p, NodeKind::IfThenElse), 1) << p;
  expect_same_results(f, p);
  // Neighbouring guards of one condition merge, and the merged guard leaves the loop.
  Buffer a("a", DataType::float32(), {4});
  Var i("i"), k("k");
  Stmt twice = make_for(i, 0, 4, ForKind::Serial,
                        seq({if_then_else(k > 1, store(a, 1.0f, {i})), if_then_else(k > 1, store(a, 2.0f, {i}))}));
  PrimFunc h{"h", {a}, make_for(k, 0, 3, ForKind::Serial, twice)};
  EXPECT_EQ(to_string(hoist_guards(h).body),
            "for (k, 0, 3) {\n"
            "  if (k > 1) {\n"
            "    for (i, 0, 4) {\n"
            "      a[i] = 1.0f\n"
            "      a[i] = 2.0f\n"
            "    }\n"
            "  }\n"
            "}\n");
  expect_same_results(h, hoist_guards(h));
}

TEST(HoistGuards, AGuardReadingABufferStays) {
  Buffer a("a", DataType::float32(), {4});
  Buffer m("m", DataType::int32(), {1});
  Var i("i");
  Stmt body = make_for(i, 0, 4, ForKind::Serial, if_then_else(load(m, {0}) > 0, store(m, 0, {0})));
  PrimFunc f{"f", {a, m}, body};
  EXPECT_TRUE(hoist_guards(f).body.same_as(f.body));
}

TEST(PartitionLoops, SplitsATailPredicateIntoMainAndTail) {
  PrimFunc f = split_scale(ForKind::Serial);
  PrimFunc g = partition_loops(f);
  EXPECT_EQ(to_string(g),
            "func scale(A: float32[100], B: float32[100]) {\n"
            "  parallel for (io, 0, 12) {\n"
            "    for (ii, 0, 8) {\n"
            "      B[io * 8 + ii] = A[io * 8 + ii] * 2.0f\n"
            "    }\n"
            "  }\n"
            "  parallel for (io_1, 12, 1) {\n"
            "    for (ii, 0, 4) {\n"
            "      B[io_1 * 8 + ii] = A[io_1 * 8 + ii] * 2.0f\n"
            "    }\n"
            "  }\n"
            "}\n");  // the tail's ii = 4..7, where the guard never holds, is gone
  verify(g, "partition_loops");
  expect_same_results(f, g);
  // The simplifier then folds the one-iteration tail.
  EXPECT_EQ(to_string(simplify(g).body),
            "parallel for (io, 0, 12) {\n"
            "  for (ii, 0, 8) {\n"
            "    B[io * 8 + ii] = A[io * 8 + ii] * 2.0f\n"
            "  }\n"
            "}\n"
            "for (ii, 0, 4) {\n"
            "  B[ii + 96] = A[ii + 96] * 2.0f\n"
            "}\n");
}

TEST(PartitionLoops, SplitsALowerBoundGuardIntoHeadAndMain) {
  Buffer A("A", DataType::float32(), {16});
  Var i("i"), j("j");
  // Padding-like: only i*4 + j >= 3 is written.
  Stmt body = make_for(i, 0, 4, ForKind::Serial,
                       make_for(j, 0, 4, ForKind::Serial, if_then_else(i * 4 + j >= 3, store(A, 1.0f, {i * 4 + j}))));
  PrimFunc f{"f", {A}, body};
  PrimFunc g = partition_loops(f);
  // In the head, j = 0..2 never writes (the guard holds nowhere there) and is dropped.
  EXPECT_EQ(to_string(g.body),
            "for (i, 0, 1) {\n"
            "  for (j, 3, 1) {\n"
            "    A[i * 4 + j] = 1.0f\n"
            "  }\n"
            "}\n"
            "for (i_1, 1, 3) {\n"
            "  for (j, 0, 4) {\n"
            "    A[i_1 * 4 + j] = 1.0f\n"
            "  }\n"
            "}\n");
  verify(g, "partition_loops");
  expect_same_results(f, g);
}

TEST(PartitionLoops, DropsTheRangeWhereAGuardHoldsNowhere) {
  // A tile of two 16-lane vectors over the last 8 columns: vector 1 writes nothing, and
  // vector 0's lanes split at 8, so both vectorize (a serial loop with the guard would not).
  Buffer A("A", DataType::float32(), {32});
  Var jo("jo"), ji("ji");
  Stmt body = make_for(jo, 0, 2, ForKind::Serial,
                       make_for(ji, 0, 16, ForKind::Serial,
                                if_then_else(jo * 16 + ji < 8, store(A, 1.0f, {jo * 16 + ji}))));
  PrimFunc f{"f", {A}, body};
  PrimFunc g = partition_loops(f);
  EXPECT_EQ(to_string(simplify(g).body),
            "for (ji, 0, 8) {\n"
            "  A[ji] = 1.0f\n"
            "}\n");
  verify(g, "partition_loops");
  expect_same_results(f, g);
}

TEST(PartitionLoops, KeepsThePredicateWhereBoundsAreNotConstant) {
  Var n("n");
  Buffer A("A", DataType::float32(), {n});
  Var io("io"), ii("ii"), k("k");
  Stmt symbolic =
      make_for(io, 0, floordiv(n + 7, 8), ForKind::Serial,
               make_for(ii, 0, 8, ForKind::Serial, if_then_else(io * 8 + ii < n, store(A, 0.0f, {io * 8 + ii}))));
  // Not linear in the loop variable: floormod.
  Stmt nonlinear = make_for(k, 0, 16, ForKind::Serial, if_then_else(floormod(k, 3) < 2, store(A, 1.0f, {k})));
  PrimFunc f{"f", {A}, seq({symbolic, nonlinear})};
  PrimFunc g = partition_loops(f);
  EXPECT_TRUE(g.body.same_as(f.body)) << g;
}

TEST(VectorizeLoops, LoopVariableBecomesARamp) {
  Buffer A("A", DataType::float32(), {4, 8});
  Buffer B("B", DataType::float32(), {4, 8});
  Var i("i"), v("v"), t("t", DataType::float32());
  Stmt body =
      make_for(i, 0, 4, ForKind::Serial,
               make_for(v, 0, 8, ForKind::Vectorized,
                        let_stmt(t, load(A, {i * 8 + v}) * 2.0f, store(B, max(t, load(A, {i * 8})), {i * 8 + v}))));
  PrimFunc f{"f", {A, B}, body};
  PrimFunc g = vectorize_loops(f);
  EXPECT_EQ(to_string(g.body),
            "for (i, 0, 4) {\n"
            "  let t = A[broadcast(i * 8, 8) + ramp(0, 1, 8)] * broadcast(2.0f, 8)\n"
            "  B[broadcast(i * 8, 8) + ramp(0, 1, 8)] = max(t, broadcast(A[i * 8], 8))\n"
            "}\n");
  verify_lowered(g, "vectorize_loops");
  EXPECT_EQ(to_string(simplify(g).body),
            "for (i, 0, 4) {\n"
            "  let t = A[ramp(i * 8, 1, 8)] * broadcast(2.0f, 8)\n"
            "  B[ramp(i * 8, 1, 8)] = max(t, broadcast(A[i * 8], 8))\n"
            "}\n");
  expect_same_results(f, g);
}

TEST(VectorizeLoops, VectorizesThroughInnerLoopsAndInvariantConditions) {
  Buffer A("A", DataType::float32(), {4});
  Buffer B("B", DataType::float32(), {4, 8});
  Buffer C("C", DataType::float32(), {8});
  Var v("v"), k("k");
  Stmt body = make_for(v, 0, 8, ForKind::Vectorized,
                       make_for(k, 0, 4, ForKind::Serial,
                                seq({if_then_else(k == 0, store(C, 0.0f, {v})),
                                     store(C, load(C, {v}) + load(A, {k}) * load(B, {k * 8 + v}), {v})})));
  PrimFunc f{"f", {A, B, C}, body};
  PrimFunc g = simplify(vectorize_loops(f));
  EXPECT_EQ(to_string(g.body),
            "for (k, 0, 4) {\n"
            "  if (k == 0) {\n"
            "    C[ramp(0, 1, 8)] = broadcast(0.0f, 8)\n"
            "  }\n"
            "  C[ramp(0, 1, 8)] = C[ramp(0, 1, 8)] + broadcast(A[k], 8) * B[ramp(k * 8, 1, 8)]\n"
            "}\n");
  expect_same_results(f, g);
}

// Each case that cannot be vectorized stays a serial loop and says why.
struct Unvectorizable {
  const char* name;
  std::function<Stmt(const Buffer&, const Buffer&, const Var&)> body;
  const char* reason;
};

TEST(VectorizeLoops, WhatCannotBeVectorizedStaysSerialWithAWarning) {
  Buffer A("A", DataType::float32(), {9});
  Buffer B("B", DataType::float32(), {9});
  std::vector<Unvectorizable> cases = {
      {"guard",
       [](const Buffer& a, const Buffer& b, const Var& v) { return if_then_else(v < 5, store(b, load(a, {v}), {v})); },
       "the condition v < 5 depends on v (masked stores are not supported)"},
      {"reduction",
       [](const Buffer& a, const Buffer& b, const Var& v) { return store(b, load(b, {0}) + load(a, {v}), {0}); },
       "the store into B has an index that does not depend on v (a reduction across lanes)"},
      {"allocation",
       [](const Buffer& a, const Buffer& b, const Var& v) {
         Buffer t("T", DataType::float32(), {1});
         return allocate(t, seq({store(t, load(a, {v}), {0}), store(b, load(t, {0}), {v})}));
       },
       "the allocation of T inside it would need a copy per lane"},
      {"shifted", [](const Buffer& a, const Buffer& b, const Var& v) { return store(a, load(a, {v}) + 1.0f, {v + 1}); },
       "buffer A is stored and accessed at different indices"},
      {"extern",
       [](const Buffer& a, const Buffer& b, const Var& v) {
         return store(b, call_extern(DataType::float32(), "f", {load(a, {v})}), {v});
       },
       "call to f would need vector arguments"},
  };
  for (const Unvectorizable& c : cases) {
    Var v("v");
    PrimFunc f{"f", {A, B}, make_for(v, 0, 8, ForKind::Vectorized, c.body(A, B, v))};
    ::testing::internal::CaptureStderr();
    PrimFunc g = vectorize_loops(f);
    std::string warning = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(warning.find(std::string("loop v cannot be vectorized: ") + c.reason), std::string::npos)
        << c.name << ": " << warning;
    auto* loop = g.body.as<ForNode>();
    ASSERT_TRUE(loop) << c.name;
    EXPECT_EQ(loop->for_kind, ForKind::Serial) << c.name;
    EXPECT_TRUE(loop->body.same_as(f.body.as<ForNode>()->body)) << c.name;
  }
}

// A tuning job compiles many candidates with the same unvectorizable loop: the warning is
// printed once per process, not once per candidate.
TEST(VectorizeLoops, ARepeatedWarningIsPrintedOnce) {
  Buffer A("A", DataType::float32(), {9});
  Buffer B("B", DataType::float32(), {9});
  Var v("v");
  PrimFunc f{
      "repeated", {A, B}, make_for(v, 0, 8, ForKind::Vectorized, if_then_else(v < 5, store(B, load(A, {v}), {v})))};
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i) vectorize_loops(f);
  std::string warnings = ::testing::internal::GetCapturedStderr();
  size_t first = warnings.find("in repeated, loop v cannot be vectorized");
  ASSERT_NE(first, std::string::npos) << warnings;
  EXPECT_EQ(warnings.find("in repeated, loop v cannot be vectorized", first + 1), std::string::npos) << warnings;
}

TEST(UnrollLoops, UnrolledLoopsAreExpanded) {
  Buffer A("A", DataType::float32(), {3});
  Var i("i");
  PrimFunc f{"f", {A}, make_for(i, 1, 2, ForKind::Unrolled, store(A, cast(DataType::float32(), i), {i}))};
  EXPECT_EQ(to_string(unroll_loops(f).body),
            "A[1] = float32(1)\n"
            "A[2] = float32(2)\n");
  EXPECT_EQ(to_string(simplify(unroll_loops(f)).body),
            "A[1] = 1.0f\n"
            "A[2] = 2.0f\n");
}

TEST(UnrollLoops, AutoUnrollUnrollsLoopsWhoseStepCountFits) {
  Buffer A("A", DataType::float32(), {16, 8});
  Var i("i"), j("j"), k("k");
  Stmt inner = make_for(j, 0, 2, ForKind::Serial, make_for(k, 0, 4, ForKind::Serial, store(A, 0.0f, {i, j * 4 + k})));
  PrimFunc f{"f", {A}, make_for(i, 0, 16, ForKind::Serial, inner, "", {{kAutoUnrollMaxStep, int64_t{8}}})};
  PrimFunc g = simplify(unroll_loops(f));
  EXPECT_EQ(to_string(g.body),
            "for (i, 0, 16) {\n"
            "  A[i, 0] = 0.0f\n"
            "  A[i, 1] = 0.0f\n"
            "  A[i, 2] = 0.0f\n"
            "  A[i, 3] = 0.0f\n"
            "  A[i, 4] = 0.0f\n"
            "  A[i, 5] = 0.0f\n"
            "  A[i, 6] = 0.0f\n"
            "  A[i, 7] = 0.0f\n"
            "}\n");
  // With a limit of 4 only the k loop fits.
  PrimFunc h = unroll_loops(
      PrimFunc{"f", {A}, make_for(i, 0, 16, ForKind::Serial, inner, "", {{kAutoUnrollMaxStep, int64_t{4}}})});
  EXPECT_EQ(to_string(simplify(h).body),
            "for (i, 0, 16) {\n"
            "  for (j, 0, 2) {\n"
            "    A[i, j * 4] = 0.0f\n"
            "    A[i, j * 4 + 1] = 0.0f\n"
            "    A[i, j * 4 + 2] = 0.0f\n"
            "    A[i, j * 4 + 3] = 0.0f\n"
            "  }\n"
            "}\n");
  expect_same_results(f, g);
}

TEST(UnrollLoops, NonConstantExtentStaysSerialWithAWarning) {
  Var n("n");
  Buffer A("A", DataType::float32(), {n});
  Var i("i");
  PrimFunc f{"f", {A}, make_for(i, 0, n, ForKind::Unrolled, store(A, 0.0f, {i}))};
  ::testing::internal::CaptureStderr();
  PrimFunc g = unroll_loops(f);
  std::string warning = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warning.find("loop i has the non-constant extent n and cannot be unrolled"), std::string::npos) << warning;
  EXPECT_EQ(g.body.as<ForNode>()->for_kind, ForKind::Serial);
}

}  // namespace
}  // namespace temper
