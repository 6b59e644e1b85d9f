// Tuning logs as JSON lines: one record (record_to_json) per line. The portable form of
// a log, for moving records between machines, merging logs, and reading them with
// ordinary tools.
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>

#include "tuning_db/database.h"

namespace temper::tuning_db {

// Writes every record of db, in commit order; returns how many.
int64_t export_json_lines(const Database& db, std::ostream& out);
// Writes to a file (replacing it); UserError if it cannot be written.
int64_t export_json_lines(const Database& db, const std::string& path);

// Adds the records of `in` to db, all in one commit: a malformed line is a UserError
// naming `source` and the line number, and then nothing is added. Blank lines are
// skipped. Records already in db stay; returns how many were added.
int64_t import_json_lines(Database& db, std::istream& in, const std::string& source);
// Reads a file; UserError if it cannot be read.
int64_t import_json_lines(Database& db, const std::string& path);

}  // namespace temper::tuning_db
