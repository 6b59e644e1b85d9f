// Whole-file reads and atomic writes, for the files Temper writes and reads back whole
// (cost models, built models' plans and weights).
#pragma once

#include <cstdint>
#include <string>

namespace temper {

// The file's bytes; UserError "cannot read WHAT 'PATH': ..." when it cannot be read.
std::string read_file(const std::string& path, const std::string& what);
// Writes bytes to a temporary file beside path, then renames it over path, so that a
// reader never sees half a file and a failed write leaves the old file as it was.
// UserError naming what and path when it cannot.
void write_file_atomically(const std::string& path, const std::string& bytes, const std::string& what);

// The 64-bit FNV-1a hash of bytes: what Temper's files record to tell a damaged one.
uint64_t fnv1a(const std::string& bytes);

}  // namespace temper
