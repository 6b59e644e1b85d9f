// Compiled GPU programs kept on disk, so that the same source builds once per device and
// driver rather than once per process (a tuning job loads thousands of candidates, and an
// OpenCL build takes about as long as the run it prepares).
//
// A file is named by a hash of its key (device, driver, build options, source) and holds
// the whole key beside the binary: a lookup compares keys, so a hash collision or a file
// from another version reads as a miss, never as the wrong program. A checksum of the
// binary turns a damaged file into a miss too, since drivers trust the binaries they are
// given (PoCL crashes on a damaged one). Files are written
// whole and renamed into place, so concurrent processes sharing the folder see either no
// file or a complete one. Nothing here throws: a cache that cannot be read or written
// only costs a rebuild.
#pragma once

#include <optional>
#include <string>

namespace temper {

// Temper's cache folder: $TEMPER_CACHE_DIR, else $XDG_CACHE_HOME/temper, else
// ~/.cache/temper; "" when none of these can be told (no HOME).
std::string temper_cache_dir();

class ProgramBinaryCache {
 public:
  // Files go to folder (created on first store); an empty folder disables the cache.
  explicit ProgramBinaryCache(std::string folder);

  // The binary stored under key; nullopt when there is none, or it cannot be read, or the
  // file holds another key.
  std::optional<std::string> load(const std::string& key) const;
  // Stores binary under key; a failure to write is a warning.
  void store(const std::string& key, const std::string& binary) const;
  // The file that holds (or would hold) key's binary; "" when the cache is disabled.
  std::string path_of(const std::string& key) const;

 private:
  std::string folder_;
};

}  // namespace temper
