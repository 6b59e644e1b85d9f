// The CPU DeviceAPI: host memory, the same allocator generated code uses.
#include <cstring>

#include "compiler/ir/error.h"
#include "compiler/runtime/c_runtime_api.h"
#include "compiler/runtime/device_api.h"

namespace temper {
namespace {

class CPUDeviceAPI final : public DeviceAPI {
 public:
  void* alloc(int64_t bytes) override {
    void* p = temper_alloc(bytes);
    if (!p) throw UserError(temper_get_last_error());
    return p;
  }
  void free(void* ptr) override { temper_free(ptr); }
  void copy_from_host(void* dst, const void* src, int64_t bytes) override {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
  }
  void copy_to_host(void* dst, const void* src, int64_t bytes) override {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
  }
  void synchronize() override {}
};

}  // namespace

DeviceAPI& cpu_device_api() {
  static CPUDeviceAPI api;
  return api;
}

}  // namespace temper
