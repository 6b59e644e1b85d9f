// Memory planning: intermediates whose lifetimes do not overlap share a storage block
// (TVM's GraphPlanMemory). Lifetimes come from the calls' order: an intermediate lives from
// the call writing it to the last call reading it, both included, so that no kernel ever
// writes over an array it reads. Blocks are assigned greedily in call order: an array
// takes the smallest free block that holds it, else the largest free block, grown, else a
// new block. Inputs, constants and outputs are the caller's and never share.
#pragma once

#include <cstdint>

#include "compiler/graph/execution_plan.h"

namespace temper::graph {

// Sets the storage of every Intermediate array a call writes, and plan.storage_bytes. An
// intermediate no call passes (computed inside a fused kernel) keeps storage -1.
void plan_memory(ExecutionPlan& plan);

// The bytes the planned intermediates would take with one block each, to compare with the plan's total.
int64_t unplanned_intermediate_bytes(const ExecutionPlan& plan);

}  // namespace temper::graph
