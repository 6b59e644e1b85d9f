// What an auto-scheduler candidate must respect before it is worth measuring: a GPU
// kernel within the device's threads and shared memory, a CPU register tile within the
// vector registers. Ansor learns such limits from measurements; a job of a few hundred
// trials cannot afford to, so the search drops such candidates before scoring them, as
// the templates' constraints do (templates/register_budget.h).
#pragma once

#include <cstdint>
#include <optional>

#include "compiler/codegen/gpu/gpu_limits.h"
#include "compiler/ir/ir.h"
#include "compiler/target/target.h"

namespace temper::search {

struct CandidateLimits {
  std::optional<GpuLimits> gpu;   // GPU targets: threads and shared memory per kernel
  int64_t max_register_tile = 0;  // CPU: elements of a reduction's register tile; 0: no bound
};

// The target's limits. CPU: a register tile may fill the vector registers, no more -- a
// larger one spills in the innermost loop of the reduction.
CandidateLimits candidate_limits(const Target& target);

// Elements of the largest register tile of `scheduled` (before lowering): for each block
// with a reduction, the product of the extents of the spatial loops inside its innermost
// reduction loop (multi-level tiling's innermost level, S3 of SSRSRS).
int64_t largest_register_tile(const PrimFunc& scheduled);

// True when the register tiles of `scheduled` (before lowering: cheap) fit.
bool fits_registers(const PrimFunc& scheduled, const CandidateLimits& limits);
// True when the kernels of `lowered` fit the GPU's limits (always on CPU).
bool fits_device(const PrimFunc& lowered, const CandidateLimits& limits);

}  // namespace temper::search
