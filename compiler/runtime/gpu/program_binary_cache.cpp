#include "compiler/runtime/gpu/program_binary_cache.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "compiler/ir/error.h"
#include "compiler/runtime/file_io.h"

namespace temper {
namespace {

// First line of every cache file; a new layout changes it, and old files read as misses.
const char* kMagic = "temper-program-binary 1\n";

// Only the first failure is worth a line: the rest would repeat it once per program.
void warn_once(const std::string& message) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true)) warn(message);
}

}  // namespace

std::string temper_cache_dir() {
  if (const char* dir = std::getenv("TEMPER_CACHE_DIR"); dir && *dir) return dir;
  if (const char* dir = std::getenv("XDG_CACHE_HOME"); dir && *dir) return str(dir, "/temper");
  if (const char* home = std::getenv("HOME"); home && *home) return str(home, "/.cache/temper");
  return "";
}

ProgramBinaryCache::ProgramBinaryCache(std::string folder) : folder_(std::move(folder)) {}

std::string ProgramBinaryCache::path_of(const std::string& key) const {
  if (folder_.empty()) return "";
  std::ostringstream name;
  name << std::hex << std::setw(16) << std::setfill('0') << fnv1a(key) << ".bin";
  return (std::filesystem::path(folder_) / name.str()).string();
}

std::optional<std::string> ProgramBinaryCache::load(const std::string& key) const {
  if (folder_.empty()) return std::nullopt;
  std::ifstream in(path_of(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return std::nullopt;
  // kMagic, then "<key bytes> <binary bytes> <binary's fnv1a>" on a line, the key, the binary.
  const std::string file = bytes.str();
  const std::string magic = kMagic;
  if (file.compare(0, magic.size(), magic) != 0) return std::nullopt;
  size_t sizes_end = file.find('\n', magic.size());
  if (sizes_end == std::string::npos) return std::nullopt;
  std::istringstream sizes(file.substr(magic.size(), sizes_end - magic.size()));
  size_t key_size = 0;
  size_t binary_size = 0;
  uint64_t binary_hash = 0;
  if (!(sizes >> key_size >> binary_size >> binary_hash)) return std::nullopt;
  size_t key_begin = sizes_end + 1;
  if (key_size != key.size() || file.size() != key_begin + key_size + binary_size) return std::nullopt;
  if (file.compare(key_begin, key_size, key) != 0) return std::nullopt;
  std::string binary = file.substr(key_begin + key_size);
  // Drivers trust their binaries (PoCL crashes on a damaged one): hand over only what was written.
  if (binary.empty() || fnv1a(binary) != binary_hash) return std::nullopt;
  return binary;
}

void ProgramBinaryCache::store(const std::string& key, const std::string& binary) const {
  if (folder_.empty()) return;
  std::error_code error;
  std::filesystem::create_directories(folder_, error);
  if (error) {
    warn_once(str("cannot create the program cache folder '", folder_, "' (", error.message(),
                  "); programs will be rebuilt each time. Set TEMPER_CACHE_DIR to a writable folder."));
    return;
  }
  try {
    write_file_atomically(path_of(key),
                          str(kMagic, key.size(), " ", binary.size(), " ", fnv1a(binary), "\n", key, binary),
                          "cached program binary");
  } catch (const UserError& e) {
    warn_once(str(e.what(), "; programs will be rebuilt each time. Set TEMPER_CACHE_DIR to a writable folder."));
  }
}

}  // namespace temper
