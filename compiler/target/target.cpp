#include "compiler/target/target.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <sstream>

#include "compiler/ir/error.h"

namespace temper {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

}  // namespace

int Target::vector_bits() const {
  for (const std::string& a : mattrs) {
    if (a == "+avx512f") return 512;
  }
  bool no_avx512 = false;
  for (const std::string& a : mattrs) no_avx512 |= a == "-avx512f";
  auto host_bits = [&] {
    if (__builtin_cpu_supports("avx512f") && !no_avx512) return 512;
    if (__builtin_cpu_supports("avx2")) return 256;
    return 128;
  };
  if (mcpu == "native" || (kind == Kind::C && mcpu.empty())) return host_bits();
  static const char* kAvx512[] = {"skylake-avx512", "cascadelake",    "cooperlake", "cannonlake",
                                  "icelake-client", "icelake-server", "tigerlake",  "sapphirerapids",
                                  "emeraldrapids",  "graniterapids",  "znver4",     "znver5"};
  static const char* kAvx2[] = {"haswell",    "broadwell", "skylake", "alderlake", "raptorlake",
                                "meteorlake", "znver1",    "znver2",  "znver3",    "bdver4"};
  for (const char* n : kAvx512) {
    if (mcpu == n && !no_avx512) return 512;
  }
  for (const char* n : kAvx2) {
    if (mcpu == n) return 256;
  }
  for (const std::string& a : mattrs) {
    if (a == "+avx2") return 256;
  }
  return 128;  // the generic x86-64 CPU: SSE2
}

const char* target_kind_name(Target::Kind kind) {
  switch (kind) {
    case Target::Kind::LLVM:
      return "llvm";
    case Target::Kind::C:
      return "c";
    case Target::Kind::CUDA:
      return "cuda";
    case Target::Kind::OpenCL:
      return "opencl";
  }
  return "?";
}

namespace {

// The options each kind takes, with what their values look like.
std::vector<std::pair<std::string, std::string>> options_of(Target::Kind kind) {
  switch (kind) {
    case Target::Kind::LLVM:
    case Target::Kind::C:
      return {{"-mcpu", "<cpu>"}, {"-mattr", "<+feature,-feature>"}, {"-num-cores", "<n>"}};
    case Target::Kind::CUDA:
      return {{"-arch", "<sm_XY>"},
              {"-device", "<n>"},
              {"-max_threads_per_block", "<n>"},
              {"-max_shared_memory_per_block", "<bytes>"}};
    case Target::Kind::OpenCL:
      return {{"-device", "<n>"}, {"-max_threads_per_block", "<n>"}, {"-max_shared_memory_per_block", "<bytes>"}};
  }
  return {};
}

// The integer value of a target option, between min and max.
int64_t parse_count(const std::string& name, const std::string& value, const std::string& text, int64_t min,
                    int64_t max = std::numeric_limits<int32_t>::max()) {
  size_t used = 0;
  int64_t n = 0;
  try {
    n = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || n < min) {
    throw UserError(str(name, " in target '", text, "' must be a ", min > 0 ? "positive" : "non-negative",
                        " integer, got '", value, "'"));
  }
  if (n > max) throw UserError(str(name, " in target '", text, "' must be at most ", max, ", got '", value, "'"));
  return n;
}

// More cores than any machine a target describes has: a typo, not a machine.
constexpr int64_t kMaxCores = 65536;

}  // namespace

bool is_cuda_arch(const std::string& arch) {
  if (arch.size() < 5 || arch.rfind("sm_", 0) != 0) return false;
  for (size_t i = 3; i < arch.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(arch[i])) && !(i + 1 == arch.size() && arch[i] == 'a')) return false;
  }
  return true;
}

Target Target::parse(const std::string& text) {
  std::istringstream in(text);
  std::string kind;
  if (!(in >> kind)) throw UserError("empty target string: use e.g. 'llvm -mcpu=native', 'c', 'cuda' or 'opencl'");
  Target t;
  if (kind == "llvm") {
    t.kind = Kind::LLVM;
  } else if (kind == "c") {
    t.kind = Kind::C;
  } else if (kind == "cuda") {
    t.kind = Kind::CUDA;
  } else if (kind == "opencl") {
    t.kind = Kind::OpenCL;
  } else {
    throw UserError(
        str("unknown target kind '", kind, "' in target '", text, "': expected 'llvm', 'c', 'cuda' or 'opencl'"));
  }
  auto allowed = options_of(t.kind);
  std::vector<std::string> seen;
  std::string option;
  while (in >> option) {
    size_t eq = option.find('=');
    std::string name = option.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : option.substr(eq + 1);
    if (std::none_of(allowed.begin(), allowed.end(), [&](const auto& a) { return a.first == name; })) {
      std::string list;
      for (const auto& [option_name, hint] : allowed) list += (list.empty() ? "" : ", ") + option_name + "=" + hint;
      throw UserError(str("unknown option '", name, "' in target '", text, "': the options of ", kind, " are ", list));
    }
    if (value.empty()) throw UserError(str("option ", name, " in target '", text, "' needs a value: ", name, "=..."));
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      throw UserError(str("option ", name, " is given twice in target '", text, "'"));
    }
    seen.push_back(name);
    if (name == "-mcpu") {
      t.mcpu = value;
    } else if (name == "-mattr") {
      for (const std::string& attr : split(value, ',')) {
        if (attr.size() < 2 || (attr[0] != '+' && attr[0] != '-')) {
          throw UserError(str("bad feature '", attr, "' in -mattr of target '", text,
                              "': write +feature to add one, -feature to remove one"));
        }
        t.mattrs.push_back(attr);
      }
    } else if (name == "-num-cores") {
      t.num_cores = static_cast<int>(parse_count(name, value, text, 1, kMaxCores));
    } else if (name == "-arch") {
      if (!is_cuda_arch(value)) {
        throw UserError(
            str("-arch in target '", text, "' must name a CUDA architecture like sm_80 or sm_90, got '", value, "'"));
      }
      t.arch = value;
    } else if (name == "-device") {
      t.device = static_cast<int>(parse_count(name, value, text, 0));
    } else if (name == "-max_threads_per_block") {
      t.max_threads_per_block = static_cast<int>(parse_count(name, value, text, 1));
    } else {
      t.max_shared_memory_per_block = parse_count(name, value, text, 1, std::numeric_limits<int64_t>::max());
    }
  }
  return t;
}

std::string Target::to_string() const {
  std::string s = target_kind_name(kind);
  if (!mcpu.empty()) s += " -mcpu=" + mcpu;
  if (!mattrs.empty()) {
    s += " -mattr=";
    for (size_t i = 0; i < mattrs.size(); ++i) s += (i ? "," : "") + mattrs[i];
  }
  if (num_cores > 0) s += " -num-cores=" + std::to_string(num_cores);
  if (!arch.empty()) s += " -arch=" + arch;
  if (device > 0) s += " -device=" + std::to_string(device);
  if (max_threads_per_block > 0) s += " -max_threads_per_block=" + std::to_string(max_threads_per_block);
  if (max_shared_memory_per_block > 0) {
    s += " -max_shared_memory_per_block=" + std::to_string(max_shared_memory_per_block);
  }
  return s;
}

}  // namespace temper
