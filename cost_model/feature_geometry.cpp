#include "cost_model/feature_geometry.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "cost_model/features.h"

namespace temper::cost_model {

namespace {

// The lines of a run of `elements` elements spaced `stride` elements apart: contiguous
// bytes share lines, a stride of a line or more gives each element its own.
double run_lines(double elements, int64_t stride, double element_bytes) {
  const double step_bytes = static_cast<double>(stride) * element_bytes;
  if (stride == 0 || step_bytes >= kCacheLineBytes) return elements;
  return std::ceil(elements * step_bytes / kCacheLineBytes);
}

}  // namespace

Footprint unique_footprint(std::span<const AccessDim> dims, double element_bytes, double buffer_elements) {
  // Linear dimensions, finest stride first, fold into one run while each is contained
  // in or continues the run so far; the others multiply the run.
  std::vector<AccessDim> linear;
  double scattered = 1;
  for (const AccessDim& d : dims) {
    if (!d.varies) continue;
    if (d.coeff == 0) {
      scattered *= static_cast<double>(d.extent);
    } else {
      linear.push_back({d.extent, std::abs(d.coeff), true});
    }
  }
  std::stable_sort(linear.begin(), linear.end(),
                   [](const AccessDim& x, const AccessDim& y) { return x.coeff < y.coeff; });
  double run = 1;
  int64_t stride = 0;
  for (const AccessDim& d : linear) {
    if (stride == 0) {
      run = static_cast<double>(d.extent);
      stride = d.coeff;
    } else if (d.coeff % stride == 0 && static_cast<double>(d.coeff) <= run * static_cast<double>(stride)) {
      run += static_cast<double>(d.extent - 1) * static_cast<double>(d.coeff / stride);
    } else {
      scattered *= static_cast<double>(d.extent);
    }
  }
  Footprint f;
  f.elements = run * scattered;
  f.lines = run_lines(run, stride, element_bytes) * scattered;
  if (buffer_elements > 0) {
    f.elements = std::min(f.elements, buffer_elements);
    f.lines = std::min(f.lines, std::ceil(buffer_elements * element_bytes / kCacheLineBytes));
  }
  f.lines = std::min(f.lines, f.elements);
  return f;
}

double lines_touched(std::span<const AccessDim> dims, double element_bytes) {
  int inner = static_cast<int>(dims.size()) - 1;
  while (inner >= 0 && !dims[inner].varies) --inner;
  // Loops inside the innermost varying dimension revisit the same element.
  if (inner < 0) return 1;
  const int64_t stride = dims[inner].coeff;
  double run = static_cast<double>(dims[inner].extent);
  int outer = inner - 1;
  const bool dense = stride != 0 && std::abs(stride) * element_bytes < kCacheLineBytes;
  while (dense && outer >= 0 && dims[outer].varies &&
         static_cast<double>(dims[outer].coeff) == run * static_cast<double>(stride)) {
    run *= static_cast<double>(dims[outer].extent);
    --outer;
  }
  double repeats = 1;
  for (int i = 0; i <= outer; ++i) repeats *= static_cast<double>(dims[i].extent);
  return repeats * run_lines(run, std::abs(stride), element_bytes);
}

}  // namespace temper::cost_model
