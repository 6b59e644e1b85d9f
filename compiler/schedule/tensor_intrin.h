// Tensor intrinsics: the computations that CPU micro-kernels perform, for tensorize.
//
// An intrinsic describes its computation as one block: iteration variables with their
// extents and an update statement over operand buffers, in the form create_prim_func
// gives a compute stage (C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]). An extent
// that is a Var matches any extent (the K of a GEMM micro-kernel). tensorize matches a
// loop nest against the description (schedule_tensorize.cpp) and replaces it with what
// `implement` builds from the match: a call of the micro-kernel on the addresses of the
// tile's first elements.
//
// The registry is a plain list in tensor_intrin.cpp; a new micro-kernel adds an entry
// there and its code in compiler/runtime/ukernels.cpp.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace temper {

// What tensorize found for each part of a description.
struct TensorIntrinMatch {
  // Per description operand: the buffer of the scheduled program, and the indices of
  // the tile's first element in it.
  std::vector<Buffer> buffers;
  std::vector<std::vector<Expr>> origins;
  // Per description iteration variable: the extent of the loop bound to it.
  std::vector<Expr> extents;
};

struct TensorIntrin {
  std::string name;
  std::vector<IterVar> iter_vars;
  std::vector<Buffer> operands;
  // The update, over iter_vars and operands. A reduction's init is not part of it: the
  // scheduled block must have had it taken out by decompose_reduction.
  Stmt body;
  std::function<Stmt(const TensorIntrinMatch&)> implement;
};

// All registered intrinsics.
const std::vector<TensorIntrin>& tensor_intrins();
// The intrinsic of that name, or nullptr.
const TensorIntrin* find_tensor_intrin(const std::string& name);

// address_of(buf[indices]): the address of one element, a handle.
Expr address_of(const Buffer& buf, std::vector<Expr> indices);

}  // namespace temper
