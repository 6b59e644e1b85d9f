#include "compiler/runtime/gpu/cuda_driver.h"

#include <dlfcn.h>

#include "compiler/ir/error.h"

namespace temper::cuda {
namespace {

struct LoadedDriver {
  CudaDriver driver{};
  bool library_present = false;
  // Why the driver cannot be used (the UserError message); empty when it can.
  std::string error;
};

// Points entry at the library's symbol; on failure appends the name to missing.
template <typename Function>
void resolve(void* library, const char* symbol, Function*& entry, std::string& missing) {
  entry = reinterpret_cast<Function*>(dlsym(library, symbol));
  if (!entry) missing += str(missing.empty() ? "" : ", ", symbol);
}

LoadedDriver load_driver() {
  LoadedDriver loaded;
  // Never closed: the driver stays mapped for the life of the process, as the CUDA
  // runtime does, so no context outlives its library.
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = dlerror();
    loaded.error = str("no CUDA device: libcuda.so.1 cannot be loaded (", why ? why : "unknown dlopen error",
                       "); the cuda target needs an NVIDIA driver");
    return loaded;
  }
  loaded.library_present = true;
  CudaDriver& d = loaded.driver;
  std::string missing;
  resolve(library, "cuInit", d.cuInit, missing);
  resolve(library, "cuDriverGetVersion", d.cuDriverGetVersion, missing);
  resolve(library, "cuGetErrorName", d.cuGetErrorName, missing);
  resolve(library, "cuGetErrorString", d.cuGetErrorString, missing);
  resolve(library, "cuDeviceGetCount", d.cuDeviceGetCount, missing);
  resolve(library, "cuDeviceGet", d.cuDeviceGet, missing);
  resolve(library, "cuDeviceGetName", d.cuDeviceGetName, missing);
  resolve(library, "cuDeviceGetAttribute", d.cuDeviceGetAttribute, missing);
  resolve(library, "cuDeviceTotalMem_v2", d.cuDeviceTotalMem, missing);
  resolve(library, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, missing);
  resolve(library, "cuDevicePrimaryCtxRelease_v2", d.cuDevicePrimaryCtxRelease, missing);
  resolve(library, "cuCtxSetCurrent", d.cuCtxSetCurrent, missing);
  resolve(library, "cuCtxSynchronize", d.cuCtxSynchronize, missing);
  resolve(library, "cuMemAlloc_v2", d.cuMemAlloc, missing);
  resolve(library, "cuMemFree_v2", d.cuMemFree, missing);
  resolve(library, "cuMemGetInfo_v2", d.cuMemGetInfo, missing);
  resolve(library, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD, missing);
  resolve(library, "cuMemcpyDtoH_v2", d.cuMemcpyDtoH, missing);
  resolve(library, "cuMemsetD32_v2", d.cuMemsetD32, missing);
  resolve(library, "cuModuleLoadDataEx", d.cuModuleLoadDataEx, missing);
  resolve(library, "cuModuleUnload", d.cuModuleUnload, missing);
  resolve(library, "cuModuleGetFunction", d.cuModuleGetFunction, missing);
  resolve(library, "cuLaunchKernel", d.cuLaunchKernel, missing);
  resolve(library, "cuEventCreate", d.cuEventCreate, missing);
  resolve(library, "cuEventRecord", d.cuEventRecord, missing);
  resolve(library, "cuEventSynchronize", d.cuEventSynchronize, missing);
  resolve(library, "cuEventElapsedTime", d.cuEventElapsedTime, missing);
  resolve(library, "cuEventDestroy_v2", d.cuEventDestroy, missing);
  if (!missing.empty()) {
    loaded.error = str("no CUDA device: libcuda.so.1 lacks ", missing, "; update the NVIDIA driver");
    return loaded;
  }
  if (CUresult result = d.cuInit(0); result != CUDA_SUCCESS) {
    loaded.error = str("no CUDA device: ", cuda_error_text(d, result));
  }
  return loaded;
}

const LoadedDriver& loaded_driver() {
  static const LoadedDriver loaded = load_driver();
  return loaded;
}

}  // namespace

const CudaDriver& cuda_driver() {
  const LoadedDriver& loaded = loaded_driver();
  if (!loaded.error.empty()) throw UserError(loaded.error);
  return loaded.driver;
}

bool cuda_driver_library_present() {
  return loaded_driver().library_present;
}

std::string cuda_error_text(const CudaDriver& driver, CUresult result) {
  const char* name = nullptr;
  const char* description = nullptr;
  if (driver.cuGetErrorName(result, &name) != CUDA_SUCCESS || !name) return str("CUDA error ", result);
  if (driver.cuGetErrorString(result, &description) != CUDA_SUCCESS || !description) return name;
  return str(name, " (", description, ")");
}

}  // namespace temper::cuda
