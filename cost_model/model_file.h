// The saved cost model: one JSON file, written whole or not at all.
//
//   {"format": "temper-cost-model", "version": kModelFileVersion, "kind": "xgb" | "random",
//    "objective": "rank" | "reg", "feature_layout": kFeatureLayoutVersion, "num_features": N,
//    "feature_names": [...],        only for candidate_features() rows (N == feature_names().size())
//    "options": {"rounds", "max_depth", "learning_rate", "threads", "seed"},
//    "num_samples": ...,
//    "samples": [{"group", "cost", "features"}, ...],   xgb only; a failed cost of +inf or NaN is null
//    "booster": "..."}              xgb once fitted: XGBoost's own JSON model text, kept as a
//                                   string so that the loaded booster predicts bit for bit
//                                   what the saved one did
//
// load_cost_model (cost_model.h) reads it back and refuses a file of another format,
// version, feature layout or width.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cost_model/cost_model.h"

namespace temper::cost_model {

inline constexpr const char* kModelFileFormat = "temper-cost-model";

// Every field above but "samples" and "booster".
nlohmann::json model_file_header(const std::string& kind, const ModelOptions& options, int64_t num_samples);

// Writes a temporary file beside `path`, then renames it over `path`. UserError naming
// the path when either step fails.
void write_model_file(const std::string& path, const nlohmann::json& file);

nlohmann::json samples_to_json(const std::vector<Sample>& samples);
// Throws nlohmann::json::exception for a malformed list (load_cost_model reports it).
std::vector<Sample> samples_from_json(const nlohmann::json& samples);

}  // namespace temper::cost_model
