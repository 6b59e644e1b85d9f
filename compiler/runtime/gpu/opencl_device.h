// The OpenCL implementation of GpuDevice (gpu_device.h), through the ICD loader: any
// vendor's platform, PoCL on a CPU-only machine. Private to compiler/runtime/gpu: the rest
// of Temper calls open_gpu_device.
#pragma once

#include <memory>
#include <vector>

#include "compiler/runtime/gpu/gpu_device.h"

namespace temper {

// Device target.device of the list below. UserError "no OpenCL platform: ..." when the
// machine has no ICD, or naming the devices there are when the index is past them.
std::unique_ptr<GpuDevice> open_opencl_device(const Target& target);

// Every device of every platform, platforms in the ICD loader's order: the list that
// "opencl -device=N" indexes. UserError when there is no platform or no device.
std::vector<GpuDeviceInfo> list_opencl_devices();

}  // namespace temper
