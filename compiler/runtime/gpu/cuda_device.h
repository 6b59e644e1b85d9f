// The CUDA implementation of GpuDevice (gpu_device.h), over the driver API loaded at run
// time (cuda_driver.h): programs are PTX text, loaded with cuModuleLoadDataEx. Private to
// compiler/runtime/gpu: the rest of Temper calls open_gpu_device.
#pragma once

#include <memory>
#include <vector>

#include "compiler/runtime/gpu/gpu_device.h"

namespace temper {

// Device ordinal target.device. UserError "no CUDA device: ..." when the driver cannot be
// loaded or initialised or finds no device, or naming the devices there are when the
// ordinal is past them.
std::unique_ptr<GpuDevice> open_cuda_device(const Target& target);

// Every CUDA device, by ordinal. UserError as open_cuda_device when there is none.
std::vector<GpuDeviceInfo> list_cuda_devices();

}  // namespace temper
