// A DeviceProgram loaded on a device, as a Module. Its functions take host tensors: a
// call copies the inputs to device memory, runs the kernels, waits, and copies the
// outputs back (the tests', the CLI's and the graph executor's way to call GPU code).
// The measurer times the launches alone through run_on_device.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/gpu/device_program.h"
#include "compiler/runtime/gpu/gpu_device.h"
#include "compiler/runtime/module.h"
#include "compiler/runtime/ndarray.h"
#include "compiler/runtime/timer.h"

namespace temper {

class GpuModule : public Module {
 public:
  // Loads the program's code on the device (UserError if it does not build or load).
  GpuModule(DeviceProgram program, std::shared_ptr<GpuDevice> device);
  ~GpuModule() override;

  // The function calls keep the program and the device alive.
  PackedFunc get_function(const std::string& name) override;

  const DeviceProgram& program() const;
  GpuDevice& device();

  // Device buffers for one call of a function: its parameters' and its temporaries'.
  struct DeviceArgs {
    std::vector<DeviceMemory> params;
    std::vector<DeviceMemory> temporaries;
  };
  DeviceArgs alloc_args(const std::string& function);
  void free_args(DeviceArgs& args);
  // Queues the function's kernels on buffers already on the device; does not wait.
  void run_on_device(const std::string& function, const DeviceArgs& args);
  // Times the function on the device alone (runtime/timer.h's rule, the device's clock):
  // the host arguments are copied to the device once, every group of calls is timed by
  // device events, and flush_cache overwrites the device's cache. Copies and launch
  // overheads outside the kernels do not count.
  TimingResult time(const std::string& function, const std::vector<NDArray*>& host_args, const TimingOptions& options);

 private:
  struct Loaded;
  std::shared_ptr<Loaded> loaded_;
};

}  // namespace temper
