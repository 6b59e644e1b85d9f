// storage_rewrite: where allocations live, and which can share memory.
//
// Expects flattened IR (1-D allocations) with allocations at their final places. One
// buffer may be allocated at several places (partition_loops and unroll_loops copy loop
// bodies with their Allocates); each allocation is rewritten with the uses it encloses.
// - A "global" allocation of constant size at most kMaxLocalBytes becomes "local": a
//   register or stack tile, which codegen allocates on the stack of the iteration
//   (the "global" ones come from the heap).
// - Allocations that are nested directly around one sequence of statements, of one
//   dtype and scope and constant size, share one buffer when the statements that use
//   them do not overlap (the producer of stage 3 can reuse stage 1's buffer once
//   stage 2 has read it). The shared buffer is the first one, grown to the largest size.
// Guarantees: the same values are computed; no two buffers whose uses overlap share memory.
#pragma once

#include <cstdint>

#include "compiler/ir/ir.h"

namespace temper {

inline constexpr int64_t kMaxLocalBytes = 16 * 1024;

PrimFunc storage_rewrite(const PrimFunc& f);

}  // namespace temper
