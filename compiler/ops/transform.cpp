#include "compiler/ops/transform.h"

#include <algorithm>

namespace temper::ops {

te::Tensor transpose(const te::Tensor& x, const std::vector<int64_t>& perm, const std::string& name) {
  Shape in = static_shape(x, "transpose");
  int rank = static_cast<int>(in.size());
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool is_permutation = static_cast<int>(perm.size()) == rank;
  for (int d = 0; is_permutation && d < rank; ++d) is_permutation = sorted[d] == d;
  if (!is_permutation) {
    throw UserError(str("transpose: perm ", shape_str(perm), " is not a permutation of the ", rank, " dimensions of ",
                        x.name(), " (", shape_str(in), "); list each of 0..", rank - 1, " once"));
  }
  Shape out(rank);
  for (int d = 0; d < rank; ++d) out[d] = in[perm[d]];
  return te::compute(
      shape_exprs(out, "transpose"),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> src(rank);
        for (int d = 0; d < rank; ++d) src[perm[d]] = i[d];
        return x(src);
      },
      name);
}

te::Tensor reshape(const te::Tensor& x, const Shape& new_shape, const std::string& name) {
  Shape in = static_shape(x, "reshape");
  if (num_elements(in) != num_elements(new_shape)) {
    throw UserError(str("reshape: cannot reshape ", x.name(), " of shape ", shape_str(in), " (", num_elements(in),
                        " elements) to ", shape_str(new_shape), " (", num_elements(new_shape),
                        " elements); the element counts must be equal"));
  }
  return te::compute(
      shape_exprs(new_shape, "reshape"),
      [&](const std::vector<Var>& i) {
        // The row-major offset of the output element, then its coordinates in x.
        Expr flat = new_shape.empty() ? index_const(0) : Expr(i[0]);  // a scalar result has no index
        for (size_t d = 1; d < new_shape.size(); ++d) flat = times(flat, new_shape[d]) + i[d];
        std::vector<Expr> src(in.size());
        for (size_t d = in.size(); d-- > 0;) {
          src[d] = d == 0 ? flat : floormod(flat, index_const(in[d]));
          if (d > 0) flat = floordiv(flat, index_const(in[d]));
        }
        return x(src);
      },
      name);
}

te::Tensor pad(const te::Tensor& x, const std::vector<int64_t>& before, const std::vector<int64_t>& after, double value,
               const std::string& name) {
  return pad(x, before, after, make_const(x.dtype(), value), name);
}

te::Tensor pad(const te::Tensor& x, const std::vector<int64_t>& before, const std::vector<int64_t>& after,
               const Expr& value, const std::string& name) {
  Shape in = static_shape(x, "pad");
  size_t rank = in.size();
  if (before.size() != rank || after.size() != rank) {
    throw UserError(str("pad: ", x.name(), " has ", rank, " dimensions but the padding lists have ", before.size(),
                        " (before) and ", after.size(), " (after) entries; give one per dimension"));
  }
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (before[d] < 0 || after[d] < 0) {
      throw UserError(str("pad: padding of dimension ", d, " is ", before[d], " before and ", after[d],
                          " after; padding must be non-negative"));
    }
    out[d] = in[d] + before[d] + after[d];
  }
  return te::compute(
      shape_exprs(out, "pad"),
      [&](const std::vector<Var>& i) {
        Expr inside;
        std::vector<Expr> src(rank);
        for (size_t d = 0; d < rank; ++d) {
          src[d] = plus(i[d], -before[d]);
          if (before[d] > 0) {
            Expr cond = i[d] >= index_const(before[d]);
            inside = inside.defined() ? inside && cond : cond;
            src[d] = max(src[d], index_const(0));
          }
          if (after[d] > 0) {
            Expr cond = i[d] < index_const(before[d] + in[d]);
            inside = inside.defined() ? inside && cond : cond;
            src[d] = min(src[d], index_const(in[d] - 1));
          }
        }
        if (!inside.defined()) return x(src);
        return select(inside, x(src), value);
      },
      name);
}

te::Tensor concat(const std::vector<te::Tensor>& inputs, int64_t axis, const std::string& name) {
  if (inputs.empty()) throw UserError("concat: needs at least one input");
  Shape first = static_shape(inputs[0], "concat");
  int ax = normalize_axis(axis, static_cast<int>(first.size()), "concat");
  Shape out = first;
  std::vector<int64_t> offsets = {0};
  for (size_t t = 1; t < inputs.size(); ++t) {
    check_same_dtype(inputs[0], inputs[t], "concat");
    Shape s = static_shape(inputs[t], "concat");
    bool compatible = s.size() == first.size();
    for (size_t d = 0; compatible && d < s.size(); ++d) compatible = static_cast<int>(d) == ax || s[d] == first[d];
    if (!compatible) {
      throw UserError(str("concat: input ", t, " (", inputs[t].name(), ") has shape ", shape_str(s),
                          " but input 0 has shape ", shape_str(first), "; all extents except axis ", ax,
                          " must be equal"));
    }
    offsets.push_back(out[ax]);
    out[ax] += s[ax];
  }
  return te::compute(
      shape_exprs(out, "concat"),
      [&](const std::vector<Var>& i) {
        // Innermost select first: the last input takes whatever the earlier ones do not.
        Expr value;
        for (size_t t = inputs.size(); t-- > 0;) {
          std::vector<Expr> src(i.begin(), i.end());
          int64_t extent = static_shape(inputs[t], "concat")[ax];
          src[ax] = plus(i[ax], -offsets[t]);
          if (t > 0) src[ax] = max(src[ax], index_const(0));
          if (t + 1 < inputs.size()) src[ax] = min(src[ax], index_const(extent - 1));
          Expr load = inputs[t](src);
          value = value.defined() ? select(i[ax] < index_const(offsets[t] + extent), load, value) : load;
        }
        return value;
      },
      name);
}

}  // namespace temper::ops
