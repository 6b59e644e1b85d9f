#include "tuning_db/record.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <type_traits>
#include <map>
#include <mutex>
#include <sstream>

#include "compiler/codegen/gpu/nvrtc.h"
#include "compiler/ir/error.h"
#include "compiler/ir/text.h"
#include "tuning_db/model_choice.h"
#include "compiler/ops/workload.h"
#include "compiler/runtime/gpu/gpu_device.h"

namespace temper::tuning_db {

WorkloadKey WorkloadKey::from(const ops::Workload& workload) {
  return {workload.op, workload.to_string()};
}

namespace {

// The value of the first "key : value" line of /proc/cpuinfo whose key is `key`.
std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    if (name != key) continue;
    size_t start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

// The first line `cc --version` prints: the compiler the C target builds with.
std::string system_c_compiler_version() {
  FILE* pipe = popen("cc --version 2>/dev/null", "r");
  if (!pipe) return "";
  char buffer[256] = {0};
  std::string first_line = std::fgets(buffer, sizeof buffer, pipe) ? buffer : "";
  pclose(pipe);
  while (!first_line.empty() && first_line.back() == '\n') first_line.pop_back();
  return first_line;
}

// The fingerprint of the device a GPU target names, "" when it cannot be opened. A device
// does not change while the process runs, and opening one (a CUDA context) takes a
// while: each target string is asked once, and a model's round-robin job asks per turn.
std::string gpu_device_fingerprint(const Target& target) {
  static std::mutex mutex;
  static std::map<std::string, std::string> by_target;
  std::lock_guard lock(mutex);
  auto [it, inserted] = by_target.try_emplace(target.to_string());
  if (inserted) {
    try {
      it->second = open_gpu_device(target)->info().fingerprint();
    } catch (const UserError&) {
      it->second = "";
    }
  }
  return it->second;
}

}  // namespace

TargetInfo host_target_info(const Target& target) {
  TargetInfo info;
  info.target = target.to_string();
  info.cpu_model = cpuinfo_field("model name");
  info.cpu_features = cpuinfo_field("flags");
  info.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  switch (target.kind) {
    case Target::Kind::LLVM:
      info.compiler = std::string("LLVM ") + TEMPER_LLVM_VERSION_STRING;
      break;
    case Target::Kind::C:
      info.compiler = system_c_compiler_version();
      break;
    case Target::Kind::CUDA:
      // NVRTC compiles to PTX, the driver (in the device fingerprint) PTX to machine code.
      info.compiler = nvrtc_version();
      info.device = gpu_device_fingerprint(target);
      break;
    case Target::Kind::OpenCL:
      // The device's driver compiles OpenCL C: its version is in the device fingerprint.
      info.device = gpu_device_fingerprint(target);
      break;
  }
  return info;
}

bool same_machine(const TargetInfo& a, const TargetInfo& b) {
  return a.cpu_model == b.cpu_model && a.cpu_features == b.cpu_features && a.device == b.device;
}

namespace {

std::string vector_features(const std::string& cpu_features) {
  static const char* kVectorFlags[] = {"avx512f",     "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16",
                                       "avx512_fp16", "amx_tile", "avx2",     "fma",         "avx",
                                       "sse4_2",      "asimd",    "sve",      "neon"};
  std::istringstream in(cpu_features);
  std::vector<std::string> flags{std::istream_iterator<std::string>(in), {}};
  std::vector<std::string> found;
  for (const char* flag : kVectorFlags) {
    if (std::find(flags.begin(), flags.end(), flag) != flags.end()) found.push_back(flag);
  }
  return found.empty() ? "no SIMD flags listed" : join(found, " ");
}

}  // namespace

std::string describe_machine(const TargetInfo& target) {
  std::vector<std::string> parts;
  if (!target.device.empty()) parts.push_back("device " + target.device);
  parts.push_back(target.cpu_model.empty() ? "unknown CPU" : target.cpu_model);
  parts.push_back(plural(target.cores, "core"));
  if (!target.compiler.empty()) parts.push_back(target.compiler);
  parts.push_back(vector_features(target.cpu_features));
  return join(parts, ", ");
}

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::None:
      return "None";
    case ErrorKind::CompileError:
      return "CompileError";
    case ErrorKind::CompileTimeout:
      return "CompileTimeout";
    case ErrorKind::RuntimeError:
      return "RuntimeError";
    case ErrorKind::RunTimeout:
      return "RunTimeout";
    case ErrorKind::WrongResult:
      return "WrongResult";
    case ErrorKind::InstantiationError:
      return "InstantiationError";
  }
  TEMPER_CHECK(false, "unknown ErrorKind ", static_cast<int>(kind));
}

ErrorKind parse_error_kind(const std::string& name) {
  for (ErrorKind kind : {ErrorKind::None, ErrorKind::CompileError, ErrorKind::CompileTimeout, ErrorKind::RuntimeError,
                         ErrorKind::RunTimeout, ErrorKind::WrongResult, ErrorKind::InstantiationError}) {
    if (name == error_kind_name(kind)) return kind;
  }
  throw UserError(str("unknown measurement error kind '", name,
                      "'; expected None, CompileError, CompileTimeout, RuntimeError, RunTimeout, WrongResult or "
                      "InstantiationError"));
}

bool TuningRecord::is_valid() const {
  return error == ErrorKind::None && std::isfinite(mean) && mean > 0;
}

const char* temper_version() {
  return TEMPER_VERSION_STRING;
}

int64_t now_timestamp() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

namespace {

nlohmann::json workload_to_json(const WorkloadKey& w) { return {{"op", w.op}, {"workload", w.workload}}; }

nlohmann::json target_to_json(const TargetInfo& t) {
  return {{"target", t.target},   {"cpu_model", t.cpu_model}, {"cpu_features", t.cpu_features},
          {"cores", t.cores},     {"compiler", t.compiler},   {"device", t.device}};
}

}  // namespace

nlohmann::json record_to_json(const TuningRecord& r) {
  return {
      {"workload", workload_to_json(r.workload)},
      {"target", target_to_json(r.target)},
      {"trace", r.trace},
      {"config", r.config},
      {"tuner", r.tuner},
      {"costs", r.costs},
      {"mean", std::isfinite(r.mean) ? nlohmann::json(r.mean) : nlohmann::json(nullptr)},
      {"error", error_kind_name(r.error)},
      {"error_message", r.error_message},
      {"timestamp", r.timestamp},
      {"temper_version", r.temper_version},
  };
}

nlohmann::json model_choice_to_json(const ModelChoice& c) {
  return {
      {"workload", workload_to_json(c.workload)},
      {"target", target_to_json(c.target)},
      {"model", c.model},
      {"trace", c.trace},
      {"config", c.config},
      {"picked", c.picked},
      {"model_seconds", c.model_seconds},
      {"log_best_seconds", c.log_best_seconds},
      {"timestamp", c.timestamp},
      {"temper_version", c.temper_version},
  };
}

namespace {

// json[key] converted to T, or a UserError naming the field and the type it needs.
template <typename T>
T field(const nlohmann::json& json, const char* key, const char* type, const char* what = "tuning record") {
  if (!json.is_object() || !json.contains(key)) throw UserError(str(what, " has no field '", key, "'"));
  // nlohmann converts any number to an integer type, a float out of its range included
  // (undefined behaviour): an integer field takes an integer that fits it, nothing else.
  if constexpr (std::is_integral_v<T>) {
    const nlohmann::json& value = json.at(key);
    bool fits = value.is_number_integer() &&
                (value.is_number_unsigned() ? value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
                                            : value.get<int64_t>() >= std::numeric_limits<T>::min() &&
                                                  value.get<int64_t>() <= std::numeric_limits<T>::max());
    if (!fits) throw UserError(str(what, " field '", key, "' must be ", type, ", not ", value.dump()));
  }
  try {
    return json.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw UserError(str(what, " field '", key, "' must be ", type, ", not ", json.at(key).dump()));
  }
}

WorkloadKey workload_from_json(const nlohmann::json& json, const char* what) {
  nlohmann::json workload = field<nlohmann::json>(json, "workload", "an object", what);
  return {field<std::string>(workload, "op", "a string", what), field<std::string>(workload, "workload", "a string", what)};
}

TargetInfo target_from_json(const nlohmann::json& json, const char* what) {
  nlohmann::json target = field<nlohmann::json>(json, "target", "an object", what);
  TargetInfo t;
  t.target = field<std::string>(target, "target", "a string", what);
  t.cpu_model = field<std::string>(target, "cpu_model", "a string", what);
  t.cpu_features = field<std::string>(target, "cpu_features", "a string", what);
  t.cores = field<int>(target, "cores", "an integer", what);
  t.compiler = field<std::string>(target, "compiler", "a string", what);
  if (target.contains("device")) t.device = field<std::string>(target, "device", "a string", what);
  return t;
}

}  // namespace

TuningRecord record_from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw UserError(str("a tuning record must be a JSON object, not ", json.dump()));
  TuningRecord r;
  r.workload = workload_from_json(json, "tuning record");
  r.target = target_from_json(json, "tuning record");
  r.trace = field<nlohmann::json>(json, "trace", "JSON");
  r.config = field<nlohmann::json>(json, "config", "JSON");
  if (json.contains("tuner")) r.tuner = field<std::string>(json, "tuner", "a string");
  r.costs = field<std::vector<double>>(json, "costs", "a list of numbers");
  nlohmann::json mean = field<nlohmann::json>(json, "mean", "a number or null");
  if (!mean.is_null() && !mean.is_number()) throw UserError(str("tuning record field 'mean' must be a number or null"));
  r.mean = mean.is_null() ? std::numeric_limits<double>::quiet_NaN() : mean.get<double>();
  r.error = parse_error_kind(field<std::string>(json, "error", "a string"));
  r.error_message = field<std::string>(json, "error_message", "a string");
  r.timestamp = field<int64_t>(json, "timestamp", "an integer");
  r.temper_version = field<std::string>(json, "temper_version", "a string");
  return r;
}

ModelChoice model_choice_from_json(const nlohmann::json& json) {
  constexpr const char* what = "model choice";
  if (!json.is_object()) throw UserError(str("a model choice must be a JSON object, not ", json.dump()));
  ModelChoice c;
  c.workload = workload_from_json(json, what);
  c.target = target_from_json(json, what);
  c.model = field<std::string>(json, "model", "a string", what);
  c.trace = field<nlohmann::json>(json, "trace", "JSON", what);
  c.config = field<nlohmann::json>(json, "config", "JSON", what);
  c.picked = field<std::string>(json, "picked", "a string", what);
  c.model_seconds = field<double>(json, "model_seconds", "a number", what);
  c.log_best_seconds = field<double>(json, "log_best_seconds", "a number", what);
  c.timestamp = field<int64_t>(json, "timestamp", "an integer", what);
  c.temper_version = field<std::string>(json, "temper_version", "a string", what);
  return c;
}

}  // namespace temper::tuning_db
