// cuBLAS's sgemm, the vendor baseline of a CUDA matmul (benchmarks/gpu_matmul, and
// temper-baseline's `cublas` for temper sweep). Loaded with dlopen, so that nothing links
// cuBLAS; it runs on the device buffers of Temper's CUDA device (open_gpu_device), whose
// primary context it shares.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/runtime/gpu/gpu_device.h"

namespace temper::bench {

class CublasSgemm {
 public:
  // UserError when libcublas is not found or does not initialise (no device, a driver
  // too old for it).
  CublasSgemm();
  ~CublasSgemm();
  CublasSgemm(const CublasSgemm&) = delete;
  CublasSgemm& operator=(const CublasSgemm&) = delete;

  // C[M,N] = A[M,K] x B[K,N], row-major, queued on the default stream; UserError when
  // cuBLAS refuses it.
  void run(int64_t m, int64_t n, int64_t k, DeviceMemory a, DeviceMemory b, DeviceMemory c);
  // "cuBLAS 12.8.4"
  std::string version() const;

 private:
  void* library_ = nullptr;
  void* handle_ = nullptr;
  void* sgemm_ = nullptr;  // cublasSgemm_v2
  int version_ = 0;
};

}  // namespace temper::bench
