// Tuning logs as JSON lines: one record (record_to_json) per line, then one line
// {"model_choice": {...}} per schedule chosen in a model (model_choice_to_json). The
// portable form of a log, for moving records between machines, merging logs, and reading
// them with ordinary tools.
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>

#include "tuning_db/database.h"

namespace temper::tuning_db {

// How many lines of each kind an export wrote or an import read.
struct JsonLinesCount {
  int64_t records = 0;
  int64_t model_choices = 0;
};

// Writes every record of db, then every model choice, in commit order.
JsonLinesCount export_json_lines(const Database& db, std::ostream& out);
// Writes to a file (replacing it); UserError if it cannot be written.
JsonLinesCount export_json_lines(const Database& db, const std::string& path);

// Adds the records and model choices of `in` to db, each kind in one commit: a malformed
// line is a UserError naming `source` and the line number, and then nothing is added.
// Blank lines are skipped. What db holds already stays.
JsonLinesCount import_json_lines(Database& db, std::istream& in, const std::string& source);
// Reads a file; UserError if it cannot be read.
JsonLinesCount import_json_lines(Database& db, const std::string& path);

}  // namespace temper::tuning_db
