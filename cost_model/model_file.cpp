#include "cost_model/model_file.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "compiler/ir/error.h"
#include "compiler/runtime/file_io.h"
#include "cost_model/features.h"
#include "cost_model/random_model.h"
#include "cost_model/xgb_model.h"

namespace temper::cost_model {

namespace {

constexpr const char* kRetrain = "retrain it with `temper model train --db LOG`";

// The checks of load_cost_model after the JSON parsed; nlohmann::json::exception for a
// missing field or one of the wrong type.
std::unique_ptr<CostModel> load_model_json(const std::string& path, const nlohmann::json& file, int num_features) {
  if (!file.is_object() || !file.contains("format") || file["format"] != kModelFileFormat) {
    std::string format = file.is_object() && file.contains("format") ? file["format"].dump() : "none";
    throw UserError(
        str("'", path, "' is not a Temper cost model file (format ", format, ", expected \"", kModelFileFormat, "\")"));
  }
  int version = file.at("version").get<int>();
  if (version != kModelFileVersion) {
    throw UserError(str("cost model file '", path, "' has file version ", version, "; this build reads version ",
                        kModelFileVersion, ": ", kRetrain));
  }
  const int expected_width = num_features > 0 ? num_features : static_cast<int>(feature_names().size());
  int layout = file.at("feature_layout").get<int>();
  int width = file.at("num_features").get<int>();
  if (layout != kFeatureLayoutVersion || width != expected_width) {
    throw UserError(str("cost model file '", path, "' was trained on feature layout ", layout, " with ", width,
                        " features; this build uses feature layout ", kFeatureLayoutVersion, " with ", expected_width,
                        " features: ", kRetrain));
  }
  if (file.contains("feature_names") && expected_width == static_cast<int>(feature_names().size())) {
    auto names = file["feature_names"].get<std::vector<std::string>>();
    for (size_t i = 0; i < feature_names().size(); ++i) {
      if (i >= names.size() || names[i] != feature_names()[i]) {
        throw UserError(str("cost model file '", path, "' names feature ", i, " '",
                            i < names.size() ? names[i] : "(none)", "' where this build's feature layout ",
                            kFeatureLayoutVersion, " has '", feature_names()[i], "': ", kRetrain));
      }
    }
  }

  ModelOptions options;
  options.num_features = width;
  options.objective = file.at("objective").get<std::string>();
  const nlohmann::json& saved = file.at("options");
  options.rounds = saved.at("rounds").get<int>();
  options.max_depth = saved.at("max_depth").get<int>();
  options.learning_rate = saved.at("learning_rate").get<double>();
  options.threads = saved.at("threads").get<int>();
  options.seed = saved.at("seed").get<uint64_t>();
  options = resolve_model_options(options);

  std::string kind = file.at("kind").get<std::string>();
  int64_t num_samples = file.at("num_samples").get<int64_t>();
  if (kind == "random") return std::make_unique<RandomModel>(options, num_samples);
  if (kind != "xgb") {
    throw UserError(str("cost model file '", path, "' holds a model of unknown kind '", kind,
                        "' (this build knows xgb and random)"));
  }
  std::vector<Sample> samples = samples_from_json(file.at("samples"));
  if (static_cast<int64_t>(samples.size()) != num_samples) {
    throw UserError(str("cost model file '", path, "' is damaged: it says ", num_samples, " samples but holds ",
                        samples.size(), "; ", kRetrain));
  }
  std::string booster = file.contains("booster") ? file["booster"].get<std::string>() : "";
  return std::make_unique<XGBModel>(options, std::move(samples), booster, path);
}

}  // namespace

nlohmann::json model_file_header(const std::string& kind, const ModelOptions& options, int64_t num_samples) {
  nlohmann::json file;
  file["format"] = kModelFileFormat;
  file["version"] = kModelFileVersion;
  file["kind"] = kind;
  file["objective"] = options.objective;
  file["feature_layout"] = kFeatureLayoutVersion;
  file["num_features"] = options.num_features;
  if (options.num_features == static_cast<int>(feature_names().size())) file["feature_names"] = feature_names();
  file["options"] = {{"rounds", options.rounds},
                     {"max_depth", options.max_depth},
                     {"learning_rate", options.learning_rate},
                     {"threads", options.threads},
                     {"seed", options.seed}};
  file["num_samples"] = num_samples;
  return file;
}

void write_model_file(const std::string& path, const nlohmann::json& file) {
  // A group name that is not UTF-8 is written with replacement characters, not refused.
  write_file_atomically(path, file.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                        "cost model file");
}

nlohmann::json samples_to_json(const std::vector<Sample>& samples) {
  nlohmann::json list = nlohmann::json::array();
  for (const Sample& s : samples) {
    // JSON has no infinity or NaN; both are failures, and null reads back as +inf.
    nlohmann::json cost = std::isfinite(s.cost) ? nlohmann::json(s.cost) : nlohmann::json(nullptr);
    list.push_back({{"group", s.group}, {"cost", cost}, {"features", s.features}});
  }
  return list;
}

std::vector<Sample> samples_from_json(const nlohmann::json& list) {
  std::vector<Sample> samples;
  samples.reserve(list.size());
  for (const nlohmann::json& entry : list) {
    Sample s;
    s.group = entry.at("group").get<std::string>();
    const nlohmann::json& cost = entry.at("cost");
    s.cost = cost.is_null() ? INFINITY : cost.get<double>();
    s.features = entry.at("features").get<std::vector<float>>();
    samples.push_back(std::move(s));
  }
  return samples;
}

std::unique_ptr<CostModel> load_cost_model(const std::string& path, int num_features) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw UserError(str("no cost model file at '", path, "' (train one with `temper model train --db LOG`)"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(str("cannot read cost model file '", path, "' (is it readable?)"));
  nlohmann::json file;
  try {
    file = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number too large
    throw UserError(str("cost model file '", path, "' is not valid JSON (truncated or damaged?): ", e.what()));
  }
  try {
    return load_model_json(path, file, num_features);
  } catch (const nlohmann::json::exception& e) {
    throw UserError(str("cost model file '", path, "' is damaged: ", e.what(), "; ", kRetrain));
  }
}

}  // namespace temper::cost_model
