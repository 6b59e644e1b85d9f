// The few entry points of the CUDA driver API that Temper calls, loaded at run time with
// dlopen("libcuda.so.1"). Temper never includes cuda.h nor links libcuda: a program linked
// against it (even the toolkit's stub) does not start on a machine without the NVIDIA
// driver, and Temper must start everywhere and say why the cuda target cannot run.
//
// The types and constants below are those of cuda.h (ABI-stable since CUDA 4); the entry
// points are the versioned symbols cuda.h's macros select (cuMemAlloc is cuMemAlloc_v2 ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace temper::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT: cuda.h's exact type
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUjit_option = int;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr CUresult CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;

constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

constexpr unsigned CU_EVENT_DEFAULT = 0;

// The driver's entry points, all resolved when the library loads.
struct CudaDriver {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDriverGetVersion)(int* version);
  CUresult (*cuGetErrorName)(CUresult error, const char** name);
  CUresult (*cuGetErrorString)(CUresult error, const char** description);
  CUresult (*cuDeviceGetCount)(int* count);
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);
  CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device);
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);
  CUresult (*cuDeviceTotalMem)(size_t* bytes, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);
  CUresult (*cuCtxSetCurrent)(CUcontext context);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemAlloc)(CUdeviceptr* pointer, size_t bytes);
  CUresult (*cuMemFree)(CUdeviceptr pointer);
  CUresult (*cuMemGetInfo)(size_t* free_bytes, size_t* total_bytes);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes);
  CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes);
  CUresult (*cuMemsetD32)(CUdeviceptr dst, unsigned value, size_t count);
  CUresult (*cuModuleLoadDataEx)(CUmodule* module, const void* image, unsigned num_options, CUjit_option* options,
                                 void** option_values);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
                             unsigned block_y, unsigned block_z, unsigned shared_bytes, CUstream stream, void** params,
                             void** extra);
  CUresult (*cuEventCreate)(CUevent* event, unsigned flags);
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuEventElapsedTime)(float* milliseconds, CUevent start, CUevent end);
  CUresult (*cuEventDestroy)(CUevent event);
};

// The driver, loaded and initialised (cuInit) on first use and kept for the life of the
// process. UserError "no CUDA device: libcuda.so.1 cannot be loaded (...)" without the
// library, "no CUDA device: <error name>" when cuInit fails (no GPU, driver mismatch).
const CudaDriver& cuda_driver();

// Whether libcuda.so.1 can be loaded at all (whether or not it then finds a GPU).
bool cuda_driver_library_present();

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)": the driver's name and description of an error.
std::string cuda_error_text(const CudaDriver& driver, CUresult result);

}  // namespace temper::cuda
