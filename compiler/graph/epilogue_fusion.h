// Epilogue fusion into a scheduled anchor: a tuning task's kernel (scheduled by its
// template, from the log) and the kernel of what fused after it (the anchor's bias, the
// elementwise chain) become one function. The epilogue's loop nest is moved under the
// anchor's outermost parallel loop (reverse_compute_at on the block writing the product),
// so each iteration applies the epilogue to the slice of the product it just wrote,
// while that slice is in cache, instead of a second pass over the whole product. The
// template's schedule is kept as it is: the fusion works on any template's output.
#pragma once

#include <optional>
#include <string>

#include "compiler/ir/ir.h"

namespace temper::graph {

// anchor: scheduled, writing its product as parameter anchor.params.back(). epilogue:
// unscheduled but for inlining (one block), reading the product as parameter
// epilogue_product. The result, named name, takes the anchor's inputs, then the
// epilogue's parameters but the product (its other inputs, then its outputs); the
// product becomes an allocation inside. nullopt when the epilogue is not one block or the
// schedule cannot move it (the caller then runs the two kernels one after the other).
std::optional<PrimFunc> fuse_epilogue(const PrimFunc& anchor, const PrimFunc& epilogue, int epilogue_product,
                                      const std::string& name);

}  // namespace temper::graph
