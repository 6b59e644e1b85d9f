// split_host_device and insert_barriers: lowered GPU schedules become kernels with launch
// extents, hoisted shared buffers and the barriers shared memory needs; work the host
// cannot do, and barriers only some threads would reach, are refused. check_gpu_limits
// rejects kernels over a device's limits.
#include <gtest/gtest.h>

#include "compiler/codegen/gpu/gpu_limits.h"
#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"
#include "compiler/lower/insert_barriers.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/split_host_device.h"
#include "unit/test_schedule_workloads.h"
#include "user_error_test_util.h"

namespace temper {
namespace {

using testing::gpu_matmul;
using testing_util::expect_user_error;

std::vector<std::string> param_names(const DeviceKernel& k) {
  std::vector<std::string> names;
  for (const Buffer& b : k.params) names.push_back(b->name);
  return names;
}

int count_barriers(const Stmt& s) {
  int n = 0;
  post_order_visit(s, [&](const Node* node) {
    if (node->kind != NodeKind::Evaluate) return;
    auto* e = static_cast<const EvaluateNode*>(node);
    n += is_thread_barrier(evaluate(e->value));
  });
  return n;
}

TEST(SplitHostDevice, TiledMatmulIsOneKernelWithItsLaunchExtents) {
  DeviceFunction d = split_host_device(lower(gpu_matmul(64, 64, 64).func()));
  ASSERT_EQ(d.kernels.size(), 1u);
  const DeviceKernel& k = d.kernels[0];
  EXPECT_EQ(k.name, "matmul_kernel0");
  EXPECT_EQ(k.grid, (std::array<int64_t, 3>{2, 2, 1}));
  EXPECT_EQ(k.block, (std::array<int64_t, 3>{8, 8, 1}));
  EXPECT_EQ(k.threads_per_block(), 64);
  EXPECT_EQ(param_names(k), (std::vector<std::string>{"A", "B", "C"}));
  EXPECT_TRUE(d.temporaries.empty());
  // Shared tiles of 32 x 8 (all threads' rows, not one thread's), declared at the top.
  std::string text = to_string(k.body);
  EXPECT_EQ(text.rfind("allocate A_shared: float32[256] in shared\nallocate B_shared: float32[256] in shared\n", 0), 0u)
      << text;
}

TEST(SplitHostDevice, BarriersFollowTheSharedWritesAndEndEachKTile) {
  DeviceFunction d = split_host_device(lower(gpu_matmul(64, 64, 64).func()));
  std::string text = to_string(d.kernels[0].body);
  // One before the k-tile's reads of the staged tiles, one before the next tile overwrites them.
  EXPECT_EQ(count_barriers(d.kernels[0].body), 2) << text;
  size_t fill_b = text.find("B_shared[");
  size_t first = text.find("thread_barrier()");
  size_t read_a = text.find("A_shared[i_1");
  size_t second = text.find("thread_barrier()", first + 1);
  ASSERT_NE(read_a, std::string::npos) << text;
  EXPECT_LT(fill_b, first);
  EXPECT_LT(first, read_a);
  EXPECT_LT(read_a, second);
}

TEST(SplitHostDevice, EachBoundNestIsAKernelAndIntermediatesAreTemporaries) {
  // C = A x B in one kernel, D = relu(C) in another: C lives in device memory between them.
  Schedule s(testing::matmul_relu(64, 32, 16));
  for (const char* name : {"C", "D"}) {
    std::vector<LoopRV> l = s.get_loops(s.get_block(name));
    s.bind(l[0], "blockIdx.x");
    s.bind(l[1], "threadIdx.x");
  }
  DeviceFunction d = split_host_device(lower(s.func()));
  ASSERT_EQ(d.kernels.size(), 2u);
  ASSERT_EQ(d.temporaries.size(), 1u);
  EXPECT_EQ(d.temporaries[0]->name, "C");
  EXPECT_EQ(param_names(d.kernels[0]), (std::vector<std::string>{"C", "A", "B"}));
  EXPECT_EQ(param_names(d.kernels[1]), (std::vector<std::string>{"D", "C"}));
  EXPECT_EQ(d.kernels[1].grid, (std::array<int64_t, 3>{64, 1, 1}));
  EXPECT_EQ(d.kernels[1].block, (std::array<int64_t, 3>{32, 1, 1}));
  EXPECT_EQ(count_barriers(d.kernels[0].body), 0);
}

TEST(SplitHostDevice, VirtualThreadsRunSerially) {
  Schedule s(testing::scale_add(16, 8));
  s.compute_inline(s.get_block("B"));
  std::vector<LoopRV> l = s.get_loops(s.get_block("C"));
  std::vector<LoopRV> i = s.split(l[0], {4, 2, std::nullopt});
  s.bind(i[0], "blockIdx.x");
  s.bind(i[1], "vthread");
  s.bind(i[2], "threadIdx.y");
  s.bind(l[1], "threadIdx.x");
  DeviceFunction d = split_host_device(lower(s.func()));
  ASSERT_EQ(d.kernels.size(), 1u);
  EXPECT_EQ(d.kernels[0].block, (std::array<int64_t, 3>{8, 2, 1}));
  EXPECT_EQ(to_string(d.kernels[0].body).find("vthread"), std::string::npos) << to_string(d.kernels[0].body);
}

TEST(SplitHostDeviceErrors, WorkOutsideBoundLoopsIsRefused) {
  Schedule s(testing::matmul(8, 8, 8));
  expect_user_error([&] { split_host_device(lower(s.func())); },
                    {"matmul: loop 'i' would run on the host over device memory; bind the loops around it to "
                     "blockIdx/threadIdx"});
}

TEST(SplitHostDeviceErrors, ABarrierOnlySomeThreadsReachIsRefused) {
  // The k-tile loop sits under a threadIdx.x loop of 4 in a block of 8 threads in x (the
  // fetch binds 8): only half the threads would reach the barrier after the shared writes.
  Schedule s(testing::matmul(32, 32, 32));
  BlockRV c = s.get_block("C");
  BlockRV a_shared = s.cache_read(c, 1, "shared");
  std::vector<LoopRV> l = s.get_loops(c);
  std::vector<LoopRV> j = s.split(l[1], {std::nullopt, 4});
  std::vector<LoopRV> kk = s.split(l[2], {std::nullopt, 8});
  s.reorder({l[0], j[0], j[1], kk[0], kk[1]});
  s.bind(l[0], "blockIdx.x");
  s.bind(j[0], "blockIdx.y");
  s.bind(j[1], "threadIdx.x");
  s.compute_at(a_shared, kk[0]);
  std::vector<LoopRV> sl = s.get_loops(a_shared);
  s.bind(sl.back(), "threadIdx.x");
  expect_user_error([&] { split_host_device(lower(s.func())); }, {"shared memory needs a barrier under the loop"});
}

TEST(GpuLimits, KernelsOverTheLimitsAreRejectedNamingTheQuantity) {
  DeviceFunction d = split_host_device(lower(gpu_matmul(64, 64, 64).func()));
  GpuLimits limits = gpu_limits(Target::parse("cuda -arch=sm_80"));
  EXPECT_NO_THROW(check_gpu_limits(d, limits));
  GpuLimits few_threads = limits;
  few_threads.max_threads_per_block = 32;
  few_threads.source = "a planted test";
  EXPECT_THROW(
      try { check_gpu_limits(d, few_threads); } catch (const GpuLimitError& e) {
        EXPECT_STREQ(e.what(),
                     "kernel matmul_kernel0: 64 threads per block (8 x 8 x 1) exceed the limit of 32 (limits of a "
                     "planted test)");
        throw;
      },
      GpuLimitError);
  GpuLimits little_shared = limits;
  little_shared.max_shared_memory_per_block = 1024;
  expect_user_error([&] { check_gpu_limits(d, little_shared); },
                    {"2048 bytes of shared memory exceed the limit of 1024"});
  GpuLimits few_registers = limits;
  few_registers.max_local_bytes_per_thread = 32;
  expect_user_error([&] { check_gpu_limits(d, few_registers); },
                    {"64 bytes of registers and private arrays per thread exceed the limit of 32"});
}

TEST(GpuLimits, TheTargetStringOverridesTheDefaults) {
  EXPECT_EQ(gpu_limits(Target::parse("cuda")).max_threads_per_block, 1024);
  GpuLimits l = gpu_limits(Target::parse("cuda -max_threads_per_block=128 -max_shared_memory_per_block=8192"));
  EXPECT_EQ(l.max_threads_per_block, 128);
  EXPECT_EQ(l.max_shared_memory_per_block, 8192);
  expect_user_error([&] { gpu_limits(Target::parse("llvm")); }, {"target 'llvm' is not a GPU target"});
}

}  // namespace
}  // namespace temper
