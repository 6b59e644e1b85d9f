#include "benchmarks/cublas.h"

#include <dlfcn.h>

#include "compiler/ir/error.h"

namespace temper::bench {
namespace {

using Create = int (*)(void**);
using Destroy = int (*)(void*);
using GetVersion = int (*)(void*, int*);
using Sgemm = int (*)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int,
                      const float*, float*, int);

template <typename F>
F symbol(void* library, const char* name) {
  return reinterpret_cast<F>(dlsym(library, name));
}

}  // namespace

CublasSgemm::CublasSgemm() {
  for (const char* name : {"libcublas.so", "libcublas.so.13", "libcublas.so.12", "/usr/local/cuda/lib64/libcublas.so"}) {
    if ((library_ = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
  }
  if (!library_) throw UserError("cuBLAS (libcublas.so) not found: install the CUDA Toolkit's cuBLAS");
  auto create = symbol<Create>(library_, "cublasCreate_v2");
  auto get_version = symbol<GetVersion>(library_, "cublasGetVersion_v2");
  sgemm_ = dlsym(library_, "cublasSgemm_v2");
  int status = create && sgemm_ ? create(&handle_) : -1;
  if (status != 0) {
    dlclose(library_);
    throw UserError(str("cuBLAS could not be initialised (cublasCreate status ", status,
                        "): check the CUDA driver with `temper devices`"));
  }
  if (get_version) get_version(handle_, &version_);
}

CublasSgemm::~CublasSgemm() {
  if (auto destroy = symbol<Destroy>(library_, "cublasDestroy_v2")) destroy(handle_);
  dlclose(library_);
}

void CublasSgemm::run(int64_t m, int64_t n, int64_t k, DeviceMemory a, DeviceMemory b, DeviceMemory c) {
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) throw UserError("cuBLAS: a GEMM dimension exceeds 2^31");
  const float one = 1, zero = 0;
  auto ptr = [](DeviceMemory d) { return reinterpret_cast<float*>(static_cast<uintptr_t>(d.handle)); };
  // Row-major C = A x B is column-major C^T = B^T x A^T: no transposes, operands swapped.
  int in = static_cast<int>(n), im = static_cast<int>(m), ik = static_cast<int>(k);
  int status = reinterpret_cast<Sgemm>(sgemm_)(handle_, 0, 0, in, im, ik, &one, ptr(b), in, ptr(a), ik, &zero, ptr(c), in);
  if (status != 0) throw UserError(str("cublasSgemm failed with status ", status));
}

std::string CublasSgemm::version() const {
  if (version_ <= 0) return "cuBLAS";
  return str("cuBLAS ", version_ / 10000, ".", version_ / 100 % 100, ".", version_ % 100);
}

}  // namespace temper::bench
