#include "compiler/codegen/gpu/nvrtc.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>
#include <vector>

#include "compiler/ir/error.h"
#include "compiler/target/target.h"

namespace temper {
namespace {

// NVRTC's C API as nvrtc.h declares it (CUDA 11 to 13); the result codes are its ABI.
using nvrtcResult = int;
constexpr nvrtcResult kNvrtcSuccess = 0;
constexpr nvrtcResult kNvrtcErrorInvalidOption = 5;
constexpr nvrtcResult kNvrtcErrorCompilation = 6;
struct NvrtcProgramObject;
using nvrtcProgram = NvrtcProgramObject*;

constexpr const char* kNotFound = "NVRTC (libnvrtc.so) not found";
constexpr const char* kWhatToDo = "install the CUDA Toolkit or set TEMPER_NVRTC=/path/libnvrtc.so";
// The name the compiler's messages give the source.
constexpr const char* kSourceName = "temper_kernels.cu";

struct Nvrtc {
  std::string path;
  std::string version;  // "13.0"
  nvrtcResult (*nvrtcVersion)(int*, int*) = nullptr;
  const char* (*nvrtcGetErrorString)(nvrtcResult) = nullptr;
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                    const char* const*) = nullptr;
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*) = nullptr;
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*) = nullptr;
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char*) = nullptr;
  // Since CUDA 11.2; absent before, and then the list of known architectures is too.
  nvrtcResult (*nvrtcGetNumSupportedArchs)(int*) = nullptr;
  nvrtcResult (*nvrtcGetSupportedArchs)(int*) = nullptr;
};

template <typename Function>
void resolve(void* library, const char* symbol, Function*& entry, std::string* missing) {
  entry = reinterpret_cast<Function*>(dlsym(library, symbol));
  if (!entry && missing) *missing += str(missing->empty() ? "" : ", ", symbol);
}

// Loads the library at explicit_path, or searches the usual names when it is empty.
std::unique_ptr<Nvrtc> load_nvrtc(const std::string& explicit_path) {
  std::vector<std::string> candidates;
  if (!explicit_path.empty()) {
    candidates.push_back(explicit_path);
  } else {
    const std::vector<std::string> names = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11"};
    for (const std::string& name : names) candidates.push_back(name);
    for (const std::string& name : names) candidates.push_back("/usr/local/cuda/lib64/" + name);
  }
  void* library = nullptr;
  std::string path;
  std::string why;
  for (const std::string& candidate : candidates) {
    library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library) {
      path = candidate;
      break;
    }
    const char* error = dlerror();
    why = error ? error : "unknown dlopen error";
  }
  if (!library && !explicit_path.empty()) {
    throw UserError(str(kNotFound, ": TEMPER_NVRTC=", explicit_path, " cannot be loaded (", why, "); ", kWhatToDo));
  }
  if (!library) {
    throw UserError(str(kNotFound, ": ", kWhatToDo,
                        " (looked for libnvrtc.so, .so.13, .so.12 and .so.11 on the loader's path and in "
                        "/usr/local/cuda/lib64)"));
  }

  auto lib = std::make_unique<Nvrtc>();
  lib->path = path;
  std::string missing;
  resolve(library, "nvrtcVersion", lib->nvrtcVersion, &missing);
  resolve(library, "nvrtcGetErrorString", lib->nvrtcGetErrorString, &missing);
  resolve(library, "nvrtcCreateProgram", lib->nvrtcCreateProgram, &missing);
  resolve(library, "nvrtcDestroyProgram", lib->nvrtcDestroyProgram, &missing);
  resolve(library, "nvrtcCompileProgram", lib->nvrtcCompileProgram, &missing);
  resolve(library, "nvrtcGetProgramLogSize", lib->nvrtcGetProgramLogSize, &missing);
  resolve(library, "nvrtcGetProgramLog", lib->nvrtcGetProgramLog, &missing);
  resolve(library, "nvrtcGetPTXSize", lib->nvrtcGetPTXSize, &missing);
  resolve(library, "nvrtcGetPTX", lib->nvrtcGetPTX, &missing);
  resolve(library, "nvrtcGetNumSupportedArchs", lib->nvrtcGetNumSupportedArchs, nullptr);
  resolve(library, "nvrtcGetSupportedArchs", lib->nvrtcGetSupportedArchs, nullptr);
  if (!missing.empty()) {
    dlclose(library);
    throw UserError(str(path, " is not a usable NVRTC: it lacks ", missing, "; ", kWhatToDo));
  }
  int major = 0;
  int minor = 0;
  lib->nvrtcVersion(&major, &minor);
  lib->version = str(major, ".", minor);
  // Never closed: programs may be compiled on any thread for the life of the process.
  return lib;
}

// The library for the current $TEMPER_NVRTC, loaded on first use. A failure is not
// remembered, so that installing the toolkit or setting the variable takes effect.
const Nvrtc& nvrtc() {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Nvrtc>> loaded;  // by $TEMPER_NVRTC ("" when unset)
  const char* env = std::getenv("TEMPER_NVRTC");
  std::string explicit_path = env ? env : "";
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Nvrtc>& lib = loaded[explicit_path];
  if (!lib) lib = load_nvrtc(explicit_path);
  return *lib;
}

std::string known_architectures(const Nvrtc& lib) {
  int count = 0;
  if (!lib.nvrtcGetNumSupportedArchs || lib.nvrtcGetNumSupportedArchs(&count) != kNvrtcSuccess || count <= 0) {
    return "see `nvcc --list-gpu-arch` for the ones it knows";
  }
  std::vector<int> archs(static_cast<size_t>(count));
  if (lib.nvrtcGetSupportedArchs(archs.data()) != kNvrtcSuccess) return "see `nvcc --list-gpu-arch`";
  std::string list;
  for (int a : archs) list += str(list.empty() ? "" : ", ", "sm_", a);
  return "it knows " + list;
}

// The source lines around the first line NVRTC's log points at ("temper_kernels.cu(12): error"),
// or the first lines of the source when it points at none.
std::string source_context(const std::string& source, const std::string& log) {
  std::vector<std::string> lines;
  std::istringstream in(source);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::smatch match;
  int64_t error_line = 0;
  if (std::regex_search(log, match, std::regex(R"(\((\d+)\): error)"))) error_line = std::stoll(match[1]);
  int64_t first = error_line > 0 ? std::max<int64_t>(1, error_line - 3) : 1;
  int64_t last = std::min<int64_t>(static_cast<int64_t>(lines.size()), error_line > 0 ? error_line + 3 : 12);
  std::string text = error_line > 0 ? str("source around line ", error_line, ":\n") : "start of the source:\n";
  for (int64_t n = first; n <= last; ++n) {
    text += str(n == error_line ? ">" : " ", n, ": ", lines[static_cast<size_t>(n - 1)], "\n");
  }
  return text;
}

std::string trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

}  // namespace

std::string compile_cuda_to_ptx(const std::string& source, const std::string& arch) {
  std::string sm = arch.empty() ? "sm_80" : arch;
  if (!is_cuda_arch(sm)) {
    throw UserError(str("'", arch, "' is not a CUDA architecture: use sm_<major><minor>, e.g. sm_80 or sm_90"));
  }
  const Nvrtc& lib = nvrtc();
  nvrtcProgram program = nullptr;
  if (nvrtcResult r = lib.nvrtcCreateProgram(&program, source.c_str(), kSourceName, 0, nullptr, nullptr);
      r != kNvrtcSuccess) {
    throw UserError(str("NVRTC ", lib.version, " cannot create a program: ", lib.nvrtcGetErrorString(r)));
  }
  struct ProgramGuard {
    const Nvrtc& lib;
    nvrtcProgram& program;
    ~ProgramGuard() { lib.nvrtcDestroyProgram(&program); }
  } guard{lib, program};

  // PTX for the virtual architecture: the driver compiles it for the device it runs on.
  std::string option = "--gpu-architecture=compute_" + sm.substr(3);
  const char* options[] = {option.c_str()};
  nvrtcResult result = lib.nvrtcCompileProgram(program, 1, options);
  size_t log_size = 0;
  lib.nvrtcGetProgramLogSize(program, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) lib.nvrtcGetProgramLog(program, log.data());
  log = trimmed(log.c_str());
  if (result == kNvrtcErrorInvalidOption) {
    throw UserError(str("NVRTC ", lib.version, " does not know the architecture '", sm, "': ", known_architectures(lib),
                        " (", log, ")"));
  }
  if (result == kNvrtcErrorCompilation) {
    throw UserError(str("NVRTC ", lib.version, " cannot compile the generated CUDA source:\n", log, "\n",
                        source_context(source, log)));
  }
  if (result != kNvrtcSuccess) {
    throw UserError(str("NVRTC ", lib.version, " failed: ", lib.nvrtcGetErrorString(result), "\n", log));
  }
  size_t ptx_size = 0;
  lib.nvrtcGetPTXSize(program, &ptx_size);
  std::string ptx(ptx_size, '\0');
  lib.nvrtcGetPTX(program, ptx.data());
  // The size counts the terminating NUL.
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

std::string nvrtc_version() {
  try {
    return "NVRTC " + nvrtc().version;
  } catch (const UserError&) {
    return "";
  }
}

bool nvrtc_available(std::string* why_not) {
  try {
    nvrtc();
    return true;
  } catch (const UserError& e) {
    if (why_not) *why_not = e.what();
    return false;
  }
}

}  // namespace temper
