// Tuning records as JSON lines (`temper db import`), into a log in memory, then checked as
// import checks them (tuning_db/record_check.h).
#include <sstream>

#include "fuzz/fuzz_harness.h"
#include "tuning_db/json_lines.h"
#include "tuning_db/memory_database.h"
#include "tuning_db/record_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  temper::tuning_db::MemoryDatabase db;
  std::istringstream in(temper::fuzz::as_string(data, size));
  temper::fuzz::refusal_is_fine([&] { temper::tuning_db::import_json_lines(db, in, "fuzz.jsonl"); });
  for (const temper::tuning_db::TuningRecord& record : db.all_records()) temper::tuning_db::implausible_record(record);
  return 0;
}
