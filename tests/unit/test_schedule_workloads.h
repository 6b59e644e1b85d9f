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

// The classic tiled GPU matmul of a matmul's PrimFunc (blocks as matmul() makes them; m,
// n multiples of 32, k of 8): 8x8 threads per block, each computing a 4x4 tile of C in a
// local accumulator, A and B staged through shared memory a k-tile of 8 at a time by all
// threads of the block together.
inline Schedule gpu_matmul(const PrimFunc& matmul_func) {
  Schedule s(matmul_func);
  BlockRV c = s.get_block("C");
  BlockRV a_shared = s.cache_read(c, 1, "shared");
  BlockRV b_shared = s.cache_read(c, 2, "shared");
  BlockRV c_local = s.cache_write(c, 0, "local");
  std::vector<LoopRV> l = s.get_loops(c);
  std::vector<LoopRV> i = s.split(l[0], {std::nullopt, 8, 4});
  std::vector<LoopRV> j = s.split(l[1], {std::nullopt, 8, 4});
  std::vector<LoopRV> kk = s.split(l[2], {std::nullopt, 8});
  s.reorder({i[0], j[0], i[1], j[1], kk[0], kk[1], i[2], j[2]});
  s.bind(i[0], "blockIdx.y");
  s.bind(j[0], "blockIdx.x");
  s.bind(i[1], "threadIdx.y");
  s.bind(j[1], "threadIdx.x");
  s.reverse_compute_at(c_local, j[1]);
  for (BlockRV stage : {a_shared, b_shared}) {
    s.compute_at(stage, kk[0]);
    std::vector<LoopRV> sl = s.get_loops(stage);
    LoopRV fused = s.fuse({sl[sl.size() - 2], sl.back()});
    std::vector<LoopRV> f = s.split(fused, {std::nullopt, 8, 8});
    s.bind(f[1], "threadIdx.y");
    s.bind(f[2], "threadIdx.x");
  }
  return s;
}

inline Schedule gpu_matmul(int m, int n, int k) {
  return gpu_matmul(matmul(m, n, k));
}

// The printed program, for comparison with expected text.
inline std::string text(const Schedule& s) {
  return to_string(s.func());
}

}  // namespace temper::testing
