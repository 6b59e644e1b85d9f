#include "compiler/runtime/file_io.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/ir/error.h"

namespace temper {

std::string read_file(const std::string& path, const std::string& what) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw UserError(str("cannot read ", what, " '", path, "': it is a directory"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(str("cannot read ", what, " '", path, "': ", std::strerror(errno)));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw UserError(str("cannot read ", what, " '", path, "': a read failed"));
  return bytes.str();
}

void write_file_atomically(const std::string& path, const std::string& bytes, const std::string& what) {
  const std::string temporary = str(path, ".tmp.", getpid());
  std::error_code error;
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (out) out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::filesystem::remove(temporary, error);
      throw UserError(str("cannot write ", what, " '", path, "': cannot write ", temporary,
                          " (does the directory exist and is it writable?)"));
    }
  }
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::string why = error.message();
    std::filesystem::remove(temporary, error);
    throw UserError(str("cannot write ", what, " '", path, "': ", why));
  }
}

uint64_t fnv1a(const std::string& bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace temper
