// A compiled GPU build: the device code of a set of PrimFuncs and, per function, what
// the host does to call it (allocate its temporaries, launch its kernels in order).
// It is a plain value: the builder writes it to a file, the measurer's worker and
// GpuModule read it back and run it on a device.
//
//   DeviceProgram p = build_device_program(lowered, Target::parse("opencl"));
//   p.save("/tmp/matmul.gpu.json");
//   auto m = std::make_unique<GpuModule>(DeviceProgram::load(path), open_gpu_device(target));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/ir/type.h"
#include "compiler/runtime/gpu/gpu_device.h"
#include "compiler/target/target.h"

namespace temper {

struct DeviceTensorSpec {
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;
  int64_t bytes() const;
};

struct KernelLaunch {
  std::string kernel;
  LaunchDims dims;
  // Each kernel argument: a parameter (index < params.size()) or a temporary (index -
  // params.size()).
  std::vector<int> args;
};

struct DeviceProgramFunction {
  std::string name;
  std::vector<DeviceTensorSpec> params;
  std::vector<bool> written;  // by parameter: some kernel stores to it (an output)
  std::vector<int64_t> temporary_bytes;
  std::vector<KernelLaunch> launches;
};

struct DeviceProgram {
  Target target;
  std::string source;  // CUDA C or OpenCL C, as printed
  std::string code;    // what the device loads: PTX for CUDA, the source for OpenCL
  std::vector<DeviceProgramFunction> functions;

  const DeviceProgramFunction& function(const std::string& name) const;  // UserError if absent
  // A JSON file; load() refuses a file that is not one (naming the path) or is of another version.
  void save(const std::string& path) const;
  static DeviceProgram load(const std::string& path);
};

// Splits each lowered function into kernels, checks them against the target's limits
// (GpuLimitError), prints the device code and, for CUDA, compiles it to PTX with NVRTC.
DeviceProgram build_device_program(const std::vector<PrimFunc>& lowered, const Target& target);

// The device source of lowered functions for `temper show --emit cuda|opencl|ptx`.
std::string emit_device_code(const std::vector<PrimFunc>& lowered, const Target& target, const std::string& what);

}  // namespace temper
