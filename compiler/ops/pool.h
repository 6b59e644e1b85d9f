// 2-D pooling over the spatial dimensions of an NCHW or NHWC tensor.
//
// max_pool2d pads with the lowest value of the dtype, so padding never wins a max.
// avg_pool2d divides by the number of input elements under the window, leaving the
// padding out (ONNX's default count_include_pad=0), or by the full kernel area with
// count_include_pad. global_avg_pool2d averages all of H x W and keeps both as extent 1.
//
// Stages: max_pool2d: "<name>_pad" (when padded), "<name>" (a max over ry, rx).
//         avg_pool2d: "<name>_pad" (when padded), "<name>_sum", "<name>" (the division).
//         global_avg_pool2d: "<name>_sum", "<name>".
#pragma once

#include <array>
#include <string>

#include "compiler/ops/window.h"
#include "compiler/te/te.h"

namespace temper::ops {

// window.dilation must be 1x1 (pooling has no dilation); padding must be smaller than
// the kernel on every side, so that every window covers some input.
te::Tensor max_pool2d(const te::Tensor& x, std::array<int64_t, 2> kernel, const Window2d& window,
                      Layout layout = Layout::NCHW, const std::string& name = "max_pool2d");

te::Tensor avg_pool2d(const te::Tensor& x, std::array<int64_t, 2> kernel, const Window2d& window,
                      Layout layout = Layout::NCHW, bool count_include_pad = false,
                      const std::string& name = "avg_pool2d");

te::Tensor global_avg_pool2d(const te::Tensor& x, Layout layout = Layout::NCHW,
                             const std::string& name = "global_avg_pool2d");

// The output shape of max_pool2d/avg_pool2d; UserError naming op on an impossible window.
Shape pool2d_output_shape(const Shape& input, std::array<int64_t, 2> kernel, const Window2d& window, Layout layout,
                          const std::string& op);

}  // namespace temper::ops
