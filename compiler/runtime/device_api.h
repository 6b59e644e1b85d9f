// Memory on a device, behind one small interface per device type. The CPU's is here;
// the CUDA and OpenCL runtimes add theirs. NDArray allocates through it.
#pragma once

#include <cstdint>

namespace temper {

class DeviceAPI {
 public:
  virtual ~DeviceAPI() = default;
  // At least `bytes` bytes, 64-byte aligned; throws UserError when out of memory.
  virtual void* alloc(int64_t bytes) = 0;
  virtual void free(void* ptr) = 0;
  virtual void copy_from_host(void* device_dst, const void* host_src, int64_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* device_src, int64_t bytes) = 0;
  // Returns once all work queued on the device has finished.
  virtual void synchronize() = 0;
};

// The host: memory from temper_alloc, copies with memcpy, nothing to wait for.
DeviceAPI& cpu_device_api();

}  // namespace temper
