// emit_cuda(): the kernels of GPU functions (split_host_device.h) as one CUDA C++
// translation unit for NVRTC (nvrtc.h), printed by the shared GPU printer
// (codegen_gpu.h) in CUDA's spelling.
//
// Each kernel is `extern "C" __global__ void __launch_bounds__(<threads per block>)
// name(float* __restrict__ A, ...)`: unmangled, so that its PTX entry is the kernel's
// name. The source includes no header, since NVRTC has no path to the toolkit's: it
// declares the fixed-width integer types, INT64_C/UINT64_C, INFINITY and NAN itself.
// Thread indices are threadIdx/blockIdx, the barrier is __syncthreads(), shared arrays
// are __shared__, math functions are the float versions (expf, rsqrtf, ...) for float32,
// a Let expression is an immediately called lambda. Contiguous vector accesses of 2 or 4
// 32-bit elements (2 for 64-bit ones) are float2/float4-style loads and stores where
// their alignment is proven. float16 is refused with a UserError.
#pragma once

#include <string>
#include <vector>

#include "compiler/lower/split_host_device.h"

namespace temper {

std::string emit_cuda(const std::vector<DeviceFunction>& fns);

}  // namespace temper
