#include "compiler/ops/window.h"

#include "compiler/ops/transform.h"

namespace temper::ops {

const char* layout_name(Layout layout) {
  return layout == Layout::NCHW ? "NCHW" : "NHWC";
}

Layout parse_layout(const std::string& name) {
  if (name == "NCHW") return Layout::NCHW;
  if (name == "NHWC") return Layout::NHWC;
  throw UserError(str("unknown layout '", name, "'; accepted: NCHW, NHWC"));
}

int64_t window_output_extent(int64_t in, int64_t pad_before, int64_t pad_after, int64_t kernel, int64_t stride,
                             int64_t dilation) {
  int64_t padded = in + pad_before + pad_after;
  int64_t dilated_kernel = dilation * (kernel - 1) + 1;
  if (padded < dilated_kernel) return 0;
  return (padded - dilated_kernel) / stride + 1;
}

te::Tensor pad_spatial(const te::Tensor& x, Layout layout, const Padding2d& padding, double value,
                       const std::string& name) {
  if (padding.is_zero()) return x;
  int h = layout == Layout::NCHW ? 2 : 1;
  // Trailing dimensions past W (a blocked layout's channel lanes) are not padded.
  std::vector<int64_t> before(x.ndim(), 0);
  std::vector<int64_t> after(x.ndim(), 0);
  before[h] = padding.top;
  before[h + 1] = padding.left;
  after[h] = padding.bottom;
  after[h + 1] = padding.right;
  return pad(x, before, after, value, name);
}

std::array<int64_t, 2> pair_of(const Workload& w, const std::string& key) {
  std::vector<int64_t> v = w.get_ints(key);
  return v.size() == 1 ? std::array<int64_t, 2>{v[0], v[0]} : std::array<int64_t, 2>{v[0], v[1]};
}

Padding2d padding_of(const Workload& w) {
  std::vector<int64_t> v = w.get_ints("pad");
  if (v.size() == 1) return Padding2d::uniform(v[0]);
  if (v.size() == 2) return {v[0], v[1], v[0], v[1]};
  return {v[0], v[1], v[2], v[3]};
}

Window2d window_of(const Workload& w, bool has_dilation) {
  Window2d window;
  window.stride = pair_of(w, "stride");
  window.padding = padding_of(w);
  if (has_dilation) window.dilation = pair_of(w, "dilation");
  return window;
}

void check_window(const Window2d& window, const std::string& op) {
  for (int64_t s : window.stride) {
    if (s <= 0) throw UserError(str(op, ": stride ", s, " must be positive"));
  }
  for (int64_t d : window.dilation) {
    if (d <= 0) throw UserError(str(op, ": dilation ", d, " must be positive"));
  }
  const Padding2d& p = window.padding;
  if (p.top < 0 || p.left < 0 || p.bottom < 0 || p.right < 0) {
    throw UserError(str(op, ": padding (top ", p.top, ", left ", p.left, ", bottom ", p.bottom, ", right ", p.right,
                        ") must be non-negative"));
  }
}

}  // namespace temper::ops
