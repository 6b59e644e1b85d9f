#include "compiler/runtime/shared_library_module.h"

#include <dlfcn.h>

#include "compiler/ir/error.h"
#include "compiler/runtime/runtime_symbols.h"

namespace temper {
namespace {

class SharedLibraryModule final : public Module {
 public:
  SharedLibraryModule(std::string path, std::shared_ptr<void> handle)
      : path_(std::move(path)), handle_(std::move(handle)) {}

  PackedFunc get_function(const std::string& name) override {
    dlerror();
    void* symbol = dlsym(handle_.get(), function_symbol(name).c_str());
    if (!symbol) throw UserError(str("the library ", path_, " has no function '", name, "'"));
    return PackedFunc(name, reinterpret_cast<TemperPackedCFunc>(symbol), handle_);
  }

 private:
  std::string path_;
  std::shared_ptr<void> handle_;
};

}  // namespace

// Referring to runtime_symbols() links every runtime function and micro-kernel into any
// program that loads libraries, so that the libraries' references to them resolve.
extern const void* const kRuntimeSymbolsLinked;
const void* const kRuntimeSymbolsLinked = reinterpret_cast<const void*>(&runtime_symbols);

std::unique_ptr<Module> load_shared_library(const std::string& path) {
  // A name without a '/' would send dlopen searching the library path, not this directory.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw UserError(str("cannot load the compiled library ", path, ": ", dlerror()));
  return std::make_unique<SharedLibraryModule>(path, std::shared_ptr<void>(handle, [](void* h) { dlclose(h); }));
}

}  // namespace temper
