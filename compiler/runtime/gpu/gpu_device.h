// A GPU as the rest of Temper uses it: device memory, compiled programs, launches and
// their times. Two implementations: CUDA (the driver API, loaded at run time with
// dlopen("libcuda.so.1"), so Temper starts on machines without one) and OpenCL (through
// the ICD loader; PoCL is the CPU device here).
//
//   std::unique_ptr<GpuDevice> dev = open_gpu_device(Target::parse("opencl"));
//   DeviceMemory a = dev->alloc(bytes);  dev->copy_from_host(a, host, bytes);
//   std::shared_ptr<GpuProgram> p = dev->load_program(source_or_ptx);
//   p->launch("f_kernel0", {grid}, {block}, {a, b, c});
//   double seconds = dev->time_on_device([&] { p->launch(...); });
//
// Every failure (no platform or driver, a program that does not build, a launch that
// fails, out of device memory) throws UserError naming the device and what the driver
// said; none crashes the process.
//
// A device is used from one thread at a time. Programs keep the device's context alive,
// so they may outlive the GpuDevice object; allocations still live when it is destroyed
// are freed with it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/target/target.h"

namespace temper {

// What a device is and what a kernel may use on it.
struct GpuDeviceInfo {
  std::string name;     // "NVIDIA H200", "pthread-AMD EPYC 7B13"
  std::string vendor;   // "NVIDIA", "AuthenticAMD" (PoCL names the CPU's vendor)
  std::string driver;   // "CUDA 12.8" (cuDriverGetVersion), "3.1+debian" (CL_DRIVER_VERSION)
  std::string version;  // "sm_90" (compute capability) or "OpenCL 3.0 PoCL ..."
  int max_threads_per_block = 0;
  std::array<int64_t, 3> max_block_dims{0, 0, 0};
  int64_t max_shared_memory_per_block = 0;
  int compute_units = 0;
  int64_t global_memory_bytes = 0;
  // "name | driver | version": what the tuning log keys a measurement's hardware by.
  std::string fingerprint() const;
};

// A device allocation: a CUdeviceptr or a cl_mem, as the device's kernels take it.
struct DeviceMemory {
  uint64_t handle = 0;
  int64_t bytes = 0;
};

// One argument of a launch: a device buffer.
using KernelArgs = std::vector<DeviceMemory>;

struct LaunchDims {
  std::array<int64_t, 3> grid{1, 1, 1};   // blocks (CUDA) / work-groups (OpenCL) per axis
  std::array<int64_t, 3> block{1, 1, 1};  // threads per block / work-items per group
};

class GpuProgram {
 public:
  virtual ~GpuProgram() = default;
  // Queues kernel `name` (UserError if the program has none of that name, or the launch
  // is refused); returns without waiting for it.
  virtual void launch(const std::string& name, const LaunchDims& dims, const KernelArgs& args) = 0;
  // Whether load_program found this program's binary in Temper's on-disk cache instead of
  // building it (OpenCL; a CUDA module is always loaded from its PTX).
  virtual bool from_cache() const = 0;
};

class GpuDevice {
 public:
  virtual ~GpuDevice() = default;
  virtual Target::Kind kind() const = 0;
  virtual const GpuDeviceInfo& info() const = 0;

  // UserError "out of device memory" naming the size when it fails.
  virtual DeviceMemory alloc(int64_t bytes) = 0;
  virtual void free(DeviceMemory memory) = 0;
  virtual void copy_from_host(DeviceMemory dst, const void* src, int64_t bytes) = 0;
  virtual void copy_to_host(void* dst, DeviceMemory src, int64_t bytes) = 0;
  // Waits for all queued work; a failure of a queued launch surfaces here as UserError.
  virtual void synchronize() = 0;

  // Builds (OpenCL C source) or loads (PTX) a program. OpenCL binaries are cached on
  // disk by source and device, so the same source builds once. UserError with the
  // build log when it does not build.
  virtual std::shared_ptr<GpuProgram> load_program(const std::string& code) = 0;

  // Seconds the device spent on the launches `work` queues, measured by the device and
  // waiting for them to finish: OpenCL sums each launch's profiling times (0 when work
  // launched nothing); CUDA takes the time between events recorded before and after work.
  // A failure of one of the launches throws UserError.
  virtual double time_on_device(const std::function<void()>& work) = 0;

  // Overwrites a buffer larger than the device's last-level cache (64 MiB at least), so
  // that the next launch starts cold (the runner's flush_cache); waits for it. Call it
  // between time_on_device calls, not inside their work.
  virtual void flush_cache() = 0;
};

// The device of a GPU target (target.device picks one). UserError when the machine has
// none: "no CUDA device: libcuda.so.1 cannot be loaded (...)", "no OpenCL platform ...".
std::unique_ptr<GpuDevice> open_gpu_device(const Target& target);

// Why each GPU target kind can or cannot run here, for `temper devices`: one line per
// device found, or one line saying why there is none.
struct GpuAvailability {
  Target::Kind kind;
  bool available = false;
  std::vector<GpuDeviceInfo> devices;
  std::string reason;  // when not available: what is missing and what to install
};
std::vector<GpuAvailability> probe_gpu_targets();

}  // namespace temper
