#include "compiler/codegen/gpu/gpu_module.h"

#include "compiler/ir/error.h"
#include "compiler/runtime/ndarray.h"

namespace temper {

struct GpuModule::Loaded {
  DeviceProgram program;
  std::shared_ptr<GpuDevice> device;
  std::shared_ptr<GpuProgram> code;

  DeviceArgs alloc_args(const DeviceProgramFunction& f) {
    DeviceArgs args;
    try {
      for (const DeviceTensorSpec& p : f.params) args.params.push_back(device->alloc(p.bytes()));
      for (int64_t bytes : f.temporary_bytes) args.temporaries.push_back(device->alloc(bytes));
    } catch (...) {
      free_args(args);
      throw;
    }
    return args;
  }

  void free_args(DeviceArgs& args) {
    for (DeviceMemory m : args.params) device->free(m);
    for (DeviceMemory m : args.temporaries) device->free(m);
    args = {};
  }

  void run(const DeviceProgramFunction& f, const DeviceArgs& args) {
    for (const KernelLaunch& l : f.launches) {
      KernelArgs kernel_args;
      for (int i : l.args) {
        kernel_args.push_back(i < static_cast<int>(args.params.size()) ? args.params[i]
                                                                       : args.temporaries[i - args.params.size()]);
      }
      code->launch(l.kernel, l.dims, kernel_args);
    }
  }

  // One call on host tensors: copy in, run, wait, copy the outputs back.
  void call_on_host(const DeviceProgramFunction& f, const TemperTensor* tensors, int32_t num_args) {
    if (num_args != static_cast<int32_t>(f.params.size())) {
      throw UserError(str(f.name, ": expected ", f.params.size(), " arguments, got ", num_args));
    }
    for (size_t i = 0; i < f.params.size(); ++i) {
      const TemperTensor& t = tensors[i];
      const DeviceTensorSpec& p = f.params[i];
      bool same_shape = t.ndim == static_cast<int32_t>(p.shape.size());
      for (int d = 0; same_shape && d < t.ndim; ++d) same_shape = t.shape[d] == p.shape[d];
      if (t.device_type != TEMPER_DEVICE_CPU || !same_shape || t.bits != p.dtype.bits() || t.strides) {
        throw UserError(str(f.name, ": argument ", i, " (", p.name, ") must be a compact host tensor of ",
                            p.dtype.to_string(), " with shape ", shape_to_string(p.shape)));
      }
    }
    DeviceArgs args = alloc_args(f);
    try {
      for (size_t i = 0; i < f.params.size(); ++i)
        device->copy_from_host(args.params[i], tensors[i].data, f.params[i].bytes());
      run(f, args);
      device->synchronize();
      for (size_t i = 0; i < f.params.size(); ++i) {
        if (f.written[i]) device->copy_to_host(tensors[i].data, args.params[i], f.params[i].bytes());
      }
    } catch (...) {
      free_args(args);
      throw;
    }
    free_args(args);
  }
};

GpuModule::GpuModule(DeviceProgram program, std::shared_ptr<GpuDevice> device) : loaded_(std::make_shared<Loaded>()) {
  TEMPER_CHECK(device->kind() == program.target.kind, "a ", target_kind_name(program.target.kind), " program given a ",
               target_kind_name(device->kind()), " device");
  loaded_->code = device->load_program(program.code);
  loaded_->program = std::move(program);
  loaded_->device = std::move(device);
}

GpuModule::~GpuModule() = default;

const DeviceProgram& GpuModule::program() const {
  return loaded_->program;
}
GpuDevice& GpuModule::device() {
  return *loaded_->device;
}

GpuModule::DeviceArgs GpuModule::alloc_args(const std::string& function) {
  return loaded_->alloc_args(loaded_->program.function(function));
}

void GpuModule::free_args(DeviceArgs& args) {
  loaded_->free_args(args);
}

void GpuModule::run_on_device(const std::string& function, const DeviceArgs& args) {
  loaded_->run(loaded_->program.function(function), args);
}

TimingResult GpuModule::time(const std::string& function, const std::vector<NDArray*>& host_args,
                             const TimingOptions& options) {
  const DeviceProgramFunction& f = loaded_->program.function(function);
  if (host_args.size() != f.params.size()) {
    throw UserError(str(f.name, ": expected ", f.params.size(), " arguments, got ", host_args.size()));
  }
  DeviceArgs args = loaded_->alloc_args(f);
  try {
    for (size_t i = 0; i < f.params.size(); ++i) {
      device().copy_from_host(args.params[i], host_args[i]->data(), f.params[i].bytes());
    }
    auto run_group = [&](int calls) {
      return device().time_on_device([&] {
        for (int c = 0; c < calls; ++c) loaded_->run(f, args);
      });
    };
    TimingResult r = time_groups(
        run_group, [&] { device().flush_cache(); }, options);
    loaded_->free_args(args);
    return r;
  } catch (...) {
    // The launch's error is what the caller needs; a device that failed may refuse the frees too.
    try {
      loaded_->free_args(args);
    } catch (const std::exception&) {
    }
    throw;
  }
}

PackedFunc GpuModule::get_function(const std::string& name) {
  const DeviceProgramFunction* f = &loaded_->program.function(name);
  std::shared_ptr<Loaded> loaded = loaded_;
  return PackedFunc(name, [loaded, f](const TemperTensor* tensors, int32_t num_args) -> int32_t {
    try {
      loaded->call_on_host(*f, tensors, num_args);
      return 0;
    } catch (const std::exception& e) {
      temper_set_last_error(e.what());
      return -1;
    }
  });
}

}  // namespace temper
