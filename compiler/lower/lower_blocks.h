// lower_blocks: blocks become plain statements.
//
// Expects a PrimFunc whose blocks sit in BlockRealizes (te::create_prim_func's output,
// transformed by schedule primitives). Each BlockRealize becomes its block's body with
// the block variables replaced by their bindings:
// - a reduction's init statement runs on the first iteration of all its reduce
//   variables, `if (vk == dom.min && ...) init` (TVM's LowerInitBlock), placed before
//   the update;
// - a predicate other than true becomes an `if` around init and body;
// - the block's alloc_buffers become Allocates around the block's statements
//   (plan_allocations moves them later).
// Guarantees: no Block or BlockRealize remains; nothing else changes.
#pragma once

#include "compiler/ir/ir.h"

namespace temper {

PrimFunc lower_blocks(const PrimFunc& f);

}  // namespace temper
