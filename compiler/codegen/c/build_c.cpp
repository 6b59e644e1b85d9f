#include "compiler/codegen/c/build_c.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "compiler/codegen/c/c_runtime_api_text.h"
#include "compiler/codegen/c/codegen_c.h"
#include "compiler/codegen/c/system_compiler.h"
#include "compiler/runtime/shared_library_module.h"

namespace temper {
namespace {

// The compiler flags for target's CPU: -march, and -m<feature> / -mno-<feature> per mattr.
std::string cpu_flags(const Target& target) {
  std::string flags = "-march=" + (target.mcpu.empty() ? std::string("native") : target.mcpu);
  for (const std::string& attr : target.mattrs) {
    flags += (attr[0] == '+' ? " -m" : " -mno-") + attr.substr(1);
  }
  return flags;
}

// A temporary directory, removed with everything in it when this goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "temper-c-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw UserError(str("cannot create a temporary directory like ", pattern));
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace

std::unique_ptr<Module> build_c(const std::vector<PrimFunc>& lowered, const Target& target) {
  if (target.kind != Target::Kind::C) {
    throw UserError(str("build_c compiles for a 'c' target, got '", target.to_string(), "'"));
  }
  std::string source = emit_c(lowered);
  TempDir dir;
  std::filesystem::path c_file = dir.path() / "module.c";
  std::filesystem::path library = dir.path() / "module.so";
  std::ofstream(c_file) << source;
  // Generated code includes compiler/runtime/c_runtime_api.h; the header travels inside Temper.
  std::filesystem::create_directories(dir.path() / "compiler" / "runtime");
  std::ofstream(dir.path() / "compiler" / "runtime" / "c_runtime_api.h") << c_runtime_api_text();
  run_system_compiler(str("-std=gnu11 -O3 ", cpu_flags(target), " -shared -fPIC -I", shell_quote(dir.path().string()),
                          " -o ", shell_quote(library.string()), " ", shell_quote(c_file.string()), " -lm"),
                      "compiling the generated C code");
  // The loaded library stays mapped after its file is removed with the directory.
  return load_shared_library(library.string());
}

}  // namespace temper
