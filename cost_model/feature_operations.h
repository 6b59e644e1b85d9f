// Operation counts of one expression for the cost-model features: float add/sub, mul,
// multiply-add, div, compare/select, pure math calls, and integer arithmetic, per
// element (a 16-lane vector add counts 16). Internal to cost_model/; features.h says
// what each count means.
#pragma once

#include "compiler/ir/ir.h"
#include "cost_model/features.h"

namespace temper::cost_model {

// Adds the operations of e, per element, into row's counts (unweighted: the caller
// scales by the loop extents).
void count_operations(const Expr& e, StoreFeatures& row);

}  // namespace temper::cost_model
