#include "compiler/ops/op_data.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace temper::ops {

std::vector<NDArray*> OpData::args() {
  std::vector<NDArray*> a;
  for (NDArray& x : inputs) a.push_back(&x);
  for (NDArray& x : outputs) a.push_back(&x);
  return a;
}

namespace {
std::vector<int64_t> const_shape(const te::Tensor& t) {
  std::vector<int64_t> shape;
  for (const Expr& e : t.shape()) {
    const int64_t* c = as_const_int(e);
    if (!c) throw UserError(str("tensor ", t.name(), " has a symbolic shape; test data needs constant shapes"));
    shape.push_back(*c);
  }
  return shape;
}
}  // namespace

OpData make_op_data(const OpInstance& op, uint64_t seed) {
  OpData d;
  d.tolerance_of_largest = op.tolerance_of_largest;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    ValueRange r = i < op.input_ranges.size() ? op.input_ranges[i] : ValueRange{};
    d.inputs.push_back(NDArray::random(const_shape(op.inputs[i]), op.inputs[i].dtype(), seed + i, r.low, r.high));
  }
  std::vector<const void*> ins;
  for (const NDArray& x : d.inputs) ins.push_back(x.data());
  std::vector<void*> outs;
  for (const te::Tensor& t : op.outputs) {
    d.outputs.push_back(NDArray::zeros(const_shape(t), t.dtype()));
    d.expected.push_back(NDArray::zeros(const_shape(t), t.dtype()));
    outs.push_back(d.expected.back().data());
  }
  op.reference(ins, outs);
  return d;
}

Comparison check_outputs(const OpData& data) {
  Comparison total;
  for (size_t i = 0; i < data.outputs.size(); ++i) {
    DataType t = data.outputs[i].dtype();
    // fp32 sums of ~1000 products reordered by a schedule differ from the reference's
    // in the last few bits of each partial sum; fp16 has 11 bits in all.
    double rtol = t.is_float() ? (t.bits() == 16 ? 1e-2 : 1e-4) : 0;
    double atol = t.is_float() ? (t.bits() == 16 ? 1e-2 : 1e-4) : 0;
    if (data.tolerance_of_largest > 0 && t == DataType::float32()) {
      const float* v = data.expected[i].data_as<float>();
      double largest = 0;
      for (int64_t k = 0; k < data.expected[i].size(); ++k) largest = std::max<double>(largest, std::abs(v[k]));
      atol = std::max(atol, data.tolerance_of_largest * largest);
    }
    Comparison c = compare(data.outputs[i], data.expected[i], rtol, atol);
    if (!c.ok() && total.ok()) {
      total = c;
      total.message = str("output ", i, ": ", c.message);
    }
    total.max_abs_error = std::max(total.max_abs_error, c.max_abs_error);
  }
  return total;
}

Comparison run_and_check(const PackedFunc& f, OpData& data) {
  // Outputs start as values no correct function leaves behind (NaN; for integers a number
  // far outside any result of the test data), so an element it never writes is caught.
  for (NDArray& o : data.outputs) o.fill(o.dtype().is_float() ? std::numeric_limits<double>::quiet_NaN() : -123456789);
  f(data.args());
  return check_outputs(data);
}

}  // namespace temper::ops
