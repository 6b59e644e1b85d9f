// The GPU templates (schedule_space/gpu_templates.h): for each, small workloads under the
// default config and sampled configs built for opencl match the reference on the
// machine's OpenCL device (PoCL here) and compile through NVRTC to PTX for sm_80 and
// sm_90; the default config keeps both kinds' default limits; the legality check rejects
// planted over-limit configs; and, where a CUDA device exists, the CUDA builds match the
// reference too.
#include <gtest/gtest.h>

#include "compiler/codegen/gpu/device_program.h"
#include "compiler/codegen/gpu/gpu_limits.h"
#include "compiler/codegen/gpu/nvrtc.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/split_host_device.h"
#include "compiler/runtime/gpu/gpu_device.h"
#include "correctness/template_test_util.h"
#include "schedule_space/gpu_templates.h"

namespace temper::schedule_space {
namespace {

using nlohmann::json;
using template_testing::expect_correct;
using template_testing::task_of;
using template_testing::workload_test_name;

// Odd extents, transposes, int32, epilogues, strides, dilation, padding, multipliers,
// broadcasts and data movement: each GPU template once or more (the injective one on
// five ops).
const char* kWorkloads[] = {
    "matmul:M=64,N=64,K=32",
    "matmul:M=33,N=20,K=17,transpose_a=1,transpose_b=1",
    "batch_matmul:B=3,M=16,N=32,K=12,transpose_b=1",
    "batch_matmul:B=2,M=1,N=7,K=5,transpose_a=1",
    "dense:M=1,N=40,K=16,bias=1,act=relu",
    "dense:M=12,N=32,K=24,bias=1,act=gelu",
    "conv2d:N=1,C=8,H=10,W=10,K=16,R=3,S=3,pad=1",
    "conv2d:N=2,C=3,H=11,W=9,K=4,R=3,S=2,stride=2,pad=1x0",
    "conv2d:N=1,C=4,H=9,W=9,K=8,R=3,S=3,dilation=2,dtype=int32",
    "depthwise_conv2d:N=1,C=8,H=10,W=10,R=3,S=3,pad=1",
    "depthwise_conv2d:N=2,C=3,H=9,W=9,R=3,S=3,stride=2,multiplier=2",
    "max_pool2d:N=1,C=4,H=9,W=9,kernel=3,stride=2,pad=1",
    "max_pool2d:N=2,C=3,H=8,W=8,kernel=2,stride=2,layout=NHWC,dtype=int32",
    "avg_pool2d:N=1,C=2,H=7,W=7,kernel=3,stride=2,pad=1",
    "add:A=4x8x6,B=8x1",
    "relu:shape=3x5x7,dtype=int32",
    "gelu:shape=64x16",
    "transpose:shape=4x6x8,perm=2x0x1",
    "concat:shape=4x10,axis=1,sizes=4x6",
};

// PoCL takes about a second to compile each new program: one sampled config per workload
// (a fixed seed, so the same ones every run) keeps the file within a minute.
constexpr int kSampledConfigs = 1;

Target opencl() {
  return Target::parse("opencl");
}

bool has_opencl_device() {
  try {
    open_gpu_device(opencl());
    return true;
  } catch (const UserError&) {
    return false;
  }
}

// The configs each test tries: the default, then sampled ones (valid in the task's space).
std::vector<Config> configs_to_try(const Task& task) {
  std::vector<Config> configs = {task.default_config()};
  std::mt19937_64 rng(11);
  for (int draw = 0; draw < kSampledConfigs; ++draw) configs.push_back(task.space().sample(rng));
  return configs;
}

// Builds and checks each config for the task's target. Only a sampled config may break a
// limit the space does not model; the default never.
void expect_configs_correct(const Task& task) {
  std::vector<Config> configs = configs_to_try(task);
  for (size_t i = 0; i < configs.size(); ++i) {
    SCOPED_TRACE(configs[i].to_string());
    try {
      expect_correct(task, configs[i], i, task.target());
    } catch (const GpuLimitError& e) {
      EXPECT_GT(i, 0u) << "the default config breaks a limit: " << e.what();
    }
  }
}

class GpuTemplates : public ::testing::TestWithParam<const char*> {};

TEST_P(GpuTemplates, DefaultAndSampledConfigsMatchTheReferenceOnOpenCl) {
  try {
    open_gpu_device(opencl());
  } catch (const UserError& e) {
    GTEST_SKIP() << "SKIP: no OpenCL device: " << e.what();
  }
  std::unique_ptr<Task> task = task_of(GetParam(), opencl());
  EXPECT_EQ(task->tmpl().name, task->workload().op + ".gpu");
  expect_configs_correct(*task);
}

// Valid for both kinds under their default limits, whatever device this machine has,
// and accepted by the build's legality check.
TEST_P(GpuTemplates, DefaultConfigKeepsBothKindsDefaultLimits) {
  for (const char* target :
       {"cuda -arch=sm_90", "opencl -max_threads_per_block=256 -max_shared_memory_per_block=32768"}) {
    SCOPED_TRACE(target);
    std::unique_ptr<Task> task = task_of(GetParam(), Target::parse(target));
    Config c = task->default_config();
    EXPECT_TRUE(task->space().is_valid(c)) << c.to_string() << ": " << task->space().why_invalid(c);
    // The build's legality check, without compiling (NVRTC may be missing).
    EXPECT_NO_THROW(check_gpu_limits(split_host_device(lower(task->apply(c).func())), gpu_limits(task->target())));
  }
}

TEST_P(GpuTemplates, ConfigsCompileToPtxForSm80AndSm90) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "SKIP: " << why;
  std::unique_ptr<Task> task = task_of(GetParam(), Target::parse("cuda -arch=sm_90"));
  std::vector<Config> configs = configs_to_try(*task);
  for (size_t i = 0; i < configs.size(); ++i) {
    SCOPED_TRACE(configs[i].to_string());
    PrimFunc f = task->apply(configs[i]).func();
    for (const char* arch : {"cuda -arch=sm_80", "cuda -arch=sm_90"}) {
      try {
        EXPECT_NE(emit({f}, Target::parse(arch), "ptx").find(".entry"), std::string::npos) << arch;
      } catch (const GpuLimitError& e) {
        EXPECT_GT(i, 0u) << "the default config breaks a limit: " << e.what();
      }
    }
  }
}

TEST_P(GpuTemplates, DefaultAndSampledConfigsMatchTheReferenceOnACudaDevice) {
  Target cuda = Target::parse("cuda");  // sm_80 PTX: every device since loads it
  try {
    open_gpu_device(cuda);
  } catch (const UserError& e) {
    GTEST_SKIP() << "SKIP: no CUDA device: " << e.what();
  }
  expect_configs_correct(*task_of(GetParam(), cuda));
}

INSTANTIATE_TEST_SUITE_P(Workloads, GpuTemplates, ::testing::ValuesIn(kWorkloads), workload_test_name);

TEST(GpuTemplateTable, GpuTargetsFindTheGpuTemplates) {
  for (const char* target : {"cuda", "opencl"}) {
    EXPECT_EQ(find_template("matmul", Target::parse(target))->name, "matmul.gpu");
    EXPECT_EQ(find_template("relu", Target::parse(target))->name, "relu.gpu");
    EXPECT_EQ(find_template("softmax", Target::parse(target)), nullptr);
  }
  EXPECT_EQ(find_template("matmul", Target::parse("llvm"))->name, "matmul.cpu");
  EXPECT_EQ(find_template("relu", Target::parse("llvm")), nullptr);
  std::vector<std::string> ops = ops_with_templates(Target::parse("cuda"));
  std::vector<std::string> first(ops.begin(), ops.begin() + 7);
  EXPECT_EQ(first, (std::vector<std::string>{"matmul", "batch_matmul", "dense", "conv2d", "depthwise_conv2d",
                                             "max_pool2d", "avg_pool2d"}));
  EXPECT_EQ(ops.size(), 7 + gpu_injective_ops().size());
}

TEST(GpuTemplateTable, WorkloadsATemplateCannotServeAreRefused) {
  auto expect_refused = [](const char* workload, const std::string& message) {
    try {
      task_of(workload, Target::parse("cuda"));
      ADD_FAILURE() << workload << " was accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  expect_refused("conv2d:N=1,C=4,H=8,W=8,K=4,R=3,S=3,layout=NHWC",
                 "the conv2d GPU template serves layout=NCHW only, not layout=NHWC");
  expect_refused("conv2d:N=1,C=4,H=8,W=8,K=4,R=3,S=3,groups=2", "the conv2d GPU template serves groups=1 only");
  expect_refused("depthwise_conv2d:N=1,C=4,H=8,W=8,R=3,S=3,layout=NHWC",
                 "the depthwise_conv2d GPU template serves layout=NCHW only");
  expect_refused("softmax:shape=4x8,axis=1",
                 "no tuning template for op 'softmax' on target 'cuda'; templates exist for: matmul, batch_matmul, "
                 "dense, conv2d, depthwise_conv2d, max_pool2d, avg_pool2d, add, sub");
}

TEST(GpuGemmTemplate, SpaceAndDefaultOfALargeMatmul) {
  std::unique_ptr<Task> task = task_of("matmul:M=1024,N=1024,K=1024", Target::parse("cuda"));
  std::vector<std::string> names;
  for (const Knob& k : task->space().knobs()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tile_y", "tile_x", "tile_k", "vector", "vectorize_tile",
                                             "auto_unroll_max_step"}));
  EXPECT_EQ(task->space().knob("vector").choices, (std::vector<json>{1, 2, 4}));
  EXPECT_EQ(task->space().knob("auto_unroll_max_step").choices, (std::vector<json>{0, 16, 64, 512}));
  // 8 x 8 threads, each a 4 x 4 register tile; k tiles of 8; float4 fetches.
  EXPECT_EQ(task->default_config().to_json()["knobs"],
            json::parse(R"({"tile_y": [32, 1, 8, 4], "tile_x": [32, 1, 8, 4], "tile_k": [128, 8], "vector": 4,
                            "vectorize_tile": 0, "auto_unroll_max_step": 512})"));
  EXPECT_EQ(task_of("matmul:M=8,N=8,K=8", opencl())->space().knob("vector").choices,
            (std::vector<json>{1, 2, 4, 8, 16}));
}

// A register tile one vector wide: each thread's products and write-back are vector
// operations (OpenCL vloadN/vstoreN), and the results still match the reference.
TEST(GpuGemmTemplate, AVectorizedRegisterTileComputesInVectors) {
  std::unique_ptr<Task> task = task_of("matmul:M=64,N=64,K=32", opencl());
  json knobs = task->default_config().to_json();
  knobs["knobs"]["tile_x"] = {2, 1, 4, 8};
  knobs["knobs"]["vectorize_tile"] = 1;
  Config c = task->space().from_json(knobs);
  ASSERT_TRUE(task->space().is_valid(c)) << task->space().why_invalid(c);
  std::string source = emit({task->apply(c).func()}, opencl(), "opencl");
  EXPECT_NE(source.find("vstore8("), std::string::npos) << source;
  if (!has_opencl_device()) GTEST_SKIP() << "SKIP: no OpenCL device";
  expect_correct(*task, c, 3, opencl());
  knobs["knobs"]["tile_x"] = {1, 1, 4, 16};
  knobs["knobs"]["tile_y"] = {8, 1, 8, 1};
  EXPECT_TRUE(task->space().is_valid(task->space().from_json(knobs)));
  knobs["knobs"]["tile_x"] = {2, 1, 32, 1};
  EXPECT_EQ(task->space().why_invalid(task->space().from_json(knobs)),
            "a vectorized register tile is as wide as a vector of the target");
}

// Odd extents: the largest divisors up to the classic tile, a single row of threads
// leaving room for 64 along N; vectors only where they divide both tiles' innermost
// extents.
TEST(GpuGemmTemplate, DefaultOfOddExtents) {
  std::unique_ptr<Task> task = task_of("dense:M=1,N=40,K=12,bias=1", Target::parse("cuda"));
  EXPECT_EQ(task->default_config().to_json()["knobs"],
            json::parse(R"({"tile_y": [1, 1, 1, 1], "tile_x": [1, 1, 10, 4], "tile_k": [2, 6], "vector": 2,
                            "vectorize_tile": 0, "auto_unroll_max_step": 512})"));
  Config c = task->default_config();
  json four = c.to_json();
  four["knobs"]["vector"] = 4;  // 6 is the k extent of both tiles (W is [N, K])
  EXPECT_EQ(task->space().why_invalid(task->space().from_json(four)),
            "the vector width divides the innermost extents of the A and B tiles");
}

// The GEMM's fetch loads A and B as float4 vectors; the injective template stores them.
TEST(GpuTemplateBuilds, VectorKnobsBecomeVectorAccesses) {
  std::unique_ptr<Task> gemm = task_of("matmul:M=64,N=64,K=32", opencl());
  std::string source = emit({gemm->apply(gemm->default_config()).func()}, opencl(), "opencl");
  EXPECT_NE(source.find("vload4(0, (A + "), std::string::npos) << source;
  EXPECT_NE(source.find("vload4(0, (B + "), std::string::npos) << source;
  std::unique_ptr<Task> relu = task_of("relu:shape=64x16", opencl());
  EXPECT_EQ(relu->default_config().knob_int("vector"), 4);
  EXPECT_NE(emit({relu->apply(relu->default_config()).func()}, opencl(), "opencl").find("vstore4"), std::string::npos);
}

// Virtual threads compute their sub-tiles in turn, each staging its own A and B tiles:
// shared memory holds one virtual thread's tiles (16 x 8 each), not the block's.
TEST(GpuGemmTemplate, VirtualThreadsStageTheirOwnTiles) {
  try {
    open_gpu_device(opencl());
  } catch (const UserError& e) {
    GTEST_SKIP() << "SKIP: no OpenCL device: " << e.what();
  }
  std::unique_ptr<Task> task = task_of("matmul:M=32,N=64,K=16", opencl());
  Config c = task->space().from_json({{"knobs",
                                       {{"tile_y", {1, 2, 4, 4}},
                                        {"tile_x", {2, 2, 4, 4}},
                                        {"tile_k", {2, 8}},
                                        {"vector", 4},
                                        {"vectorize_tile", 0},
                                        {"auto_unroll_max_step", 0}}}});
  std::string source = emit({task->apply(c).func()}, opencl(), "opencl");
  EXPECT_NE(source.find("__local float A_shared[128]"), std::string::npos) << source;
  EXPECT_NE(source.find("__local float B_shared[128]"), std::string::npos) << source;
  expect_correct(*task, c, 3, opencl());
}

// dense's bias and activation and avg_pool2d's division read the register tile: one
// kernel, no temporary in global memory.
TEST(GpuTemplateBuilds, EpiloguesReadTheRegisters) {
  for (const char* workload : {"dense:M=8,N=16,K=8,bias=1,act=relu", "avg_pool2d:N=1,C=2,H=7,W=7,kernel=3,pad=1"}) {
    std::unique_ptr<Task> task = task_of(workload, opencl());
    DeviceProgram program = build_device_program({lower(task->apply(task->default_config()).func())}, opencl());
    const DeviceProgramFunction& f = program.function(task->op().func.name);
    EXPECT_EQ(f.launches.size(), 1u) << workload;
    EXPECT_TRUE(f.temporary_bytes.empty()) << workload;
  }
}

// auto_unroll_max_step unrolls the register tile's loops: fewer loops are left.
TEST(GpuTemplateBuilds, AutoUnrollLeavesFewerLoops) {
  std::unique_ptr<Task> task = task_of("matmul:M=64,N=64,K=32", opencl());
  auto loops_under = [&](int64_t steps) {
    json j = task->default_config().to_json();
    j["knobs"]["auto_unroll_max_step"] = steps;
    std::string source = emit({task->apply(task->space().from_json(j)).func()}, opencl(), "opencl");
    int n = 0;
    for (size_t at = source.find("for ("); at != std::string::npos; at = source.find("for (", at + 1)) ++n;
    return n;
  };
  EXPECT_LT(loops_under(512), loops_under(16));
  EXPECT_LT(loops_under(16), loops_under(0));
}

// The build's legality check rejects what the target's limits forbid, naming the quantity
// and the limit; the space's constraints reject the same configs.
TEST(GpuTemplateBuilds, OverLimitConfigsAreRejected) {
  auto expect_rejected = [](const char* workload, const char* target, const json& knobs, const std::string& quantity,
                            const std::string& constraint) {
    std::unique_ptr<Task> task = task_of(workload, Target::parse(target));
    Config c = task->space().from_json({{"knobs", knobs}});
    EXPECT_EQ(task->space().why_invalid(c), constraint);
    try {
      build_device_program({lower(task->apply(c).func())}, task->target());
      ADD_FAILURE() << "no GpuLimitError for " << c.to_string();
    } catch (const GpuLimitError& e) {
      EXPECT_NE(std::string(e.what()).find(quantity), std::string::npos) << e.what();
    }
  };
  expect_rejected("matmul:M=64,N=128,K=16", "opencl -max_threads_per_block=256",
                  {{"tile_y", {2, 1, 32, 1}},
                   {"tile_x", {2, 1, 64, 1}},
                   {"tile_k", {2, 8}},
                   {"vector", 1},
                   {"vectorize_tile", 0},
                   {"auto_unroll_max_step", 0}},
                  "2048 threads per block (64 x 32 x 1) exceed the limit of 256",
                  "at most 256 threads per block (the limit of target 'opencl -max_threads_per_block=256')");
  expect_rejected("matmul:M=128,N=128,K=32", "opencl -max_shared_memory_per_block=4096",
                  {{"tile_y", {2, 1, 8, 8}},
                   {"tile_x", {2, 1, 8, 8}},
                   {"tile_k", {1, 32}},
                   {"vector", 4},
                   {"vectorize_tile", 0},
                   {"auto_unroll_max_step", 0}},
                  "16384 bytes of shared memory exceed the limit of 4096",
                  "at most 4096 bytes of shared memory per block (the limit of target "
                  "'opencl -max_shared_memory_per_block=4096')");
}

}  // namespace
}  // namespace temper::schedule_space
