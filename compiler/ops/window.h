// Sliding windows over the two spatial dimensions, shared by convolution and pooling.
//
// A window has a kernel extent, a stride, a dilation and padding on each side of each
// spatial dimension. Padding is materialised as its own compute stage (pad_spatial) so
// that a schedule can inline it into the consumer or keep it as a buffer.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "compiler/ops/shape.h"
#include "compiler/ops/workload.h"
#include "compiler/te/te.h"

namespace temper::ops {

// Where the channel dimension sits: NCHW (channels before the spatial dimensions) or
// NHWC (channels innermost).
enum class Layout { NCHW, NHWC };

const char* layout_name(Layout layout);
// "NCHW" or "NHWC"; UserError otherwise.
Layout parse_layout(const std::string& name);

struct Padding2d {
  int64_t top = 0;
  int64_t left = 0;
  int64_t bottom = 0;
  int64_t right = 0;

  static Padding2d uniform(int64_t p) { return {p, p, p, p}; }
  bool is_zero() const { return top == 0 && left == 0 && bottom == 0 && right == 0; }
};

struct Window2d {
  std::array<int64_t, 2> stride = {1, 1};  // (height, width)
  Padding2d padding;
  std::array<int64_t, 2> dilation = {1, 1};  // (height, width)
};

// The number of window positions along one dimension of extent `in` (padded by
// pad_before + pad_after), or 0 or less when the dilated kernel does not fit.
int64_t window_output_extent(int64_t in, int64_t pad_before, int64_t pad_after, int64_t kernel, int64_t stride,
                             int64_t dilation);

// x with its spatial dimensions (H, W of `layout`; a blocked NCHW[b]c array pads as NCHW)
// padded with `value`,
// as a stage named `name`; x itself when the padding is zero.
te::Tensor pad_spatial(const te::Tensor& x, Layout layout, const Padding2d& padding, double value,
                       const std::string& name);

// A workload's window keys: "stride", "pad" (P, PHxPW or TOPxLEFTxBOTTOMxRIGHT) and,
// with has_dilation, "dilation"; a pair key of one value holds for both dimensions.
std::array<int64_t, 2> pair_of(const Workload& w, const std::string& key);
Padding2d padding_of(const Workload& w);
Window2d window_of(const Workload& w, bool has_dilation = true);

// UserError naming op unless strides and dilations are positive and padding non-negative.
void check_window(const Window2d& window, const std::string& op);

}  // namespace temper::ops
