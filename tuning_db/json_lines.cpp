#include "tuning_db/json_lines.h"

#include <fstream>

#include "compiler/ir/error.h"

namespace temper::tuning_db {

namespace {
constexpr const char* kModelChoiceKey = "model_choice";
}  // namespace

JsonLinesCount export_json_lines(const Database& db, std::ostream& out) {
  JsonLinesCount count;
  for (const TuningRecord& record : db.all_records()) {
    out << record_to_json(record).dump() << '\n';
    ++count.records;
  }
  for (const ModelChoice& choice : db.model_choices()) {
    out << nlohmann::json{{kModelChoiceKey, model_choice_to_json(choice)}}.dump() << '\n';
    ++count.model_choices;
  }
  return count;
}

JsonLinesCount export_json_lines(const Database& db, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw UserError(str("cannot write ", path, "; check that its folder exists and is writable"));
  JsonLinesCount count = export_json_lines(db, out);
  out.close();
  if (!out) throw UserError(str("writing ", path, " failed (disk full?)"));
  return count;
}

JsonLinesCount import_json_lines(Database& db, std::istream& in, const std::string& source) {
  std::vector<TuningRecord> records;
  std::vector<ModelChoice> choices;
  std::string line;
  for (int64_t line_number = 1; std::getline(in, line); ++line_number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      nlohmann::json json = nlohmann::json::parse(line);
      if (json.is_object() && json.contains(kModelChoiceKey)) {
        choices.push_back(model_choice_from_json(json.at(kModelChoiceKey)));
      } else {
        records.push_back(record_from_json(json));
      }
    } catch (const nlohmann::json::exception& e) {
      throw UserError(str(source, ":", line_number, ": not valid JSON (", e.what(), "); nothing was imported"));
    } catch (const UserError& e) {
      throw UserError(str(source, ":", line_number, ": ", e.what(), "; nothing was imported"));
    }
  }
  db.commit_records(records);
  db.commit_model_choices(choices);
  return {static_cast<int64_t>(records.size()), static_cast<int64_t>(choices.size())};
}

JsonLinesCount import_json_lines(Database& db, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UserError(str("cannot read tuning records from ", path, "; check the path"));
  return import_json_lines(db, in, path);
}

}  // namespace temper::tuning_db
