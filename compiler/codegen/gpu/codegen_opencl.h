// emit_opencl(): the kernels of GPU functions (split_host_device.h) as one OpenCL C
// program, printed by the shared GPU printer (codegen_gpu.h) in OpenCL's spelling.
//
// Each kernel is `__kernel __attribute__((reqd_work_group_size(x, y, z))) void
// name(__global float* restrict A, ...)`, so it must be launched with its DeviceKernel's
// block as the local size (and grid * block as the global size). Thread indices are
// get_local_id/get_group_id, the barrier is barrier(CLK_LOCAL_MEM_FENCE), shared arrays
// are __local, math functions are OpenCL's overloaded built-ins (exp, rsqrt, ...).
// Contiguous vector accesses of 2, 4, 8 or 16 elements are vloadN/vstoreN, which need
// no alignment beyond the element's. The fixed-width integer names the printer uses are
// typedefs; float64 enables cl_khr_fp64. float16 is refused with a UserError.
#pragma once

#include <string>
#include <vector>

#include "compiler/lower/split_host_device.h"

namespace temper {

std::string emit_opencl(const std::vector<DeviceFunction>& fns);

}  // namespace temper
