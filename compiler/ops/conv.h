// 2-D convolution: grouped conv2d in NCHW and NHWC, and depthwise conv2d.
//
// Weight layouts follow the data layout:
//   NCHW input [N, C, H, W], weight [K, C/groups, R, S] (OIHW, as in ONNX)
//   NHWC input [N, H, W, C], weight [R, S, C/groups, K] (HWIO, as in TensorFlow)
// and the output is [N, K, P, Q] or [N, P, Q, K] with P, Q from window_output_extent.
// Output channel k belongs to group k / (K/groups) and reads that group's C/groups
// input channels. Depthwise convolution is the case groups = C: each input channel c
// produces channel multiplier M = K/C outputs k = c*M .. c*M+M-1, and its weight has the
// grouped layout with C/groups = 1 ([K, 1, R, S] or [R, S, 1, K]).
//
// Stages: "<name>_pad" (only when the padding is not zero) and "<name>", a sum over the
// reduce axes rc (input channel in the group; not for depthwise), ry and rx (kernel).
#pragma once

#include <string>

#include "compiler/ops/window.h"
#include "compiler/te/te.h"

namespace temper::ops {

te::Tensor conv2d(const te::Tensor& input, const te::Tensor& weight, const Window2d& window, int64_t groups = 1,
                  Layout layout = Layout::NCHW, const std::string& name = "conv2d");

te::Tensor depthwise_conv2d(const te::Tensor& input, const te::Tensor& weight, const Window2d& window,
                            Layout layout = Layout::NCHW, const std::string& name = "depthwise_conv2d");

// The output shape of conv2d (groups and depthwise alike) for input and weight shapes in
// `layout`; UserError naming op when the dilated kernel does not fit the padded input.
Shape conv2d_output_shape(const Shape& input, const Shape& weight, const Window2d& window, Layout layout,
                          const std::string& op);

}  // namespace temper::ops
