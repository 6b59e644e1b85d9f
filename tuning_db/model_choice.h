// A schedule chosen inside a model (search/confirm_in_model.h). The measurer times each
// candidate alone, with its inputs and weights as it leaves them; a model runs the same
// kernel between its real neighbours, whose outputs it reads from the other core's cache
// and whose weights may evict its own, and there the ranking can change. After `temper
// tune MODEL`, each task's best few schedules of the log and its template default run in
// builds of the model, and the one whose kernels ran fastest there is kept here, beside
// the records; a build applies it instead of the log's best while the log holds no newer
// record of the workload on that machine.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tuning_db/record.h"

namespace temper::tuning_db {

struct ModelChoice {
  WorkloadKey workload;
  TargetInfo target;      // the fingerprint of the machine it was timed on
  std::string model;      // the model's file name, as `tune` was given it
  nlohmann::json trace;   // the schedule's trace (schedule/trace.h JSON)
  nlohmann::json config;  // its knob config; null for a trace-only schedule
  std::string picked;     // which candidate it is: "log rank 2", "template default"
  // The workload's kernels' median time in one run of the model, this schedule's and the
  // log's best record's, in seconds, measured in the same interleaved rounds.
  double model_seconds = 0;
  double log_best_seconds = 0;
  int64_t timestamp = 0;  // seconds since the Unix epoch
  std::string temper_version;

  bool operator==(const ModelChoice&) const = default;
};

// One choice as a JSON object, and back (record.cpp, beside a record's conversion);
// from_json throws UserError naming the missing or mistyped field.
nlohmann::json model_choice_to_json(const ModelChoice& choice);
ModelChoice model_choice_from_json(const nlohmann::json& json);

}  // namespace temper::tuning_db
