// Data-movement operators: transpose, reshape, constant padding and concatenation.
//
// Each is one injective compute stage named `name`. Where an output element may come
// from outside an input (padding, concatenation), the value is chosen with select() and
// the load's indices are clamped into the input: a Select may evaluate both branches
// (see ir.h), so every load it contains must stay in bounds.
#pragma once

#include <string>
#include <vector>

#include "compiler/ops/shape.h"
#include "compiler/te/te.h"

namespace temper::ops {

// out[i_0, ..., i_n] = x[j] with j[perm[d]] = i_d; out.shape[d] = x.shape[perm[d]].
te::Tensor transpose(const te::Tensor& x, const std::vector<int64_t>& perm, const std::string& name = "transpose");

// The same elements in row-major order under another shape of equal element count.
te::Tensor reshape(const te::Tensor& x, const Shape& new_shape, const std::string& name = "reshape");

// Pads x with `before[d]` elements in front and `after[d]` behind along each dimension d,
// filled with `value` (converted to x's dtype; -inf and the like are allowed for floats).
te::Tensor pad(const te::Tensor& x, const std::vector<int64_t>& before, const std::vector<int64_t>& after,
               double value = 0.0, const std::string& name = "pad");
// The same with the fill value as an expression of x's dtype (a load of a scalar tensor).
te::Tensor pad(const te::Tensor& x, const std::vector<int64_t>& before, const std::vector<int64_t>& after,
               const Expr& value, const std::string& name = "pad");

// Joins tensors along `axis` (negative counts from the end); all other extents and the
// dtypes must agree.
te::Tensor concat(const std::vector<te::Tensor>& inputs, int64_t axis, const std::string& name = "concat");

}  // namespace temper::ops
