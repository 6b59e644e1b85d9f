// The form a reduction block must have for the primitives that split its reduction
// (rfactor) or spread it over GPU threads (lower_cross_thread_reduction):
//   init: X[idx] = identity;   body: X[idx] = combine(X[idx], rhs)
// with combine one of +, *, max, min and identity its identity (0, 1, -inf, +inf).
#pragma once

#include <optional>
#include <vector>

#include "compiler/ir/ir.h"

namespace temper {

struct ReductionForm {
  ReduceOp op;
  Buffer buf;                 // X
  std::vector<Expr> indices;  // idx
  Expr rhs;
  Expr identity;
};

// b's reduction form, or nullopt when b does not have it.
std::optional<ReductionForm> match_reduction(const BlockNode* b);

}  // namespace temper
