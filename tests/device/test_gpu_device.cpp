// The GPU device runtimes (compiler/runtime/gpu/gpu_device.h) on real drivers: OpenCL
// kernels written by hand built, run and checked against the host on whatever OpenCL
// device the machine has (PoCL's CPU device where there is no GPU), the on-disk binary
// cache, and the errors a bad program, kernel name, launch or allocation gets. The CUDA
// tests run a PTX vector add where an NVIDIA driver and GPU are present, print SKIP
// elsewhere, and check the error a machine without the driver gives.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "compiler/ir/error.h"
#include "compiler/runtime/gpu/gpu_device.h"

namespace temper {
namespace {

namespace fs = std::filesystem;

const char* kVectorAddCl = R"(
__kernel void vector_add(__global const float* a, __global const float* b, __global float* c) {
  int i = get_global_id(0);
  c[i] = a[i] + b[i];
}
)";

// C[M, N] = A[M, K] * B[K, N]; work-item (x, y) computes C[y, x].
std::string matmul_cl(int m, int n, int k) {
  return str("#define M ", m, "\n#define N ", n, "\n#define K ", k, "\n", R"(
__kernel void matmul(__global const float* A, __global const float* B, __global float* C) {
  int j = get_global_id(0);
  int i = get_global_id(1);
  float sum = 0.0f;
  for (int p = 0; p < K; ++p) sum += A[i * K + p] * B[p * N + j];
  C[i * N + j] = sum;
}
)");
}

// The vector add of kVectorAddCl as nvcc writes it, lowered to PTX ISA 7.0 and sm_52 so
// that any driver of the last years JIT-compiles it for its GPU.
const char* kVectorAddPtx = R"(
.version 7.0
.target sm_52
.address_size 64

.visible .entry vector_add(
	.param .u64 vector_add_param_0,
	.param .u64 vector_add_param_1,
	.param .u64 vector_add_param_2
)
{
	.reg .f32 	%f<4>;
	.reg .b32 	%r<5>;
	.reg .b64 	%rd<11>;

	ld.param.u64 	%rd1, [vector_add_param_0];
	ld.param.u64 	%rd2, [vector_add_param_1];
	ld.param.u64 	%rd3, [vector_add_param_2];
	cvta.to.global.u64 	%rd4, %rd3;
	cvta.to.global.u64 	%rd5, %rd2;
	cvta.to.global.u64 	%rd6, %rd1;
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mad.lo.s32 	%r4, %r1, %r2, %r3;
	mul.wide.s32 	%rd7, %r4, 4;
	add.s64 	%rd8, %rd6, %rd7;
	ld.global.nc.f32 	%f1, [%rd8];
	add.s64 	%rd9, %rd5, %rd7;
	ld.global.nc.f32 	%f2, [%rd9];
	add.f32 	%f3, %f1, %f2;
	add.s64 	%rd10, %rd4, %rd7;
	st.global.f32 	[%rd10], %f3;
	ret;
}
)";

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(n);
  for (float& v : values) v = dist(rng);
  return values;
}

template <typename F>
std::string user_error_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

// Device buffers for a, b, c of n floats, a and b filled from the host.
struct VectorAddBuffers {
  VectorAddBuffers(GpuDevice& device, const std::vector<float>& a, const std::vector<float>& b) : device(device) {
    int64_t bytes = static_cast<int64_t>(a.size() * sizeof(float));
    for (DeviceMemory* m : {&da, &db, &dc}) *m = device.alloc(bytes);
    device.copy_from_host(da, a.data(), bytes);
    device.copy_from_host(db, b.data(), bytes);
  }
  ~VectorAddBuffers() {
    for (DeviceMemory m : {da, db, dc}) device.free(m);
  }
  std::vector<float> c() {
    std::vector<float> host(dc.bytes / sizeof(float));
    device.copy_to_host(host.data(), dc, dc.bytes);
    return host;
  }
  GpuDevice& device;
  DeviceMemory da, db, dc;
};

// Checks c = a + b, exactly: one float addition per element on either side.
void expect_sums(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c) {
  ASSERT_EQ(c.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "at " << i;
}

// Every test gets its own program cache folder, so the first load of a source is a miss.
class OpenClDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "temper_gpu_cache_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    cache_dir_ = pattern;
    if (const char* old = std::getenv("TEMPER_CACHE_DIR")) old_cache_dir_ = old;
    setenv("TEMPER_CACHE_DIR", cache_dir_.c_str(), 1);
    try {
      device_ = open_gpu_device(Target::parse("opencl"));
    } catch (const UserError& e) {
      GTEST_SKIP() << "SKIP: no OpenCL device: " << e.what();
    }
  }
  void TearDown() override {
    device_.reset();
    if (old_cache_dir_) {
      setenv("TEMPER_CACHE_DIR", old_cache_dir_->c_str(), 1);
    } else {
      unsetenv("TEMPER_CACHE_DIR");
    }
    fs::remove_all(cache_dir_);
  }
  std::vector<fs::path> cached_files() const {
    std::vector<fs::path> files;
    if (fs::exists(cache_dir_ + "/opencl")) {
      for (const auto& entry : fs::directory_iterator(cache_dir_ + "/opencl")) files.push_back(entry.path());
    }
    return files;
  }
  // Loads kVectorAddCl and runs it on n random floats; checks the sums.
  void run_vector_add(GpuProgram& program, unsigned seed) {
    const int n = 1024;
    std::vector<float> a = random_floats(n, seed);
    std::vector<float> b = random_floats(n, seed + 1);
    VectorAddBuffers buffers(*device_, a, b);
    LaunchDims dims;
    dims.grid = {n / 64, 1, 1};
    dims.block = {64, 1, 1};
    program.launch("vector_add", dims, {buffers.da, buffers.db, buffers.dc});
    expect_sums(a, b, buffers.c());
  }

  std::unique_ptr<GpuDevice> device_;
  std::string cache_dir_;
  std::optional<std::string> old_cache_dir_;
};

TEST_F(OpenClDeviceTest, DescribesTheDevice) {
  const GpuDeviceInfo& info = device_->info();
  EXPECT_EQ(device_->kind(), Target::Kind::OpenCL);
  EXPECT_FALSE(info.name.empty());
  EXPECT_NE(info.version.find("OpenCL"), std::string::npos) << info.version;
  EXPECT_GT(info.max_threads_per_block, 0);
  for (int64_t dim : info.max_block_dims) EXPECT_GT(dim, 0);
  EXPECT_GT(info.max_shared_memory_per_block, 0);
  EXPECT_GT(info.compute_units, 0);
  EXPECT_GT(info.global_memory_bytes, 0);
  EXPECT_EQ(info.fingerprint(), info.name + " | " + info.driver + " | " + info.version);
}

TEST_F(OpenClDeviceTest, RunsAVectorAdd) {
  std::shared_ptr<GpuProgram> program = device_->load_program(kVectorAddCl);
  run_vector_add(*program, 1);
}

TEST_F(OpenClDeviceTest, RunsAMatmulOnATwoDimensionalGrid) {
  const int m = 48;
  const int n = 64;
  const int k = 40;
  std::vector<float> a = random_floats(m * k, 3);
  std::vector<float> b = random_floats(k * n, 4);
  DeviceMemory da = device_->alloc(a.size() * sizeof(float));
  DeviceMemory db = device_->alloc(b.size() * sizeof(float));
  DeviceMemory dc = device_->alloc(m * n * sizeof(float));
  device_->copy_from_host(da, a.data(), da.bytes);
  device_->copy_from_host(db, b.data(), db.bytes);
  LaunchDims dims;
  dims.grid = {n / 8, m / 4, 1};
  dims.block = {8, 4, 1};
  device_->load_program(matmul_cl(m, n, k))->launch("matmul", dims, {da, db, dc});
  std::vector<float> c(m * n);
  device_->copy_to_host(c.data(), dc, dc.bytes);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double expected = 0;
      for (int p = 0; p < k; ++p) expected += double{a[i * k + p]} * b[p * n + j];
      ASSERT_NEAR(c[i * n + j], expected, 1e-4) << "C[" << i << ", " << j << "]";
    }
  }
  for (DeviceMemory memory : {da, db, dc}) device_->free(memory);
}

TEST_F(OpenClDeviceTest, CachesProgramBinariesOnDisk) {
  std::shared_ptr<GpuProgram> built = device_->load_program(kVectorAddCl);
  EXPECT_FALSE(built->from_cache());
  ASSERT_EQ(cached_files().size(), 1u);

  std::shared_ptr<GpuProgram> cached = device_->load_program(kVectorAddCl);
  EXPECT_TRUE(cached->from_cache());
  run_vector_add(*cached, 5);
  // Another device object (as another process would) finds it too.
  std::unique_ptr<GpuDevice> other = open_gpu_device(Target::parse("opencl"));
  EXPECT_TRUE(other->load_program(kVectorAddCl)->from_cache());

  // Another source is another entry.
  EXPECT_FALSE(device_->load_program(matmul_cl(8, 8, 8))->from_cache());
  EXPECT_EQ(cached_files().size(), 2u);
}

TEST_F(OpenClDeviceTest, RebuildsFromSourceWhenTheCachedBinaryIsDamaged) {
  device_->load_program(kVectorAddCl);
  ASSERT_EQ(cached_files().size(), 1u);
  const fs::path file = cached_files()[0];
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  // Keep the header and key, garble the binary after them.
  for (size_t i = bytes.size() / 2; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0x5a);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;

  std::shared_ptr<GpuProgram> rebuilt = device_->load_program(kVectorAddCl);
  EXPECT_FALSE(rebuilt->from_cache());
  run_vector_add(*rebuilt, 7);
  // The rebuild wrote a good binary back.
  EXPECT_TRUE(device_->load_program(kVectorAddCl)->from_cache());

  fs::resize_file(file, fs::file_size(file) - 100);
  EXPECT_FALSE(device_->load_program(kVectorAddCl)->from_cache());
  EXPECT_TRUE(device_->load_program(kVectorAddCl)->from_cache());
}

TEST_F(OpenClDeviceTest, ASyntaxErrorGivesTheBuildLog) {
  std::string error =
      user_error_of([&] { device_->load_program("__kernel void broken(__global float* a) { a[0] = ; }"); });
  EXPECT_NE(error.find("OpenCL program does not build on " + device_->info().name + ": "), std::string::npos) << error;
  EXPECT_NE(error.find("expected expression"), std::string::npos) << error;
  EXPECT_TRUE(cached_files().empty());
}

TEST_F(OpenClDeviceTest, AnUnknownKernelIsAUserError) {
  std::shared_ptr<GpuProgram> program = device_->load_program(kVectorAddCl);
  std::string error = user_error_of([&] { program->launch("vector_sub", LaunchDims{}, {}); });
  EXPECT_NE(error.find("has no kernel 'vector_sub'"), std::string::npos) << error;
  EXPECT_NE(error.find("its kernels: vector_add"), std::string::npos) << error;
}

TEST_F(OpenClDeviceTest, BadLaunchesAreUserErrorsAndTheDeviceStillWorks) {
  std::shared_ptr<GpuProgram> program = device_->load_program(kVectorAddCl);
  DeviceMemory memory = device_->alloc(4096);
  std::string error = user_error_of([&] { program->launch("vector_add", LaunchDims{}, {memory}); });
  EXPECT_NE(error.find("OpenCL kernel 'vector_add' takes 3 arguments; the launch passed 1"), std::string::npos)
      << error;

  // A group of twice the device's limit, spread over two axes within the per-axis limits.
  const GpuDeviceInfo& info = device_->info();
  LaunchDims too_big;
  too_big.block = {info.max_threads_per_block, 2, 1};
  ASSERT_LE(2, info.max_block_dims[1]);
  error = user_error_of([&] { program->launch("vector_add", too_big, {memory, memory, memory}); });
  EXPECT_NE(error.find("OpenCL launch of kernel 'vector_add' (grid 1x1x1, block " +
                       std::to_string(info.max_threads_per_block) + "x2x1) on " + info.name + " failed: CL_INVALID_"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("work-items per group"), std::string::npos) << error;

  device_->free(memory);
  run_vector_add(*program, 9);
}

TEST_F(OpenClDeviceTest, AnAllocationPastTheDeviceIsOutOfMemory) {
  const int64_t huge = int64_t{1} << 50;
  std::string error = user_error_of([&] { device_->alloc(huge); });
  EXPECT_NE(error.find("out of device memory allocating 1125899906842624 bytes on " + device_->info().name),
            std::string::npos)
      << error;
}

TEST_F(OpenClDeviceTest, TimesLaunchesOnTheDevice) {
  std::shared_ptr<GpuProgram> program = device_->load_program(kVectorAddCl);
  const int n = 1 << 16;
  std::vector<float> a = random_floats(n, 11);
  std::vector<float> b = random_floats(n, 12);
  VectorAddBuffers buffers(*device_, a, b);
  LaunchDims dims;
  dims.grid = {n / 256, 1, 1};
  dims.block = {256, 1, 1};
  device_->flush_cache();
  int launches = 0;
  double seconds = device_->time_on_device([&] {
    for (int i = 0; i < 5; ++i, ++launches) program->launch("vector_add", dims, {buffers.da, buffers.db, buffers.dc});
  });
  EXPECT_EQ(launches, 5);
  EXPECT_GT(seconds, 0.0);
  EXPECT_LT(seconds, 10.0);
  expect_sums(a, b, buffers.c());
  EXPECT_EQ(device_->time_on_device([] {}), 0.0);
}

TEST_F(OpenClDeviceTest, ProgramsOutliveTheirDevice) {
  std::shared_ptr<GpuProgram> program = device_->load_program(kVectorAddCl);
  // Left allocated on purpose: the device frees it.
  device_->alloc(1024);
  device_.reset();
  program.reset();
}

TEST(GpuDevice, RefusesOtherTargetsAndDevicesPastTheEnd) {
  EXPECT_EQ(user_error_of([] { open_gpu_device(Target::parse("llvm -mcpu=native")); }),
            "target 'llvm -mcpu=native' runs on the CPU, not on a GPU device; use a cuda or opencl target");
  std::string error = user_error_of([] { open_gpu_device(Target::parse("opencl -device=99")); });
  EXPECT_TRUE(error.rfind("no OpenCL device 99: this machine has ", 0) == 0 ||
              error.rfind("no OpenCL platform", 0) == 0)
      << error;
}

TEST(GpuDevice, ProbesBothKinds) {
  std::vector<GpuAvailability> kinds = probe_gpu_targets();
  ASSERT_EQ(kinds.size(), 2u);
  EXPECT_EQ(kinds[0].kind, Target::Kind::CUDA);
  EXPECT_EQ(kinds[1].kind, Target::Kind::OpenCL);
  for (const GpuAvailability& kind : kinds) {
    EXPECT_EQ(kind.available, !kind.devices.empty());
    EXPECT_EQ(kind.available, kind.reason.empty()) << kind.reason;
  }
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!driver) {
    EXPECT_EQ(kinds[0].reason,
              "libcuda.so.1 not found (no NVIDIA driver): install the NVIDIA driver to run the cuda target");
  } else {
    dlclose(driver);
  }
}

TEST(CudaDevice, WithoutTheDriverIsAUserError) {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver) {
    dlclose(driver);
    GTEST_SKIP() << "SKIP: libcuda.so.1 is present; this test covers machines without it";
  }
  std::string error = user_error_of([] { open_gpu_device(Target::parse("cuda -arch=sm_90")); });
  EXPECT_EQ(error.rfind("no CUDA device: libcuda.so.1 cannot be loaded (", 0), 0u) << error;
  EXPECT_NE(error.find("); the cuda target needs an NVIDIA driver"), std::string::npos) << error;
}

class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      device_ = open_gpu_device(Target::parse("cuda"));
    } catch (const UserError& e) {
      GTEST_SKIP() << "SKIP: " << e.what();
    }
  }
  std::unique_ptr<GpuDevice> device_;
};

TEST_F(CudaDeviceTest, RunsAndTimesAPtxVectorAdd) {
  const GpuDeviceInfo& info = device_->info();
  EXPECT_EQ(device_->kind(), Target::Kind::CUDA);
  EXPECT_EQ(info.vendor, "NVIDIA");
  EXPECT_EQ(info.version.rfind("sm_", 0), 0u) << info.version;
  EXPECT_GE(info.max_threads_per_block, 1024);
  EXPECT_GT(info.compute_units, 0);
  EXPECT_GT(info.global_memory_bytes, 0);

  std::shared_ptr<GpuProgram> program = device_->load_program(kVectorAddPtx);
  EXPECT_FALSE(program->from_cache());
  const int n = 1 << 20;
  std::vector<float> a = random_floats(n, 21);
  std::vector<float> b = random_floats(n, 22);
  VectorAddBuffers buffers(*device_, a, b);
  LaunchDims dims;
  dims.grid = {n / 256, 1, 1};
  dims.block = {256, 1, 1};
  device_->flush_cache();
  double seconds = device_->time_on_device([&] {
    for (int i = 0; i < 3; ++i) program->launch("vector_add", dims, {buffers.da, buffers.db, buffers.dc});
  });
  EXPECT_GT(seconds, 0.0);
  EXPECT_LT(seconds, 1.0);
  expect_sums(a, b, buffers.c());
}

TEST_F(CudaDeviceTest, ErrorsAreUserErrors) {
  const GpuDeviceInfo& info = device_->info();
  std::shared_ptr<GpuProgram> program = device_->load_program(kVectorAddPtx);
  EXPECT_NE(user_error_of([&] { program->launch("vector_sub", LaunchDims{}, {}); }).find("has no kernel 'vector_sub'"),
            std::string::npos);
  DeviceMemory memory = device_->alloc(4096);
  LaunchDims too_big;
  too_big.block = {info.max_threads_per_block, 2, 1};
  EXPECT_NE(user_error_of([&] {
              program->launch("vector_add", too_big, {memory, memory, memory});
            }).find("threads is over the device's limit of " + std::to_string(info.max_threads_per_block)),
            std::string::npos);
  device_->free(memory);
  EXPECT_NE(user_error_of([&] {
              device_->load_program(".version 7.0\n.target sm_52\nnot ptx at all");
            }).find("PTX does not load on " + info.name),
            std::string::npos);
  EXPECT_NE(user_error_of([&] {
              device_->alloc(int64_t{1} << 50);
            }).find("out of device memory allocating 1125899906842624 bytes on " + info.name),
            std::string::npos);
}

}  // namespace
}  // namespace temper
