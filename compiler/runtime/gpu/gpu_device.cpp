#include "compiler/runtime/gpu/gpu_device.h"

#include "compiler/ir/error.h"
#include "compiler/runtime/gpu/cuda_device.h"
#include "compiler/runtime/gpu/cuda_driver.h"
#include "compiler/runtime/gpu/opencl_device.h"

namespace temper {

std::string GpuDeviceInfo::fingerprint() const {
  return str(name, " | ", driver, " | ", version);
}

std::unique_ptr<GpuDevice> open_gpu_device(const Target& target) {
  switch (target.kind) {
    case Target::Kind::CUDA:
      return open_cuda_device(target);
    case Target::Kind::OpenCL:
      return open_opencl_device(target);
    case Target::Kind::LLVM:
    case Target::Kind::C:
      break;
  }
  throw UserError(
      str("target '", target.to_string(), "' runs on the CPU, not on a GPU device; use a cuda or opencl target"));
}

std::vector<GpuAvailability> probe_gpu_targets() {
  GpuAvailability cuda;
  cuda.kind = Target::Kind::CUDA;
  if (!cuda::cuda_driver_library_present()) {
    cuda.reason = "libcuda.so.1 not found (no NVIDIA driver): install the NVIDIA driver to run the cuda target";
  } else {
    try {
      cuda.devices = list_cuda_devices();
      cuda.available = true;
    } catch (const UserError& e) {
      cuda.reason = e.what();
    }
  }
  GpuAvailability opencl;
  opencl.kind = Target::Kind::OpenCL;
  try {
    opencl.devices = list_opencl_devices();
    opencl.available = true;
  } catch (const UserError& e) {
    opencl.reason = e.what();
  }
  return {cuda, opencl};
}

}  // namespace temper
