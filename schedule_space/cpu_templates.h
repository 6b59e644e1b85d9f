// The CPU templates (LLVM and C targets), one per op; template.cpp's table lists them and
// find_template returns them.
//
//   matmul, batch_matmul, dense   templates/gemm.cpp: the expert GEMM of
//                                 ops::schedule_gemm_cpu with its register tile, k unroll,
//                                 B packing and parallelism as knobs
//   conv2d                        templates/conv2d.cpp
//   depthwise_conv2d              templates/depthwise_conv2d.cpp
//   conv2d_nchwc                  templates/conv2d_nchwc.cpp (the blocked layout)
//   depthwise_conv2d_nchwc        templates/depthwise_conv2d_nchwc.cpp
//   depthwise_pointwise_nchwc     templates/depthwise_pointwise_nchwc.cpp (the two fused)
//   conv2d_winograd_nchwc         templates/conv2d_winograd_nchwc.cpp (3x3 stride 1)
//   max_pool2d, avg_pool2d        templates/pool.cpp
//   attention                     templates/attention.cpp (the softmax between the products)
#pragma once

#include "schedule_space/template.h"

namespace temper::schedule_space {

const Template& matmul_template();
const Template& batch_matmul_template();
const Template& dense_template();

const Template& conv2d_template();
const Template& depthwise_conv2d_template();
const Template& conv2d_nchwc_template();
const Template& depthwise_conv2d_nchwc_template();
const Template& depthwise_pointwise_nchwc_template();
const Template& conv2d_winograd_nchwc_template();
const Template& max_pool2d_template();
const Template& avg_pool2d_template();
const Template& attention_template();

}  // namespace temper::schedule_space
