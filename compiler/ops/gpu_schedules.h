// schedule_gpu_default: a sound GPU schedule for any op, for the ops that no GPU template
// serves (the CUDA and OpenCL targets run nothing outside loops bound to thread axes).
// Elementwise producers are inlined into their consumers; every remaining block's leading
// spatial loops are fused and split over blocks of up to 256 threads (blockIdx.x,
// threadIdx.x), its reduction loops left serial in each thread. Each block becomes one
// kernel, its intermediates device buffers between kernels.
#pragma once

#include "compiler/ops/workload.h"
#include "compiler/schedule/schedule.h"

namespace temper::ops {

// UserError when a block has no spatial loop to spread over threads (a reduction to a
// scalar).
Schedule schedule_gpu_default(const OpInstance& op);

}  // namespace temper::ops
