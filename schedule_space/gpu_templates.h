// The GPU templates (CUDA and OpenCL targets: one template serves both kinds, its vector
// widths and limits taken from the target), one per op; template.cpp's GPU table lists
// them and find_template returns them for a GPU target. Their names end in ".gpu".
//
//   matmul, batch_matmul, dense   templates/gpu_gemm.cpp: shared-memory A and B tiles,
//                                 register tiles, thread and vthread tiling, k split
//   conv2d, depthwise_conv2d      templates/gpu_conv2d.cpp: direct convolution, input
//                                 and weight tiles in shared memory (NCHW)
//   max_pool2d, avg_pool2d        templates/gpu_pool.cpp: a thread per output element
//   the injective ops             templates/gpu_injective.cpp: elementwise, broadcast
//                                 and data-movement ops, fused and split over threads
//
// What they share (knobs, limit constraints, cooperative fetch): templates/gpu_tiling.h.
#pragma once

#include <string>
#include <vector>

#include "schedule_space/template.h"

namespace temper::schedule_space {

const Template& gpu_matmul_template();
const Template& gpu_batch_matmul_template();
const Template& gpu_dense_template();

const Template& gpu_conv2d_template();
const Template& gpu_depthwise_conv2d_template();
const Template& gpu_max_pool2d_template();
const Template& gpu_avg_pool2d_template();

// The ops the injective template serves, in the order error messages list them, and its
// instance for one of them ("add.gpu").
const std::vector<std::string>& gpu_injective_ops();
const Template& gpu_injective_template(const std::string& op);

}  // namespace temper::schedule_space
