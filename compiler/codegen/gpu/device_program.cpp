#include "compiler/codegen/gpu/device_program.h"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler/codegen/gpu/codegen_cuda.h"
#include "compiler/codegen/gpu/codegen_opencl.h"
#include "compiler/codegen/gpu/gpu_limits.h"
#include "compiler/codegen/gpu/nvrtc.h"
#include "compiler/ir/functor.h"
#include "compiler/lower/split_host_device.h"
#include "compiler/runtime/file_io.h"

namespace temper {
namespace {

constexpr int kFormatVersion = 1;

std::vector<int64_t> constant_shape(const Buffer& b) {
  std::vector<int64_t> shape;
  for (const Expr& d : b->shape) shape.push_back(*as_const_int(d));
  return shape;
}

DeviceProgramFunction host_side(const DeviceFunction& f) {
  DeviceProgramFunction out;
  out.name = f.func.name;
  std::map<const BufferNode*, int> index;
  for (const Buffer& p : f.func.params) {
    index[p.get()] = static_cast<int>(out.params.size());
    out.params.push_back(DeviceTensorSpec{p->name, p->dtype, constant_shape(p)});
  }
  out.written.assign(out.params.size(), false);
  for (const Buffer& t : f.temporaries) {
    index[t.get()] = static_cast<int>(out.params.size() + out.temporary_bytes.size());
    out.temporary_bytes.push_back(DeviceTensorSpec{t->name, t->dtype, constant_shape(t)}.bytes());
  }
  for (const DeviceKernel& k : f.kernels) {
    KernelLaunch launch{k.name, LaunchDims{k.grid, k.block}, {}};
    for (const Buffer& b : k.params) {
      auto it = index.find(b.get());
      TEMPER_CHECK(it != index.end(), "kernel ", k.name, " uses ", b->name, ", neither a parameter nor a temporary");
      launch.args.push_back(it->second);
    }
    post_order_visit(k.body, [&](const Node* n) {
      if (n->kind != NodeKind::BufferStore) return;
      auto it = index.find(static_cast<const BufferStoreNode*>(n)->buffer.get());
      if (it != index.end() && it->second < static_cast<int>(out.params.size())) out.written[it->second] = true;
    });
    out.launches.push_back(std::move(launch));
  }
  return out;
}

nlohmann::json to_json(const DeviceProgramFunction& f) {
  nlohmann::json params = nlohmann::json::array();
  for (size_t i = 0; i < f.params.size(); ++i) {
    const DeviceTensorSpec& p = f.params[i];
    params.push_back(
        {{"name", p.name}, {"dtype", p.dtype.to_string()}, {"shape", p.shape}, {"written", bool(f.written[i])}});
  }
  nlohmann::json launches = nlohmann::json::array();
  for (const KernelLaunch& l : f.launches) {
    launches.push_back({{"kernel", l.kernel}, {"grid", l.dims.grid}, {"block", l.dims.block}, {"args", l.args}});
  }
  return {{"name", f.name}, {"params", params}, {"temporary_bytes", f.temporary_bytes}, {"launches", launches}};
}

DeviceProgramFunction function_from_json(const nlohmann::json& j) {
  DeviceProgramFunction f;
  f.name = j.at("name").get<std::string>();
  for (const nlohmann::json& p : j.at("params")) {
    f.params.push_back(DeviceTensorSpec{p.at("name").get<std::string>(),
                                        DataType::parse(p.at("dtype").get<std::string>()),
                                        p.at("shape").get<std::vector<int64_t>>()});
    f.written.push_back(p.at("written").get<bool>());
  }
  f.temporary_bytes = j.at("temporary_bytes").get<std::vector<int64_t>>();
  for (const nlohmann::json& l : j.at("launches")) {
    f.launches.push_back(KernelLaunch{
        l.at("kernel").get<std::string>(),
        LaunchDims{l.at("grid").get<std::array<int64_t, 3>>(), l.at("block").get<std::array<int64_t, 3>>()},
        l.at("args").get<std::vector<int>>()});
  }
  return f;
}

std::vector<DeviceFunction> split_all(const std::vector<PrimFunc>& lowered, const Target& target) {
  if (!target.is_gpu()) throw UserError(str("target '", target.to_string(), "' is not a GPU target"));
  std::vector<DeviceFunction> functions;
  for (const PrimFunc& f : lowered) functions.push_back(split_host_device(f));
  return functions;
}

std::string print_source(const std::vector<DeviceFunction>& functions, const Target& target) {
  return target.kind == Target::Kind::CUDA ? emit_cuda(functions) : emit_opencl(functions);
}

}  // namespace

int64_t DeviceTensorSpec::bytes() const {
  int64_t n = dtype.bytes();
  for (int64_t d : shape) n *= d;
  return n;
}

const DeviceProgramFunction& DeviceProgram::function(const std::string& name) const {
  for (const DeviceProgramFunction& f : functions) {
    if (f.name == name) return f;
  }
  std::string names;
  for (const DeviceProgramFunction& f : functions) names += (names.empty() ? "" : ", ") + f.name;
  throw UserError(str("the GPU program has no function '", name, "'; it has ", names));
}

void DeviceProgram::save(const std::string& path) const {
  nlohmann::json fns = nlohmann::json::array();
  for (const DeviceProgramFunction& f : functions) fns.push_back(to_json(f));
  nlohmann::json j = {{"format", "temper-device-program"},
                      {"version", kFormatVersion},
                      {"target", target.to_string()},
                      {"source", source},
                      {"code", code},
                      {"functions", fns}};
  write_file_atomically(path, j.dump(), "GPU program");
}

DeviceProgram DeviceProgram::load(const std::string& path) {
  std::string text = read_file(path, "GPU program");
  DeviceProgram p;
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    if (j.value("format", "") != "temper-device-program") throw UserError("not a Temper device program");
    if (j.at("version").get<int>() != kFormatVersion) {
      throw UserError(str("format version ", j.at("version").get<int>(), " where this Temper reads ", kFormatVersion));
    }
    p.target = Target::parse(j.at("target").get<std::string>());
    p.source = j.at("source").get<std::string>();
    p.code = j.at("code").get<std::string>();
    for (const nlohmann::json& f : j.at("functions")) p.functions.push_back(function_from_json(f));
  } catch (const std::exception& e) {
    throw UserError(str(path, ": cannot read the GPU program (", e.what(), "); build it again"));
  }
  return p;
}

DeviceProgram build_device_program(const std::vector<PrimFunc>& lowered, const Target& target) {
  std::vector<DeviceFunction> functions = split_all(lowered, target);
  GpuLimits limits = gpu_limits(target);
  for (const DeviceFunction& f : functions) check_gpu_limits(f, limits);
  DeviceProgram p;
  p.target = target;
  p.source = print_source(functions, target);
  p.code = target.kind == Target::Kind::CUDA ? compile_cuda_to_ptx(p.source, target.arch) : p.source;
  for (const DeviceFunction& f : functions) p.functions.push_back(host_side(f));
  return p;
}

std::string emit_device_code(const std::vector<PrimFunc>& lowered, const Target& target, const std::string& what) {
  std::vector<DeviceFunction> functions = split_all(lowered, target);
  std::string kind = target_kind_name(target.kind);
  if (what == "ptx") {
    if (target.kind != Target::Kind::CUDA) throw UserError(str("--emit ptx needs a cuda target, got '", kind, "'"));
    return compile_cuda_to_ptx(print_source(functions, target), target.arch);
  }
  if (what != kind) {
    throw UserError(str("--emit ", what, " does not fit target '", target.to_string(), "': use --emit ", kind,
                        target.kind == Target::Kind::CUDA ? " or ptx" : ""));
  }
  return print_source(functions, target);
}

}  // namespace temper
