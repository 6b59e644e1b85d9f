// The GPU legality check: what a kernel may use on a device, checked before any code is
// compiled, so that an over-limit candidate is an instantiation error of that candidate
// (the measurer records it and goes on), never a failed launch.
//
// Limits come from the target string where it gives them (-max_threads_per_block,
// -max_shared_memory_per_block), else from the device the target names when this
// machine has it, else from the kind's defaults (CUDA: 1024 threads, 48 KiB of static
// shared memory, 255 registers per thread; OpenCL: 256 work-items, the 32 KiB of local
// memory every OpenCL 1.2 device has).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/error.h"
#include "compiler/lower/split_host_device.h"
#include "compiler/target/target.h"

namespace temper {

struct GpuLimits {
  int64_t max_threads_per_block = 0;
  std::array<int64_t, 3> max_block_dims{0, 0, 0};
  std::array<int64_t, 3> max_grid_dims{0, 0, 0};
  int64_t max_shared_memory_per_block = 0;  // bytes
  int64_t max_local_bytes_per_thread = 0;   // register and private arrays
  std::vector<int> vector_lanes;            // the vector widths the kernel language has
  std::string source;                       // "device <name>" or "defaults of <kind>", for messages
};

// Throws UserError for a CPU target.
GpuLimits gpu_limits(const Target& target);

// A candidate that breaks a limit: the measurer's InstantiationError.
class GpuLimitError : public UserError {
 public:
  using UserError::UserError;
};

// Throws GpuLimitError naming the kernel, the quantity, its value and the limit.
void check_gpu_limits(const DeviceFunction& function, const GpuLimits& limits);

}  // namespace temper
