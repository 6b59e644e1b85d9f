#include "compiler/target/target.h"

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
  static const char* kAvx512[] = {"skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake-client",
                                  "icelake-server", "tigerlake", "sapphirerapids", "emeraldrapids",
                                  "graniterapids", "znver4", "znver5"};
  static const char* kAvx2[] = {"haswell", "broadwell", "skylake", "alderlake", "raptorlake", "meteorlake",
                                "znver1", "znver2", "znver3", "bdver4"};
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
  }
  return "?";
}

Target Target::parse(const std::string& text) {
  std::istringstream in(text);
  std::string kind;
  if (!(in >> kind)) throw UserError("empty target string: use e.g. 'llvm -mcpu=native' or 'c'");
  Target t;
  if (kind == "llvm") {
    t.kind = Kind::LLVM;
  } else if (kind == "c") {
    t.kind = Kind::C;
  } else {
    throw UserError(str("unknown target kind '", kind, "' in target '", text, "': expected 'llvm' or 'c'"));
  }
  std::vector<std::string> seen;
  std::string option;
  while (in >> option) {
    size_t eq = option.find('=');
    std::string name = option.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : option.substr(eq + 1);
    if (name != "-mcpu" && name != "-mattr" && name != "-num-cores") {
      throw UserError(str("unknown option '", name, "' in target '", text,
                          "': the options are -mcpu=<cpu>, -mattr=<+feature,-feature>, -num-cores=<n>"));
    }
    if (value.empty()) throw UserError(str("option ", name, " in target '", text, "' needs a value: ", name, "=..."));
    for (const std::string& s : seen) {
      if (s == name) throw UserError(str("option ", name, " is given twice in target '", text, "'"));
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
    } else {
      size_t used = 0;
      int n = 0;
      try {
        n = std::stoi(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != value.size() || n <= 0) {
        throw UserError(str("-num-cores in target '", text, "' must be a positive integer, got '", value, "'"));
      }
      t.num_cores = n;
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
  return s;
}

}  // namespace temper
