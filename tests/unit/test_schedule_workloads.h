// Small te workloads that the schedule and lowering tests transform.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/printer.h"
#include "compiler/schedule/schedule.h"
#include "compiler/te/te.h"

namespace temper::testing {

// C[i, j] = sum_k A[i, k] * B[k, j]
inline PrimFunc matmul(int m, int n, int k) {
  te::Tensor a = te::placeholder({m, k}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({k, n}, DataType::float32(), "B");
  IterVar r = te::reduce_axis({0, k}, "k");
  te::Tensor c = te::compute(
      {m, n}, [&](Var i, Var j) { return te::sum(a(i, r) * b(r, j), {r}); }, "C");
  return te::create_prim_func({a, b, c}, "matmul");
}

// C = A x B (an intermediate), D = max(C, 0)
inline PrimFunc matmul_relu(int m, int n, int k) {
  te::Tensor a = te::placeholder({m, k}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({k, n}, DataType::float32(), "B");
  IterVar r = te::reduce_axis({0, k}, "k");
  te::Tensor c = te::compute(
      {m, n}, [&](Var i, Var j) { return te::sum(a(i, r) * b(r, j), {r}); }, "C");
  te::Tensor d = te::compute(
      {m, n}, [&](Var i, Var j) { return max(c(i, j), 0.0f); }, "D");
  return te::create_prim_func({a, b, d}, "matmul_relu");
}

// B = A * 2 (an intermediate), C = B + 1
inline PrimFunc scale_add(int m, int n) {
  te::Tensor a = te::placeholder({m, n}, DataType::float32(), "A");
  te::Tensor b = te::compute(
      {m, n}, [&](Var i, Var j) { return a(i, j) * 2.0f; }, "B");
  te::Tensor c = te::compute(
      {m, n}, [&](Var i, Var j) { return b(i, j) + 1.0f; }, "C");
  return te::create_prim_func({a, c}, "scale_add");
}

// B[i] = sum_k A[i, k]
inline PrimFunc row_sum(int m, int k) {
  te::Tensor a = te::placeholder({m, k}, DataType::float32(), "A");
  IterVar r = te::reduce_axis({0, k}, "k");
  te::Tensor b = te::compute(
      {m}, [&](Var i) { return te::sum(a(i, r), {r}); }, "B");
  return te::create_prim_func({a, b}, "row_sum");
}

// The GEMM nest that the tensor intrinsics expect: i and j split by mr and nr, ordered
// i_o, j_o, k, i_i, j_i, and the reduction's init decomposed at k (unless told not to).
inline Schedule gemm_tiles(const PrimFunc& matmul, int mr, int nr, bool decompose = true) {
  Schedule s(matmul);
  BlockRV c = s.get_block("C");
  std::vector<LoopRV> loops = s.get_loops(c);
  std::vector<LoopRV> i = s.split(loops[0], {std::nullopt, mr});
  std::vector<LoopRV> j = s.split(loops[1], {std::nullopt, nr});
  s.reorder({i[0], j[0], loops[2], i[1], j[1]});
  if (decompose) s.decompose_reduction(c, loops[2]);
  return s;
}

// The printed program, for comparison with expected text.
inline std::string text(const Schedule& s) {
  return to_string(s.func());
}

}  // namespace temper::testing
