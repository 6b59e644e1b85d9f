// What an auto-scheduler candidate must respect before it is worth measuring: a GPU
// kernel within the device's threads and shared memory, a CPU register tile within the
// vector registers, a CPU thread's packing copy within half its L2 cache. Ansor learns such limits from measurements; a job of a few hundred
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
  int vector_lanes = 0;           // CPU: elements of one vector register
  int64_t max_copy_bytes = 0;     // CPU: bytes a parallel loop's iteration may allocate; 0: no bound
};

// The target's limits. CPU: a register tile may fill the vector registers, no more -- a
// larger one spills in the innermost loop of the reduction; a buffer allocated per
// iteration of a parallel loop (a packed panel, copied to be read again and again) may
// fill half of this machine's L2 cache (sysfs; no bound where it cannot be read): a
// larger one is read back from the shared L3, at the speed the machine's neighbours leave.
CandidateLimits candidate_limits(const Target& target);

// The largest register tile of `scheduled` (before lowering): for each block with a
// reduction, the spatial loops inside its innermost reduction loop (multi-level tiling's
// innermost level, S3 of SSRSRS); elements 1 where a reduction loop is innermost.
struct RegisterTile {
  int64_t elements = 1;   // product of those loops' extents
  int64_t innermost = 1;  // extent of the innermost of them: the vectorized loop
};
RegisterTile largest_register_tile(const PrimFunc& scheduled);

// A register tile that keeps the FMA units busy: at least a quarter of the maximum (4
// vectors of accumulators with AVX2) and whole vectors along its vectorized loop. The
// search prefers random candidates with one (a prior, not a limit: mutation still goes
// anywhere within the limits). Always true without a CPU register bound.
bool fills_registers(const PrimFunc& scheduled, const CandidateLimits& limits);

// True when the register tiles of `scheduled` (before lowering: cheap) fit.
bool fits_registers(const PrimFunc& scheduled, const CandidateLimits& limits);
// True when the kernels of `lowered` fit the GPU's limits, or on CPU its per-thread
// copies max_copy_bytes.
bool fits_device(const PrimFunc& lowered, const CandidateLimits& limits);
// The bytes of the largest buffer allocated inside a parallel loop of `lowered`.
int64_t largest_per_thread_copy(const PrimFunc& lowered);

}  // namespace temper::search
