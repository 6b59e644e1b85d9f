// GPU builds end to end: scheduled functions built for opencl run on the machine's OpenCL
// device (PoCL here) and match the LLVM build; for cuda they compile through NVRTC to PTX,
// and run where a CUDA device exists. A GPU program survives a save and load.
#include <gtest/gtest.h>

#include <filesystem>

#include "compiler/codegen/build.h"
#include "compiler/codegen/gpu/device_program.h"
#include "compiler/codegen/gpu/gpu_module.h"
#include "compiler/codegen/gpu/nvrtc.h"
#include "compiler/ops/gpu_schedules.h"
#include "compiler/ops/op_data.h"
#include "compiler/runtime/gpu/gpu_device.h"
#include "compiler/runtime/ndarray.h"
#include "unit/test_schedule_workloads.h"
#include "user_error_test_util.h"

namespace temper {
namespace {

using testing_util::expect_user_error;

// The outputs of f's build for target on seeded random inputs (the last parameter is the output).
NDArray run(const PrimFunc& f, const Target& target) {
  BuildResult built = build({f}, target);
  std::vector<NDArray> arrays;
  std::vector<NDArray*> args;
  for (size_t i = 0; i < f.params.size(); ++i) {
    std::vector<int64_t> shape;
    for (const Expr& d : f.params[i]->shape) shape.push_back(*as_const_int(d));
    arrays.push_back(i + 1 < f.params.size() ? NDArray::random(shape, DataType::float32(), 10 + i)
                                             : NDArray::zeros(shape, DataType::float32()));
  }
  for (NDArray& a : arrays) args.push_back(&a);
  built.module->get_function(f.name)(args);
  return arrays.back();
}

void expect_same_as_cpu(const Schedule& s, const PrimFunc& definition, const Target& target) {
  Comparison cmp = compare(run(s.func(), target), run(definition, Target::parse("llvm")), 1e-4, 1e-5);
  EXPECT_TRUE(cmp.ok()) << cmp.message;
}

// Skips (visibly) where this machine has no device of the target's kind.
#define SKIP_WITHOUT_DEVICE(target)                                         \
  do {                                                                      \
    try {                                                                   \
      open_gpu_device(target);                                              \
    } catch (const UserError& e) {                                          \
      GTEST_SKIP() << "SKIP: " << (target).to_string() << ": " << e.what(); \
    }                                                                       \
  } while (0)

TEST(OpenClBuild, TiledMatmulMatchesTheCpu) {
  Target opencl = Target::parse("opencl");
  SKIP_WITHOUT_DEVICE(opencl);
  expect_same_as_cpu(testing::gpu_matmul(64, 96, 32), testing::matmul(64, 96, 32), opencl);
}

TEST(OpenClBuild, TwoKernelsShareATemporary) {
  Target opencl = Target::parse("opencl");
  SKIP_WITHOUT_DEVICE(opencl);
  Schedule s(testing::matmul_relu(32, 16, 8));
  for (const char* name : {"C", "D"}) {
    std::vector<LoopRV> l = s.get_loops(s.get_block(name));
    s.bind(l[0], "blockIdx.x");
    s.bind(l[1], "threadIdx.x");
  }
  expect_same_as_cpu(s, testing::matmul_relu(32, 16, 8), opencl);
}

TEST(OpenClBuild, AProgramSavedAndLoadedRunsTheSame) {
  Target opencl = Target::parse("opencl");
  SKIP_WITHOUT_DEVICE(opencl);
  Schedule s = testing::gpu_matmul(32, 32, 16);
  DeviceProgram p = build_device_program({lower(s.func())}, opencl);
  std::string path = (std::filesystem::temp_directory_path() / "temper_test_gpu_program.json").string();
  p.save(path);
  GpuModule m(DeviceProgram::load(path), open_gpu_device(opencl));
  std::filesystem::remove(path);
  NDArray a = NDArray::random({32, 16}, DataType::float32(), 1), b = NDArray::random({16, 32}, DataType::float32(), 2);
  NDArray c = NDArray::zeros({32, 32}, DataType::float32()), expected = NDArray::zeros({32, 32}, DataType::float32());
  m.get_function("matmul")({&a, &b, &c});
  build({testing::matmul(32, 32, 16)}, Target::parse("llvm")).module->get_function("matmul")({&a, &b, &expected});
  EXPECT_TRUE(compare(c, expected, 1e-4, 1e-5).ok());
  // A host tensor of the wrong shape is refused before anything runs.
  NDArray small = NDArray::zeros({16, 32}, DataType::float32());
  expect_user_error(
      [&] {
        m.get_function("matmul")({&a, &b, &small});
      },
      {"matmul: argument 2 (C) must be a compact host tensor of float32 with shape [32, 32]"});
}

TEST(OpenClBuild, TheDefaultGpuScheduleServesEveryKindOfOp) {
  Target opencl = Target::parse("opencl");
  SKIP_WITHOUT_DEVICE(opencl);
  for (const char* workload : {"softmax:shape=8x40,axis=1", "add:A=4x1x6,B=5x6", "layer_norm:shape=6x32,axis=1",
                               "max_pool2d:N=1,C=3,H=9,W=9,kernel=3,stride=2,pad=1",
                               "conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3,pad=1"}) {
    ops::OpInstance op = ops::instantiate(ops::Workload::parse(workload));
    BuildResult built = build({ops::schedule_gpu_default(op).func()}, opencl);
    ops::OpData data = ops::make_op_data(op, 7);
    Comparison cmp = ops::run_and_check(built.module->get_function(op.func.name), data);
    EXPECT_TRUE(cmp.ok()) << workload << ": " << cmp.message;
  }
}

TEST(GpuProgramErrors, AFileThatIsNotAProgramIsRefused) {
  std::string path = (std::filesystem::temp_directory_path() / "temper_test_not_a_program.json").string();
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("{\"format\": \"something else\"}", f);
  std::fclose(f);
  expect_user_error([&] { DeviceProgram::load(path); }, {path, "cannot read the GPU program", "build it again"});
  std::filesystem::remove(path);
}

TEST(CudaBuild, TiledMatmulCompilesToPtxForSm80AndSm90) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "SKIP: " << why;
  for (const char* arch : {"sm_80", "sm_90"}) {
    std::string ptx = emit({testing::gpu_matmul(64, 64, 64).func()}, Target::parse(str("cuda -arch=", arch)), "ptx");
    EXPECT_NE(ptx.find(".entry matmul_kernel0"), std::string::npos) << ptx.substr(0, 400);
    EXPECT_NE(ptx.find(str(".target ", arch)), std::string::npos) << ptx.substr(0, 400);
  }
}

TEST(CudaBuild, TiledMatmulMatchesTheCpuOnADevice) {
  Target cuda = Target::parse("cuda");
  SKIP_WITHOUT_DEVICE(cuda);
  expect_same_as_cpu(testing::gpu_matmul(64, 96, 32), testing::matmul(64, 96, 32), cuda);
}

}  // namespace
}  // namespace temper
