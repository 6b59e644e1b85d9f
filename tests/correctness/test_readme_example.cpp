// The library example in README.md, as written there, compiles and computes a matmul.
#include <gtest/gtest.h>

#include "compiler/codegen/build.h"
#include "compiler/schedule/schedule.h"
#include "compiler/te/te.h"

namespace temper {
namespace {

TEST(ReadmeExample, ScheduledMatmulRuns) {
  te::Tensor A = te::placeholder({512, 512}, DataType::float32(), "A");
  te::Tensor B = te::placeholder({512, 512}, DataType::float32(), "B");
  IterVar k = te::reduce_axis({0, 512}, "k");
  te::Tensor C = te::compute({512, 512}, [&](Var i, Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");

  Schedule s(te::create_prim_func({A, B, C}, "matmul"));
  BlockRV c = s.get_block("C");
  std::vector<LoopRV> l = s.get_loops(c);
  std::vector<LoopRV> i = s.split(l[0], {std::nullopt, 8});
  s.parallel(i[0]);
  BuildResult built = build({s.func()}, Target::parse("llvm -mcpu=native"));
  PackedFunc f = built.module->get_function("matmul");

  NDArray a = NDArray::random({512, 512}, DataType::float32(), 1);
  NDArray b = NDArray::random({512, 512}, DataType::float32(), 2);
  NDArray out = NDArray::zeros({512, 512}, DataType::float32());
  f({&a, &b, &out});
  for (int64_t row : {0, 77, 511}) {
    for (int64_t col : {0, 300, 511}) {
      double expected = 0;
      for (int64_t x = 0; x < 512; ++x) expected += a.get(row * 512 + x) * b.get(x * 512 + col);
      EXPECT_NEAR(out.get(row * 512 + col), expected, 1e-3) << "C[" << row << ", " << col << "]";
    }
  }
}

}  // namespace
}  // namespace temper
