#include "compiler/runtime/gpu/cuda_device.h"

#include <algorithm>
#include <climits>
#include <map>
#include <unordered_set>
#include <utility>

#include "compiler/ir/error.h"
#include "compiler/runtime/gpu/cuda_driver.h"

namespace temper {
namespace {

using cuda::CUcontext;
using cuda::CudaDriver;
using cuda::CUdevice;
using cuda::CUdeviceptr;
using cuda::CUevent;
using cuda::CUfunction;
using cuda::CUmodule;
using cuda::CUresult;

// Enough to evict any L2 a GPU has had so far (H100/H200: 50 MiB), unless it reports more.
constexpr int64_t kMinFlushBytes = int64_t{64} << 20;

std::string dims_text(const std::array<int64_t, 3>& dims) {
  return str(dims[0], "x", dims[1], "x", dims[2]);
}

int attribute(const CudaDriver& driver, CUdevice device, int which) {
  int value = 0;
  if (driver.cuDeviceGetAttribute(&value, which, device) != cuda::CUDA_SUCCESS) return 0;
  return value;
}

GpuDeviceInfo query_info(const CudaDriver& driver, CUdevice device) {
  GpuDeviceInfo info;
  char name[256] = {};
  if (driver.cuDeviceGetName(name, sizeof name - 1, device) == cuda::CUDA_SUCCESS) info.name = name;
  info.vendor = "NVIDIA";
  int driver_version = 0;
  driver.cuDriverGetVersion(&driver_version);
  info.driver = str("CUDA ", driver_version / 1000, ".", driver_version % 1000 / 10);
  info.version = str("sm_", attribute(driver, device, cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                     attribute(driver, device, cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  info.max_threads_per_block = attribute(driver, device, cuda::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.max_block_dims = {attribute(driver, device, cuda::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
                         attribute(driver, device, cuda::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                         attribute(driver, device, cuda::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)};
  info.max_shared_memory_per_block = attribute(driver, device, cuda::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  info.compute_units = attribute(driver, device, cuda::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  size_t total_bytes = 0;
  if (driver.cuDeviceTotalMem(&total_bytes, device) == cuda::CUDA_SUCCESS) {
    info.global_memory_bytes = static_cast<int64_t>(total_bytes);
  }
  return info;
}

// How many devices the driver sees; UserError "no CUDA device: ..." when none.
int device_count(const CudaDriver& driver) {
  int count = 0;
  if (CUresult result = driver.cuDeviceGetCount(&count); result != cuda::CUDA_SUCCESS) {
    throw UserError(str("no CUDA device: ", cuda::cuda_error_text(driver, result)));
  }
  if (count == 0) throw UserError("no CUDA device: the NVIDIA driver is installed but finds no GPU");
  return count;
}

// The device's primary context, retained while any device object or program uses it.
// Every call into the driver first makes it current, since a device may be used from a
// thread other than the one that opened it.
struct CudaContext {
  CudaContext(const CudaDriver& driver, CUdevice device, std::string device_name)
      : driver(driver), device(device), device_name(std::move(device_name)) {
    check(driver.cuDevicePrimaryCtxRetain(&context, device), "context creation");
  }
  ~CudaContext() {
    if (context) driver.cuDevicePrimaryCtxRelease(device);
  }
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  void make_current() const { check(driver.cuCtxSetCurrent(context), "making its context current"); }

  void check(CUresult result, const std::string& what) const {
    if (result == cuda::CUDA_SUCCESS) return;
    if (result == cuda::CUDA_ERROR_OUT_OF_MEMORY) {
      throw UserError(str("out of device memory on ", device_name, ": ", what, " failed (",
                          cuda::cuda_error_text(driver, result), ")"));
    }
    throw UserError(str("CUDA ", what, " on ", device_name, " failed: ", cuda::cuda_error_text(driver, result)));
  }

  const CudaDriver& driver;
  CUdevice device;
  std::string device_name;
  CUcontext context = nullptr;
};

// A CUDA event destroyed with its owner.
class CudaEvent {
 public:
  explicit CudaEvent(const CudaContext& context) : context_(context) {
    context_.check(context_.driver.cuEventCreate(&event_, cuda::CU_EVENT_DEFAULT), "event creation");
  }
  ~CudaEvent() {
    if (event_) context_.driver.cuEventDestroy(event_);
  }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  CUevent get() const { return event_; }

 private:
  const CudaContext& context_;
  CUevent event_ = nullptr;
};

class CudaProgram final : public GpuProgram {
 public:
  CudaProgram(std::shared_ptr<CudaContext> context, CUmodule module, const GpuDeviceInfo& info)
      : context_(std::move(context)), module_(module), info_(info) {}
  ~CudaProgram() override {
    if (context_->driver.cuCtxSetCurrent(context_->context) == cuda::CUDA_SUCCESS) {
      context_->driver.cuModuleUnload(module_);
    }
  }
  CudaProgram(const CudaProgram&) = delete;
  CudaProgram& operator=(const CudaProgram&) = delete;

  void launch(const std::string& name, const LaunchDims& dims, const KernelArgs& args) override {
    context_->make_current();
    CUfunction f = function(name);
    int64_t threads = dims.block[0] * dims.block[1] * dims.block[2];
    if (threads > info_.max_threads_per_block) {
      throw UserError(str("CUDA launch of kernel '", name, "' on ", context_->device_name, ": a block of ",
                          dims_text(dims.block), " = ", threads, " threads is over the device's limit of ",
                          info_.max_threads_per_block));
    }
    unsigned grid[3];
    unsigned block[3];
    for (int d = 0; d < 3; ++d) {
      TEMPER_CHECK(dims.grid[d] >= 1 && dims.block[d] >= 1, "launch of '", name, "' with an empty grid or block");
      TEMPER_CHECK(dims.grid[d] <= UINT_MAX && dims.block[d] <= UINT_MAX, "launch dimension past 32 bits");
      grid[d] = static_cast<unsigned>(dims.grid[d]);
      block[d] = static_cast<unsigned>(dims.block[d]);
    }
    // The driver takes a pointer to each argument's value.
    std::vector<CUdeviceptr> values(args.size());
    std::vector<void*> params(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      values[i] = args[i].handle;
      params[i] = &values[i];
    }
    CUresult result = context_->driver.cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                                      /*shared_bytes=*/0, /*stream=*/nullptr, params.data(), nullptr);
    if (result != cuda::CUDA_SUCCESS) {
      std::string message =
          str("CUDA launch of kernel '", name, "' (grid ", dims_text(dims.grid), ", block ", dims_text(dims.block),
              ") on ", context_->device_name, " failed: ", cuda::cuda_error_text(context_->driver, result));
      if (result == cuda::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) {
        message += "; a block of this size needs more registers or shared memory than the device has";
      }
      throw UserError(message);
    }
  }

  bool from_cache() const override { return false; }

 private:
  // Looked up once per name: a timing loop launches the same kernel many times.
  CUfunction function(const std::string& name) {
    auto found = functions_.find(name);
    if (found != functions_.end()) return found->second;
    CUfunction f = nullptr;
    CUresult result = context_->driver.cuModuleGetFunction(&f, module_, name.c_str());
    if (result == cuda::CUDA_ERROR_NOT_FOUND) {
      throw UserError(str("CUDA module on ", context_->device_name, " has no kernel '", name, "'"));
    }
    context_->check(result, str("lookup of kernel '", name, "'"));
    functions_.emplace(name, f);
    return f;
  }

  std::shared_ptr<CudaContext> context_;
  CUmodule module_;
  GpuDeviceInfo info_;
  std::map<std::string, CUfunction> functions_;
};

// The ".target sm_XY" line of a PTX text, to say which architecture a failed load asked for.
std::string ptx_target(const std::string& ptx) {
  size_t at = ptx.find(".target");
  if (at == std::string::npos) return "";
  size_t end = ptx.find('\n', at);
  return ptx.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

class CudaDevice final : public GpuDevice {
 public:
  CudaDevice(const CudaDriver& driver, CUdevice device)
      : info_(query_info(driver, device)),
        context_(std::make_shared<CudaContext>(driver, device, info_.name)),
        l2_bytes_(attribute(driver, device, cuda::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)) {}

  ~CudaDevice() override {
    // Destructors do not throw: a device that fails here is past saving.
    if (context_->driver.cuCtxSetCurrent(context_->context) != cuda::CUDA_SUCCESS) return;
    context_->driver.cuCtxSynchronize();
    for (uint64_t handle : live_) context_->driver.cuMemFree(handle);
    if (flush_buffer_) context_->driver.cuMemFree(flush_buffer_);
  }

  Target::Kind kind() const override { return Target::Kind::CUDA; }
  const GpuDeviceInfo& info() const override { return info_; }

  DeviceMemory alloc(int64_t bytes) override {
    TEMPER_CHECK(bytes >= 0, "alloc of ", bytes, " bytes");
    context_->make_current();
    CUdeviceptr pointer = 0;
    // The driver refuses empty allocations; a zero-byte tensor still needs a pointer to pass.
    CUresult result = context_->driver.cuMemAlloc(&pointer, std::max<size_t>(bytes, 1));
    if (result == cuda::CUDA_ERROR_OUT_OF_MEMORY) {
      size_t free_bytes = 0;
      size_t total_bytes = 0;
      context_->driver.cuMemGetInfo(&free_bytes, &total_bytes);
      throw UserError(str("out of device memory allocating ", bytes, " bytes on ", info_.name, " (", free_bytes, " of ",
                          total_bytes, " bytes free)"));
    }
    context_->check(result, str("allocation of ", bytes, " bytes"));
    live_.insert(pointer);
    return DeviceMemory{pointer, bytes};
  }

  void free(DeviceMemory memory) override {
    TEMPER_CHECK(live_.erase(memory.handle) == 1, "free of memory this device did not allocate or already freed");
    context_->make_current();
    context_->check(context_->driver.cuMemFree(memory.handle), "free");
  }

  void copy_from_host(DeviceMemory dst, const void* src, int64_t bytes) override {
    TEMPER_CHECK(bytes >= 0 && bytes <= dst.bytes, "copy of ", bytes, " bytes into a buffer of ", dst.bytes);
    if (bytes == 0) return;
    context_->make_current();
    context_->check(context_->driver.cuMemcpyHtoD(dst.handle, src, bytes),
                    str("copy of ", bytes, " bytes to the device"));
  }

  void copy_to_host(void* dst, DeviceMemory src, int64_t bytes) override {
    TEMPER_CHECK(bytes >= 0 && bytes <= src.bytes, "copy of ", bytes, " bytes out of a buffer of ", src.bytes);
    if (bytes == 0) return;
    context_->make_current();
    context_->check(context_->driver.cuMemcpyDtoH(dst, src.handle, bytes),
                    str("copy of ", bytes, " bytes from the device"));
  }

  void synchronize() override {
    context_->make_current();
    context_->check(context_->driver.cuCtxSynchronize(), "queued work");
  }

  std::shared_ptr<GpuProgram> load_program(const std::string& ptx) override {
    context_->make_current();
    std::string log(8192, '\0');
    cuda::CUjit_option options[] = {cuda::CU_JIT_ERROR_LOG_BUFFER, cuda::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {log.data(), reinterpret_cast<void*>(log.size())};
    CUmodule module = nullptr;
    // ptx.c_str() is NUL-terminated, as the driver needs PTX text to be.
    CUresult result = context_->driver.cuModuleLoadDataEx(&module, ptx.c_str(), 2, options, values);
    if (result != cuda::CUDA_SUCCESS) {
      log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
      std::string target = ptx_target(ptx);
      throw UserError(str("PTX does not load on ", info_.name, " (", info_.version,
                          "): ", cuda::cuda_error_text(context_->driver, result),
                          target.empty() ? "" : str("; the PTX asks for '", target, "'"),
                          log.empty() ? "" : str("\n", log)));
    }
    return std::make_shared<CudaProgram>(context_, module, info_);
  }

  double time_on_device(const std::function<void()>& work) override {
    context_->make_current();
    CudaEvent start(*context_);
    CudaEvent stop(*context_);
    context_->check(context_->driver.cuEventRecord(start.get(), nullptr), "event record");
    work();
    context_->make_current();
    context_->check(context_->driver.cuEventRecord(stop.get(), nullptr), "event record");
    // A launch that failed while running reports it here.
    context_->check(context_->driver.cuEventSynchronize(stop.get()), "queued work");
    float milliseconds = 0;
    context_->check(context_->driver.cuEventElapsedTime(&milliseconds, start.get(), stop.get()), "event timing");
    return milliseconds * 1e-3;
  }

  void flush_cache() override {
    context_->make_current();
    if (!flush_buffer_) {
      flush_bytes_ = std::max<int64_t>(kMinFlushBytes, 2 * int64_t{l2_bytes_});
      CUresult result = context_->driver.cuMemAlloc(&flush_buffer_, flush_bytes_);
      if (result != cuda::CUDA_SUCCESS) {
        flush_buffer_ = 0;
        throw UserError(str("out of device memory allocating ", flush_bytes_, " bytes on ", info_.name,
                            " to flush its cache (", cuda::cuda_error_text(context_->driver, result), ")"));
      }
    }
    // A new value each time, so that no driver can skip the writes as redundant.
    context_->check(context_->driver.cuMemsetD32(flush_buffer_, ++flush_count_, flush_bytes_ / 4), "cache flush");
    synchronize();
  }

 private:
  GpuDeviceInfo info_;
  std::shared_ptr<CudaContext> context_;
  int l2_bytes_;
  // Allocations not yet freed, released with the device.
  std::unordered_set<CUdeviceptr> live_;
  CUdeviceptr flush_buffer_ = 0;
  int64_t flush_bytes_ = 0;
  unsigned flush_count_ = 0;
};

}  // namespace

std::unique_ptr<GpuDevice> open_cuda_device(const Target& target) {
  const CudaDriver& driver = cuda::cuda_driver();
  int count = device_count(driver);
  if (target.device < 0 || target.device >= count) {
    std::string names;
    for (int i = 0; i < count; ++i) {
      CUdevice device = 0;
      driver.cuDeviceGet(&device, i);
      names += str(i == 0 ? "" : ", ", i, ": ", query_info(driver, device).name);
    }
    throw UserError(str("no CUDA device ", target.device, ": this machine has ", count, " (", names,
                        "); pick one with 'cuda -device=N'"));
  }
  CUdevice device = 0;
  if (CUresult result = driver.cuDeviceGet(&device, target.device); result != cuda::CUDA_SUCCESS) {
    throw UserError(str("no CUDA device ", target.device, ": ", cuda::cuda_error_text(driver, result)));
  }
  return std::make_unique<CudaDevice>(driver, device);
}

std::vector<GpuDeviceInfo> list_cuda_devices() {
  const CudaDriver& driver = cuda::cuda_driver();
  std::vector<GpuDeviceInfo> infos;
  int count = device_count(driver);
  for (int i = 0; i < count; ++i) {
    CUdevice device = 0;
    if (driver.cuDeviceGet(&device, i) == cuda::CUDA_SUCCESS) infos.push_back(query_info(driver, device));
  }
  return infos;
}

}  // namespace temper
