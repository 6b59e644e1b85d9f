// Illegal schedule steps and malformed traces must fail with a message that names what
// is wrong, and leave the schedule as it was.
#include <gtest/gtest.h>

#include "unit/test_schedule_workloads.h"

namespace temper {
namespace {

using testing::text;

// Runs fn, expects an exception of type E whose message contains every one of words.
template <typename E, typename Fn>
void expect_error(Fn fn, std::initializer_list<const char*> words) {
  try {
    fn();
    ADD_FAILURE() << "no error was thrown";
  } catch (const E& e) {
    std::string msg = e.what();
    for (const char* w : words) EXPECT_NE(msg.find(w), std::string::npos) << "'" << w << "' not in: " << msg;
  }
}

// B = A * 2, C = B + 1 (outputs C and D), D = A * 3: D's loops do not enclose B's consumer.
PrimFunc two_outputs() {
  te::Tensor a = te::placeholder({8, 8}, DataType::float32(), "A");
  te::Tensor b = te::compute(
      {8, 8}, [&](Var i, Var j) { return a(i, j) * 2.0f; }, "B");
  te::Tensor c = te::compute(
      {8, 8}, [&](Var i, Var j) { return b(i, j) + 1.0f; }, "C");
  te::Tensor d = te::compute(
      {8, 8}, [&](Var i, Var j) { return a(i, j) * 3.0f; }, "D");
  return te::create_prim_func({a, c, d}, "two_outputs");
}

// C[i, j] = sum_k A[i, k] * B[j, k]: B is read transposed.
PrimFunc matmul_nt(int m, int n, int k) {
  te::Tensor a = te::placeholder({m, k}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({n, k}, DataType::float32(), "B");
  IterVar r = te::reduce_axis({0, k}, "k");
  te::Tensor c = te::compute(
      {m, n}, [&](Var i, Var j) { return te::sum(a(i, r) * b(j, r), {r}); }, "C");
  return te::create_prim_func({a, b, c}, "matmul_nt");
}

TEST(ScheduleErrors, SplitByZero) {
  Schedule s(testing::scale_add(16, 8));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("B"));
  std::string before = text(s);
  size_t steps = s.trace().instructions().size();
  expect_error<ScheduleError>([&] { s.split(loops[0], {0, std::nullopt}); }, {"split", "loop i", "is 0", "positive"});
  expect_error<ScheduleError>([&] { s.split(loops[0], {-3, 4}); }, {"is -3", "positive"});
  EXPECT_EQ(text(s), before);
  EXPECT_EQ(s.trace().instructions().size(), steps);
}

TEST(ScheduleErrors, SplitThatLeavesATailWhenNoneIsAllowed) {
  Schedule s(testing::scale_add(10, 8));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("B"));
  expect_error<ScheduleError>(
      [&] {
        s.split(loops[0], {std::nullopt, 4}, /*allow_tail=*/false);
      },
      {"do not divide", "extent 10", "loop i"});
  expect_error<ScheduleError>([&] { s.split(loops[1], {2, 3}); }, {"multiply to 6", "less than the extent 8"});
  expect_error<ScheduleError>([&] { s.split(loops[1], {std::nullopt, std::nullopt}); }, {"two factors to infer"});
}

TEST(ScheduleErrors, ReorderAcrossANonPerfectNest) {
  Schedule s(testing::matmul_relu(16, 8, 4));
  std::vector<LoopRV> d = s.get_loops(s.get_block("D"));
  s.compute_at(s.get_block("C"), d[1]);
  std::vector<LoopRV> c = s.get_loops(s.get_block("C"));  // i, j, ax0
  expect_error<ScheduleError>(
      [&] {
        s.reorder({c[2], c[0]});
      },
      {"reorder across a non-perfect nest", "loop j", "block D"});
}

TEST(ScheduleErrors, ReorderLoopsOfDifferentNests) {
  Schedule s(testing::scale_add(16, 8));
  std::vector<LoopRV> b = s.get_loops(s.get_block("B"));
  std::vector<LoopRV> c = s.get_loops(s.get_block("C"));
  expect_error<ScheduleError>([&] { s.reorder({b[1], c[0]}); }, {"not nested"});
  expect_error<ScheduleError>([&] { s.reorder({b[1], b[1]}); }, {"given twice"});
}

TEST(ScheduleErrors, VectorizeOrParallelizeAReductionLoop) {
  Schedule s(testing::matmul(16, 8, 4));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  expect_error<ScheduleError>([&] { s.vectorize(loops[2]); },
                              {"vectorize", "loop k", "reduction variable vk", "cannot vectorize a reduction loop"});
  expect_error<ScheduleError>([&] { s.parallel(loops[2]); }, {"parallel", "reduction"});
}

TEST(ScheduleErrors, ComputeAtALoopThatEnclosesNoConsumer) {
  Schedule s(two_outputs());
  BlockRV b = s.get_block("B");
  std::vector<LoopRV> d = s.get_loops(s.get_block("D"));
  expect_error<ScheduleError>([&] { s.compute_at(b, d[1]); },
                              {"compute_at", "loop j", "not an ancestor of any consumer of block B", "C"});
  expect_error<ScheduleError>([&] { s.compute_at(b, s.get_loops(b)[0]); }, {"loop of block B itself"});
}

TEST(ScheduleErrors, ReverseComputeAtALoopWithoutProducer) {
  Schedule s(two_outputs());
  std::vector<LoopRV> d = s.get_loops(s.get_block("D"));
  expect_error<ScheduleError>([&] { s.reverse_compute_at(s.get_block("C"), d[0]); },
                              {"not an ancestor of any producer of block C"});
}

// The consumer of a reduction moved under one of its reduction loops, or under a loop
// inside one, would read partial sums.
TEST(ScheduleErrors, ReverseComputeAtUnderAReductionLoop) {
  Schedule s(testing::matmul_relu(16, 8, 4));
  std::string before = text(s);
  BlockRV c = s.get_block("C");
  std::vector<LoopRV> loops = s.get_loops(c);  // i, j, k
  expect_error<ScheduleError>([&] { s.reverse_compute_at(s.get_block("D"), loops[2]); },
                              {"reverse_compute_at", "loop k is a reduction loop of block C", "partial results"});
  EXPECT_EQ(text(s), before);
  s.reorder({loops[2], loops[0], loops[1]});
  expect_error<ScheduleError>([&] { s.reverse_compute_at(s.get_block("D"), loops[1]); },
                              {"loop k is a reduction loop of block C"});
  s.reorder({loops[0], loops[2], loops[1]});
  s.reverse_compute_at(s.get_block("D"), loops[0]);  // outside k: allowed
}

TEST(ScheduleErrors, ComputeInlineOfAReductionOrAnOutput) {
  Schedule s(testing::matmul_relu(16, 8, 4));
  expect_error<ScheduleError>([&] { s.compute_inline(s.get_block("C")); },
                              {"compute_inline", "block C is a reduction"});
  expect_error<ScheduleError>([&] { s.compute_inline(s.get_block("D")); }, {"output of function matmul_relu"});
}

TEST(ScheduleErrors, TensorizeMismatch) {
  Schedule transposed = testing::gemm_tiles(matmul_nt(12, 64, 8), 6, 32);
  std::string before = text(transposed);
  expect_error<ScheduleError>(
      [&] { transposed.tensorize(transposed.get_loops(transposed.get_block("C"))[2], "sgemm_6x32"); },
      {"does not match intrinsic sgemm_6x32", "index 0 of B is vj", "where the intrinsic has vk"});
  EXPECT_EQ(text(transposed), before);

  Schedule wide = testing::gemm_tiles(testing::matmul(16, 64, 8), 8, 32);
  expect_error<ScheduleError>([&] { wide.tensorize(wide.get_loops(wide.get_block("C"))[2], "sgemm_6x32"); },
                              {"loop i_i", "has extent 8 where the intrinsic needs 6"});

  Schedule with_init = testing::gemm_tiles(testing::matmul(12, 64, 8), 6, 32, /*decompose=*/false);
  expect_error<ScheduleError>(
      [&] { with_init.tensorize(with_init.get_loops(with_init.get_block("C"))[2], "sgemm_6x32"); },
      {"still has its init statement", "decompose_reduction"});
  expect_error<ScheduleError>([&] { with_init.tensorize(with_init.get_loops(with_init.get_block("C"))[2], "hgemm"); },
                              {"no tensor intrinsic named 'hgemm'", "sgemm_6x32"});
}

TEST(ScheduleErrors, LoopReplacedByAPrimitive) {
  Schedule s(testing::scale_add(16, 8));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("B"));
  s.split(loops[0], {std::nullopt, 4});
  expect_error<ScheduleError>([&] { s.parallel(loops[0]); }, {"parallel", "loop i no longer exists"});
  expect_error<ScheduleError>([&] { s.get_block("E"); }, {"no block named E", "B, C"});
}

TEST(ScheduleErrors, FailedTileLeavesTheScheduleUnchanged) {
  Schedule s(testing::scale_add(16, 8));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("B"));
  std::string before = text(s);
  size_t steps = s.trace().instructions().size();
  expect_error<ScheduleError>([&] { s.tile(loops, {4, 0}); }, {"split", "loop j", "positive"});
  EXPECT_EQ(text(s), before);
  EXPECT_EQ(s.trace().instructions().size(), steps);
  s.tile(loops, {4, 4});  // the loops are still there
}

TEST(ScheduleErrors, ReductionPrimitivesOnTheWrongLoop) {
  Schedule s(testing::matmul(16, 8, 4));
  BlockRV c = s.get_block("C");
  std::vector<LoopRV> loops = s.get_loops(c);
  expect_error<ScheduleError>([&] { s.rfactor(loops[0], 0); }, {"rfactor", "loop i binds a spatial variable"});
  expect_error<ScheduleError>([&] { s.rfactor(loops[2], 3); }, {"factor_axis 3 is out of range"});
  s.reorder({loops[2], loops[0]});  // k, j, i
  expect_error<ScheduleError>([&] { s.decompose_reduction(c, loops[1]); },
                              {"decompose_reduction", "loop k above loop j binds a reduction variable"});
}

TEST(ScheduleErrors, BadArguments) {
  Schedule s(testing::matmul(16, 8, 4));
  BlockRV c = s.get_block("C");
  std::vector<LoopRV> loops = s.get_loops(c);
  expect_error<ScheduleError>([&] { s.cache_read(c, 3, "shared"); }, {"cache_read", "read index 3 is out of range"});
  expect_error<ScheduleError>([&] { s.cache_write(c, 0, "texture"); }, {"unknown storage scope 'texture'"});
  expect_error<ScheduleError>([&] { s.bind(loops[0], "threadIdx.w"); }, {"unknown thread axis 'threadIdx.w'"});
  expect_error<ScheduleError>(
      [&] {
        s.fuse({loops[0], loops[2]});
      },
      {"fuse", "loop k is not the whole body of loop i"});
  expect_error<ScheduleError>(
      [&] {
        s.sample_perfect_tile(loops[0], 2, 8, std::vector<int64_t>{3, 5});
      },
      {"decision [3, 5]", "extent 16"});
  expect_error<ScheduleError>([&] { s.sample_categorical({1, 2}, {0.5}); }, {"one probability per candidate"});
}

// A small valid trace to break in different ways.
nlohmann::json valid_trace() {
  Schedule s(testing::scale_add(16, 8));
  std::vector<LoopRV> loops = s.get_loops(s.get_block("C"));
  std::vector<ExprRV> tiles = s.sample_perfect_tile(loops[0], 2, 8);
  std::vector<LoopRV> parts = s.split(loops[0], {tiles[0], tiles[1]});
  s.compute_at(s.get_block("B"), parts[0]);
  return s.trace().to_json();
}

TEST(ScheduleErrors, MalformedTraceJson) {
  ASSERT_NO_THROW(Trace::from_json(valid_trace()));
  nlohmann::json j = valid_trace();
  j["instructions"][3]["kind"] = "Splitt";
  expect_error<UserError>([&] { Trace::from_json(j); },
                          {"malformed trace", "instruction 3", "unknown instruction kind 'Splitt'"});

  j = valid_trace();
  j["instructions"][3].erase("inputs");
  expect_error<UserError>([&] { Trace::from_json(j); }, {"instruction 3 (Split)", "field 'inputs' is missing"});

  j = valid_trace();
  j["instructions"][3]["inputs"][0] = "l99";
  expect_error<UserError>([&] { Trace::from_json(j); }, {"instruction 3 (Split)", "input l99 is not defined"});

  j = valid_trace();
  j["instructions"][3]["inputs"][0] = "b0";  // a block where a loop belongs
  expect_error<UserError>([&] { Trace::from_json(j); }, {"instruction 3 (Split)", "inputs do not have the form"});

  j = valid_trace();
  j["instructions"][3]["inputs"][0] = "loop1";
  expect_error<UserError>([&] { Trace::from_json(j); }, {"\"loop1\" is not a random variable"});

  j = valid_trace();
  j["instructions"][2].erase("decision");
  expect_error<UserError>([&] { Trace::from_json(j); }, {"instruction 2 (SamplePerfectTile)", "'decision' is missing"});

  j = valid_trace();
  j["instructions"][4]["outputs"][0] = "b2";  // clashes with loop l2
  expect_error<UserError>([&] { Trace::from_json(j); }, {"instruction 4 (GetBlock)", "output b2 reuses id 2"});

  j = valid_trace();
  j["version"] = 2;
  expect_error<UserError>([&] { Trace::from_json(j); }, {"'version'"});
  expect_error<UserError>([&] { Trace::from_json(nlohmann::json::array()); }, {"malformed trace"});
}

TEST(ScheduleErrors, ReplayOnAnotherWorkloadOrWithABadDecision) {
  Trace t = Trace::from_json(valid_trace());
  expect_error<ScheduleError>(
      [&] { t.replay(testing::matmul(16, 8, 4)); },
      {"replaying trace instruction 1 (GetLoops)", "produced 3 random variables where the trace has 2"});
  expect_error<ScheduleError>(
      [&] {
        t.with_decision(2, {3, 5}).replay(testing::scale_add(16, 8));
      },
      {"instruction 2 (SamplePerfectTile)", "decision [3, 5]"});
  expect_error<UserError>([&] { t.with_decision(3, {4, 4}); }, {"instruction 3 (Split) samples nothing"});
}

}  // namespace
}  // namespace temper
