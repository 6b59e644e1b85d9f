// Depthwise + pointwise fusion: a blocked depthwise conv (NchwcDepthwiseConv), its
// activation (none, Relu, or Clip to [0, 6]) and the 1x1 stride-1 NchwcConv reading it --
// MobileNet's pair -- become one NchwcDepthwisePointwiseConv, whose kernel computes each row
// of the depthwise map just before the 1x1 conv's row reads it (ops::depthwise_pointwise_nchwc,
// schedule_space/templates/depthwise_pointwise_nchwc.cpp), so that map is never written out.
//
// Only where it pays: the depthwise map read by nothing else, and a 1x1 output of at least
// kMinFusedRows rows. Below that the fused kernel's parallel loop over rows leaves a thread
// idle part of the time and each row reads the whole 1x1 weight (MobileNetV2's 7x7 pairs:
// 960 -> 160 1.4x and the stride-2 576 -> 160 1.7x the two kernels' time alone, Zen 4).
//
// Runs after the blocked layout pass (pass_nchwc_layout.h); expects a verified graph with
// inferred types and leaves one (remove_dead has run, so ids change).
#pragma once

#include <cstdint>

#include "compiler/graph/graph.h"

namespace temper::graph {

constexpr int64_t kMinFusedRows = 14;

// Returns how many pairs were fused.
int fuse_depthwise_pointwise(Graph& graph);

}  // namespace temper::graph
