// The blocked channel layout NCHW[b]c (oneDNN's nChw16c, onnxruntime's NCHWc, TVM's
// NCHW16c): an image of logical shape [N, C, H, W] stored as [N, ceil(C/b), H, W, b],
// channel c at block c / b, lane c % b. The channels of one pixel's block are contiguous,
// so a convolution reads one broadcast input value and one weight vector of b output
// channels per step, and every elementwise op, pool and residual add runs on the blocked
// array as it is. When b does not divide C the last block's tail lanes are padding: the
// conversions write them as 0, and a conv's packed weight has zero rows and columns there,
// so the tail never reaches a real channel (an op between convs may make it nonzero, never
// more than f(0) of its activation; see graph/pass_nchwc_layout.h); an ungrouped
// conv2d_nchwc told C does not reduce over it at all.
//
//   conv2d_nchwc            input [N, Ci, H, W, cb] -- or plain NCHW [N, C, H, W] when
//                           cb = 1 (a stem conv over 3 channels reads the image as it
//                           is) -- by a weight [Ko, Ci, R, S, cb, kb] into
//                           [N, Ko, P, Q, kb]. Stages "<name>_pad" (when padded) and
//                           "<name>", reducing over (rco, ry, rx, rci). Grouped
//                           (block_groups Gb > 1, nchwc_block_groups): the weight is
//                           [Ko, Ci/Gb, R, S, cb, kb] and output block ko reads the
//                           Ci/Gb input blocks of its block group, ko / (Ko/Gb).
//   depthwise_conv2d_nchwc  input [N, Co, H, W, b] by a weight [Co, R, S, b] (one filter
//                           per channel) into [N, Co, P, Q, b]; reduces over (ry, rx).
//   depthwise_pointwise_nchwc
//                           a depthwise conv, its bias [Cb, b] and activation, then a 1x1
//                           conv over that by a weight [Ko, Cb, 1, 1, b, b]: MobileNet's
//                           pair, one op so that a kernel can compute the depthwise rows a
//                           row of the 1x1 conv reads just before it reads them, from cache,
//                           instead of a whole map written by one kernel and read by the
//                           next. Stages "<name>_dw_pad" (when padded), "<name>_dw",
//                           "<name>_dw_act" and "<name>" (the 1x1 conv).
//
// The host-side conversions below make the blocked arrays of plain ones (the weights a
// graph packs once when it is built, test data, references).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "compiler/ops/elementwise.h"
#include "compiler/ops/window.h"
#include "compiler/runtime/ndarray.h"
#include "compiler/te/te.h"

namespace temper::ops {

inline int64_t channel_blocks(int64_t channels, int64_t block) {
  return (channels + block - 1) / block;
}

// A conv of `groups` groups (C/groups input and K/groups output channels each) runs in the
// blocked layout when its groups line up with the blocks: each group whole blocks (C/groups
// a multiple of cb, K/groups of kb), or each block whole groups of as many input as output
// channels (cb = kb; RegNet's and ResNeXt's group widths of 4-32 under a block of 8 or
// 16: the packed weight holds zeros off the groups' diagonal and the kernel multiplies
// them like any other weight, kb / (K/groups) times the FLOPs, at the blocked kernel's
// speed). Returns the block groups Gb -- groups of whole output blocks that read whole
// input blocks of their own -- 1 when ungrouped, 0 where the groups do not line up.
int64_t nchwc_block_groups(int64_t C, int64_t K, int64_t groups, int64_t cb, int64_t kb);

struct Workload;
// The groups of a blocked conv's workload: group_conv2d_nchwc's `groups`, else 1.
int64_t nchwc_conv_groups(const Workload& w);

// channels: the input's logical channel count C (0: every lane); an ungrouped conv does
// not reduce over the last block's lanes past it.
te::Tensor conv2d_nchwc(const te::Tensor& input, const te::Tensor& weight, const Window2d& window,
                        const std::string& name = "conv2d_nchwc", int64_t block_groups = 1,
                        int64_t channels = 0);
te::Tensor depthwise_conv2d_nchwc(const te::Tensor& input, const te::Tensor& weight, const Window2d& window,
                                  const std::string& name = "depthwise_conv2d_nchwc");
// channels: the depthwise conv's logical channel count C, which the 1x1 conv reduces over.
te::Tensor depthwise_pointwise_nchwc(const te::Tensor& input, const te::Tensor& dw_weight, const te::Tensor& dw_bias,
                                     const te::Tensor& pw_weight, const Window2d& window,
                                     std::optional<UnaryOp> activation, int64_t channels,
                                     const std::string& name = "depthwise_pointwise_nchwc");

// Host conversions, float32. A plain [N, C, H, W] array (any trailing extents: H*W is
// `plane`) to and from [N, ceil(C/b), plane, b], the tail lanes written 0.
void block_channels(const float* plain, float* blocked, int64_t N, int64_t C, int64_t plane, int64_t block);
void unblock_channels(const float* blocked, float* plain, int64_t N, int64_t C, int64_t plane, int64_t block);
NDArray block_channels(const NDArray& plain, int64_t block);         // [N, C, ...] -> [N, Cb, ..., b]
NDArray unblock_channels(const NDArray& blocked, int64_t channels);  // the inverse
// A conv weight [K, C/groups, R, S] (OIHW) as [ceil(K/kb), ceil(C/cb)/Gb, R, S, cb, kb]
// (Gb = nchwc_block_groups), zero where k >= K, c >= C or c is not in k's group.
NDArray pack_conv_weight_nchwc(const NDArray& weight, int64_t in_block, int64_t out_block, int64_t groups = 1);
// A depthwise weight [C, 1, R, S] as [ceil(C/b), R, S, b], zero in the tail.
NDArray pack_depthwise_weight_nchwc(const NDArray& weight, int64_t block);
// A per-channel vector [C] as [ceil(C/b), b], zero in the tail (a conv's bias).
NDArray block_vector(const NDArray& vector, int64_t block);

}  // namespace temper::ops
