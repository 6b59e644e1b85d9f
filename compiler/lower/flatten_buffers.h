// flatten_buffers: every buffer access gets one index, the row-major element offset.
//
// Expects block-free IR. A load or store A[i0, i1, i2] of a buffer of shape [n0, n1, n2]
// becomes A[i0*n1*n2 + i1*n2 + i2]; an access of a 0-d buffer becomes A[0]. Allocated
// buffers are replaced by one-dimensional buffers of the product of their extents
// (same name, dtype, scope); parameters keep their shapes (ir.h allows a flat access
// of a multi-dimensional buffer), so the function's signature is unchanged.
// Guarantees: every access has exactly one index; every Allocate is 1-D.
#pragma once

#include "compiler/ir/ir.h"

namespace temper {

PrimFunc flatten_buffers(const PrimFunc& f);

}  // namespace temper
