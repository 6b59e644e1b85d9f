#include "compiler/runtime/gpu/opencl_device.h"

#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <unordered_set>
#include <utility>

#include "compiler/ir/error.h"
#include "compiler/runtime/gpu/opencl_error.h"
#include "compiler/runtime/gpu/program_binary_cache.h"

namespace temper {
namespace {

// Releases each kind of OpenCL object; ClPtr<cl_mem> and friends own one reference.
struct ClRelease {
  void operator()(cl_context object) const { clReleaseContext(object); }
  void operator()(cl_command_queue object) const { clReleaseCommandQueue(object); }
  void operator()(cl_mem object) const { clReleaseMemObject(object); }
  void operator()(cl_program object) const { clReleaseProgram(object); }
  void operator()(cl_kernel object) const { clReleaseKernel(object); }
  void operator()(cl_event object) const { clReleaseEvent(object); }
};
template <typename Handle>
using ClPtr = std::unique_ptr<std::remove_pointer_t<Handle>, ClRelease>;

// Enough to evict any last-level cache a device has had so far, unless it reports more.
constexpr int64_t kMinFlushBytes = int64_t{64} << 20;

struct ClDeviceRef {
  cl_platform_id platform;
  cl_device_id device;
};

std::string device_string(cl_device_id device, cl_device_info param) {
  size_t size = 0;
  if (clGetDeviceInfo(device, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string text(size, '\0');
  if (clGetDeviceInfo(device, param, size, text.data(), nullptr) != CL_SUCCESS) return "";
  while (!text.empty() && (text.back() == '\0' || text.back() == ' ')) text.pop_back();
  return text;
}

template <typename T>
T device_value(cl_device_id device, cl_device_info param) {
  T value{};
  if (clGetDeviceInfo(device, param, sizeof(T), &value, nullptr) != CL_SUCCESS) return T{};
  return value;
}

std::string platform_string(cl_platform_id platform, cl_platform_info param) {
  size_t size = 0;
  if (clGetPlatformInfo(platform, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "?";
  std::string text(size, '\0');
  if (clGetPlatformInfo(platform, param, size, text.data(), nullptr) != CL_SUCCESS) return "?";
  text.resize(text.find('\0') == std::string::npos ? text.size() : text.find('\0'));
  return text;
}

GpuDeviceInfo query_info(cl_device_id device) {
  GpuDeviceInfo info;
  info.name = device_string(device, CL_DEVICE_NAME);
  info.vendor = device_string(device, CL_DEVICE_VENDOR);
  info.driver = device_string(device, CL_DRIVER_VERSION);
  info.version = device_string(device, CL_DEVICE_VERSION);
  info.max_threads_per_block = static_cast<int>(device_value<size_t>(device, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  // OpenCL guarantees at least three work-item dimensions.
  size_t item_sizes[3] = {};
  if (clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof item_sizes, item_sizes, nullptr) == CL_SUCCESS) {
    for (int d = 0; d < 3; ++d) info.max_block_dims[d] = static_cast<int64_t>(item_sizes[d]);
  }
  info.max_shared_memory_per_block = static_cast<int64_t>(device_value<cl_ulong>(device, CL_DEVICE_LOCAL_MEM_SIZE));
  info.compute_units = static_cast<int>(device_value<cl_uint>(device, CL_DEVICE_MAX_COMPUTE_UNITS));
  info.global_memory_bytes = static_cast<int64_t>(device_value<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_SIZE));
  return info;
}

// Every device of every platform, in the order "opencl -device=N" counts them.
std::vector<ClDeviceRef> enumerate_devices() {
  const std::string no_platform = "no OpenCL platform: install an ICD such as pocl-opencl-icd";
  cl_uint platform_count = 0;
  cl_int error = clGetPlatformIDs(0, nullptr, &platform_count);
  // The ICD loader answers CL_PLATFORM_NOT_FOUND_KHR when no vendor file is installed.
  if (error == CL_PLATFORM_NOT_FOUND_KHR || (error == CL_SUCCESS && platform_count == 0)) throw UserError(no_platform);
  if (error != CL_SUCCESS) throw UserError(str(no_platform, " (clGetPlatformIDs: ", cl_error_name(error), ")"));
  std::vector<cl_platform_id> platforms(platform_count);
  error = clGetPlatformIDs(platform_count, platforms.data(), nullptr);
  if (error != CL_SUCCESS) throw UserError(str(no_platform, " (clGetPlatformIDs: ", cl_error_name(error), ")"));

  std::vector<ClDeviceRef> devices;
  std::string platforms_without_devices;
  for (cl_platform_id platform : platforms) {
    cl_uint device_count = 0;
    error = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &device_count);
    if (error != CL_SUCCESS || device_count == 0) {
      platforms_without_devices +=
          str(platforms_without_devices.empty() ? "" : ", ", platform_string(platform, CL_PLATFORM_NAME));
      continue;
    }
    std::vector<cl_device_id> ids(device_count);
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, device_count, ids.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id id : ids) devices.push_back({platform, id});
  }
  if (devices.empty()) {
    throw UserError(str("no OpenCL device: the OpenCL platforms here (", platforms_without_devices,
                        ") have none; install an ICD with a device, such as pocl-opencl-icd"));
  }
  return devices;
}

// OpenCL binaries go to their own folder of Temper's cache; none without a cache folder.
std::string opencl_cache_folder() {
  std::string folder = temper_cache_dir();
  return folder.empty() ? "" : folder + "/opencl";
}

std::string dims_text(const std::array<int64_t, 3>& dims) {
  return str(dims[0], "x", dims[1], "x", dims[2]);
}

cl_mem as_cl_mem(const DeviceMemory& memory) {
  return reinterpret_cast<cl_mem>(static_cast<uintptr_t>(memory.handle));
}

// What a device and the programs built on it share: the context, the queue, and the
// launches time_on_device is collecting. Programs hold it too, so a program may outlive
// the GpuDevice object that built it.
struct ClContext {
  cl_device_id device = nullptr;
  std::string device_name;
  ClPtr<cl_context> context;
  ClPtr<cl_command_queue> queue;
  // While time_on_device runs its work: where launches put their profiling events.
  std::vector<cl_event>* recording = nullptr;
};

class OpenClProgram final : public GpuProgram {
 public:
  OpenClProgram(std::shared_ptr<ClContext> cl, ClPtr<cl_program> program, bool from_cache)
      : cl_(std::move(cl)), program_(std::move(program)), from_cache_(from_cache) {}

  void launch(const std::string& name, const LaunchDims& dims, const KernelArgs& args) override {
    cl_kernel k = kernel(name);
    cl_uint arg_count = 0;
    clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof arg_count, &arg_count, nullptr);
    if (arg_count != args.size()) {
      throw UserError(
          str("OpenCL kernel '", name, "' takes ", arg_count, " arguments; the launch passed ", args.size()));
    }
    for (cl_uint i = 0; i < arg_count; ++i) {
      cl_mem buffer = as_cl_mem(args[i]);
      cl_int error = clSetKernelArg(k, i, sizeof buffer, &buffer);
      if (error != CL_SUCCESS) {
        throw UserError(str("OpenCL kernel '", name, "' refuses argument ", i, " on ", cl_->device_name, ": ",
                            cl_error_name(error)));
      }
    }
    size_t global[3];
    size_t local[3];
    for (int d = 0; d < 3; ++d) {
      TEMPER_CHECK(dims.grid[d] >= 1 && dims.block[d] >= 1, "launch of '", name, "' with an empty grid or block");
      local[d] = static_cast<size_t>(dims.block[d]);
      global[d] = static_cast<size_t>(dims.grid[d] * dims.block[d]);
    }
    cl_event event = nullptr;
    cl_int error = clEnqueueNDRangeKernel(cl_->queue.get(), k, 3, nullptr, global, local, 0, nullptr,
                                          cl_->recording ? &event : nullptr);
    if (error != CL_SUCCESS) throw UserError(launch_failure(name, k, dims, error));
    if (cl_->recording) cl_->recording->push_back(event);
  }

  bool from_cache() const override { return from_cache_; }

 private:
  // The kernel object of `name`, created on first use: clCreateKernel is not free, and a
  // timing loop launches the same kernel many times.
  cl_kernel kernel(const std::string& name) {
    auto found = kernels_.find(name);
    if (found != kernels_.end()) return found->second.get();
    cl_int error = CL_SUCCESS;
    ClPtr<cl_kernel> k(clCreateKernel(program_.get(), name.c_str(), &error));
    if (error != CL_SUCCESS) {
      throw UserError(str("OpenCL program on ", cl_->device_name, " has no kernel '", name, "' (", cl_error_name(error),
                          "); its kernels: ", kernel_names()));
    }
    return kernels_.emplace(name, std::move(k)).first->second.get();
  }

  std::string kernel_names() const {
    size_t size = 0;
    if (clGetProgramInfo(program_.get(), CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &size) != CL_SUCCESS) return "?";
    std::string names(size, '\0');
    if (clGetProgramInfo(program_.get(), CL_PROGRAM_KERNEL_NAMES, size, names.data(), nullptr) != CL_SUCCESS) {
      return "?";
    }
    names.resize(names.find('\0') == std::string::npos ? names.size() : names.find('\0'));
    std::replace(names.begin(), names.end(), ';', ' ');
    return names.empty() ? "none" : names;
  }

  std::string launch_failure(const std::string& name, cl_kernel k, const LaunchDims& dims, cl_int error) const {
    std::string message = str("OpenCL launch of kernel '", name, "' (grid ", dims_text(dims.grid), ", block ",
                              dims_text(dims.block), ") on ", cl_->device_name, " failed: ", cl_error_name(error));
    if (error == CL_INVALID_WORK_GROUP_SIZE || error == CL_INVALID_WORK_ITEM_SIZE) {
      size_t kernel_limit = 0;
      clGetKernelWorkGroupInfo(k, cl_->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kernel_limit, &kernel_limit, nullptr);
      message += str("; this kernel allows at most ", kernel_limit, " work-items per group on this device");
    } else if (error == CL_OUT_OF_RESOURCES) {
      message += "; a group of this size needs more registers or local memory than the device has";
    }
    return message;
  }

  std::shared_ptr<ClContext> cl_;
  ClPtr<cl_program> program_;
  bool from_cache_;
  std::map<std::string, ClPtr<cl_kernel>> kernels_;
};

// Points the context's recording at a list for as long as it lives (time_on_device's work),
// then releases the events collected, whether or not the work threw.
class LaunchRecording {
 public:
  explicit LaunchRecording(ClContext& cl) : cl_(cl) {
    TEMPER_CHECK(!cl_.recording, "time_on_device calls do not nest");
    cl_.recording = &events_;
  }
  ~LaunchRecording() {
    cl_.recording = nullptr;
    for (cl_event event : events_) clReleaseEvent(event);
  }
  LaunchRecording(const LaunchRecording&) = delete;
  LaunchRecording& operator=(const LaunchRecording&) = delete;
  const std::vector<cl_event>& events() const { return events_; }

 private:
  ClContext& cl_;
  std::vector<cl_event> events_;
};

class OpenClDevice final : public GpuDevice {
 public:
  explicit OpenClDevice(const ClDeviceRef& ref)
      : info_(query_info(ref.device)),
        platform_version_(platform_string(ref.platform, CL_PLATFORM_VERSION)),
        cl_(std::make_shared<ClContext>()),
        cache_(opencl_cache_folder()) {
    cl_->device = ref.device;
    cl_->device_name = info_.name;
    cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(ref.platform),
                                          0};
    cl_int error = CL_SUCCESS;
    cl_->context.reset(clCreateContext(properties, 1, &ref.device, nullptr, nullptr, &error));
    check(error, "context creation");
    cl_->queue.reset(clCreateCommandQueue(cl_->context.get(), ref.device, CL_QUEUE_PROFILING_ENABLE, &error));
    check(error, "command queue creation");
  }

  ~OpenClDevice() override {
    // Queued work may still read the buffers freed below.
    clFinish(cl_->queue.get());
    for (uint64_t handle : live_) clReleaseMemObject(reinterpret_cast<cl_mem>(static_cast<uintptr_t>(handle)));
  }

  Target::Kind kind() const override { return Target::Kind::OpenCL; }
  const GpuDeviceInfo& info() const override { return info_; }

  DeviceMemory alloc(int64_t bytes) override {
    TEMPER_CHECK(bytes >= 0, "alloc of ", bytes, " bytes");
    cl_int error = CL_SUCCESS;
    // OpenCL refuses empty buffers; a zero-byte tensor still needs a handle to pass.
    cl_mem buffer = clCreateBuffer(cl_->context.get(), CL_MEM_READ_WRITE, std::max<size_t>(bytes, 1), nullptr, &error);
    if (error != CL_SUCCESS) {
      std::string detail = cl_error_name(error);
      if (error == CL_INVALID_BUFFER_SIZE) {
        detail += str(": the device allows at most ", device_value<cl_ulong>(cl_->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE),
                      " bytes per buffer");
      }
      throw UserError(str("out of device memory allocating ", bytes, " bytes on ", info_.name, " (", detail, ")"));
    }
    uint64_t handle = reinterpret_cast<uintptr_t>(buffer);
    live_.insert(handle);
    return DeviceMemory{handle, bytes};
  }

  void free(DeviceMemory memory) override {
    TEMPER_CHECK(live_.erase(memory.handle) == 1, "free of memory this device did not allocate or already freed");
    clReleaseMemObject(as_cl_mem(memory));
  }

  void copy_from_host(DeviceMemory dst, const void* src, int64_t bytes) override {
    TEMPER_CHECK(bytes >= 0 && bytes <= dst.bytes, "copy of ", bytes, " bytes into a buffer of ", dst.bytes);
    if (bytes == 0) return;
    check(clEnqueueWriteBuffer(cl_->queue.get(), as_cl_mem(dst), CL_TRUE, 0, bytes, src, 0, nullptr, nullptr),
          str("copy of ", bytes, " bytes to the device"));
  }

  void copy_to_host(void* dst, DeviceMemory src, int64_t bytes) override {
    TEMPER_CHECK(bytes >= 0 && bytes <= src.bytes, "copy of ", bytes, " bytes out of a buffer of ", src.bytes);
    if (bytes == 0) return;
    check(clEnqueueReadBuffer(cl_->queue.get(), as_cl_mem(src), CL_TRUE, 0, bytes, dst, 0, nullptr, nullptr),
          str("copy of ", bytes, " bytes from the device"));
  }

  void synchronize() override { check(clFinish(cl_->queue.get()), "queued work"); }

  std::shared_ptr<GpuProgram> load_program(const std::string& source) override {
    // The platform version names the compiler inside the driver (PoCL: its LLVM).
    const std::string key = str("device: ", info_.name, "\nvendor: ", info_.vendor, "\ndriver: ", info_.driver,
                                "\nversion: ", info_.version, "\nplatform: ", platform_version_,
                                "\noptions: ", kBuildOptions, "\nsource:\n", source);
    if (std::optional<std::string> binary = cache_.load(key)) {
      if (ClPtr<cl_program> program = program_from_binary(*binary)) {
        return std::make_shared<OpenClProgram>(cl_, std::move(program), /*from_cache=*/true);
      }
    }
    ClPtr<cl_program> program = program_from_source(source);
    if (std::optional<std::string> binary = program_binary(program.get())) cache_.store(key, *binary);
    return std::make_shared<OpenClProgram>(cl_, std::move(program), /*from_cache=*/false);
  }

  double time_on_device(const std::function<void()>& work) override {
    LaunchRecording recording(*cl_);
    work();
    synchronize();
    double seconds = 0;
    for (cl_event event : recording.events()) {
      cl_int status = CL_COMPLETE;
      clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
      if (status < 0)
        throw UserError(str("OpenCL kernel on ", info_.name, " failed while running: ", cl_error_name(status)));
      cl_ulong start = 0;
      cl_ulong end = 0;
      check(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr), "profiling");
      check(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr), "profiling");
      seconds += static_cast<double>(end - start) * 1e-9;
    }
    return seconds;
  }

  void flush_cache() override {
    if (!flush_buffer_) {
      flush_bytes_ = std::max<int64_t>(kMinFlushBytes, 2 * static_cast<int64_t>(device_value<cl_ulong>(
                                                               cl_->device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE)));
      cl_int error = CL_SUCCESS;
      flush_buffer_.reset(clCreateBuffer(cl_->context.get(), CL_MEM_READ_WRITE, flush_bytes_, nullptr, &error));
      if (error != CL_SUCCESS) {
        throw UserError(str("out of device memory allocating ", flush_bytes_, " bytes on ", info_.name,
                            " to flush its cache (", cl_error_name(error), ")"));
      }
    }
    // A new value each time, so that no driver can skip the writes as redundant.
    cl_uint pattern = ++flush_count_;
    check(clEnqueueFillBuffer(cl_->queue.get(), flush_buffer_.get(), &pattern, sizeof pattern, 0, flush_bytes_, 0,
                              nullptr, nullptr),
          "cache flush");
    synchronize();
  }

 private:
  // Part of the cache key, so a change here never loads binaries built otherwise.
  static constexpr const char* kBuildOptions = "";

  void check(cl_int error, const std::string& what) const {
    if (error == CL_SUCCESS) return;
    if (error == CL_MEM_OBJECT_ALLOCATION_FAILURE) {
      throw UserError(str("out of device memory on ", info_.name, ": ", what, " failed (", cl_error_name(error), ")"));
    }
    throw UserError(str("OpenCL ", what, " on ", info_.name, " failed: ", cl_error_name(error)));
  }

  ClPtr<cl_program> program_from_source(const std::string& source) {
    const char* text = source.c_str();
    size_t length = source.size();
    cl_int error = CL_SUCCESS;
    ClPtr<cl_program> program(clCreateProgramWithSource(cl_->context.get(), 1, &text, &length, &error));
    check(error, "program creation");
    error = clBuildProgram(program.get(), 1, &cl_->device, kBuildOptions, nullptr, nullptr);
    if (error != CL_SUCCESS) {
      std::string log = build_log(program.get());
      throw UserError(str("OpenCL program does not build on ", info_.name, ": ",
                          error == CL_BUILD_PROGRAM_FAILURE ? "" : str(cl_error_name(error), "\n"),
                          log.empty() ? "(the compiler gave no log)" : log));
    }
    return program;
  }

  // The program built from a cached binary; null on any failure (another driver wrote
  // it, the file was damaged), so the caller builds from source instead.
  ClPtr<cl_program> program_from_binary(const std::string& binary) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
    size_t length = binary.size();
    cl_int binary_status = CL_SUCCESS;
    cl_int error = CL_SUCCESS;
    ClPtr<cl_program> program(
        clCreateProgramWithBinary(cl_->context.get(), 1, &cl_->device, &length, &bytes, &binary_status, &error));
    if (error != CL_SUCCESS || binary_status != CL_SUCCESS) return nullptr;
    if (clBuildProgram(program.get(), 1, &cl_->device, kBuildOptions, nullptr, nullptr) != CL_SUCCESS) return nullptr;
    return program;
  }

  // The device binary of a built program, to cache; nullopt when the driver gives none.
  std::optional<std::string> program_binary(cl_program program) const {
    size_t size = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0) {
      return std::nullopt;
    }
    std::string binary(size, '\0');
    auto* bytes = reinterpret_cast<unsigned char*>(binary.data());
    if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof bytes, &bytes, nullptr) != CL_SUCCESS)
      return std::nullopt;
    return binary;
  }

  std::string build_log(cl_program program) const {
    size_t size = 0;
    if (clGetProgramBuildInfo(program, cl_->device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) return "";
    std::string log(size, '\0');
    if (clGetProgramBuildInfo(program, cl_->device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS) {
      return "";
    }
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' ')) log.pop_back();
    return log;
  }

  GpuDeviceInfo info_;
  std::string platform_version_;
  std::shared_ptr<ClContext> cl_;
  ProgramBinaryCache cache_;
  // Allocations not yet freed, released with the device.
  std::unordered_set<uint64_t> live_;
  ClPtr<cl_mem> flush_buffer_;
  int64_t flush_bytes_ = 0;
  cl_uint flush_count_ = 0;
};

}  // namespace

std::unique_ptr<GpuDevice> open_opencl_device(const Target& target) {
  std::vector<ClDeviceRef> devices = enumerate_devices();
  if (target.device < 0 || target.device >= static_cast<int>(devices.size())) {
    std::string names;
    for (size_t i = 0; i < devices.size(); ++i) {
      names += str(i == 0 ? "" : ", ", i, ": ", device_string(devices[i].device, CL_DEVICE_NAME));
    }
    throw UserError(str("no OpenCL device ", target.device, ": this machine has ", devices.size(), " (", names,
                        "); pick one with 'opencl -device=N'"));
  }
  return std::make_unique<OpenClDevice>(devices[target.device]);
}

std::vector<GpuDeviceInfo> list_opencl_devices() {
  std::vector<GpuDeviceInfo> infos;
  for (const ClDeviceRef& ref : enumerate_devices()) infos.push_back(query_info(ref.device));
  return infos;
}

}  // namespace temper
