#include "cost_model/xgb_model.h"

#include <xgboost/c_api.h>

#include "compiler/ir/error.h"
#include "cost_model/model_file.h"
#include "cost_model/training_set.h"

namespace temper::cost_model {

namespace {

// Every XGBoost call returns 0 on success; anything else is a Temper bug (the inputs were
// validated before the call), reported with XGBoost's own message.
void check_xgb(int status, const char* call) {
  TEMPER_CHECK(status == 0, "XGBoost ", call, " failed: ", XGBGetLastError());
}

struct MatrixFree {
  void operator()(void* matrix) const { XGDMatrixFree(matrix); }
};
using Matrix = std::unique_ptr<void, MatrixFree>;

Matrix dense_matrix(const std::vector<float>& row_major, int64_t rows, int width, int threads) {
  DMatrixHandle handle = nullptr;
  check_xgb(XGDMatrixCreateFromMat_omp(row_major.data(), static_cast<bst_ulong>(rows), static_cast<bst_ulong>(width),
                                       NAN, &handle, threads),
            "XGDMatrixCreateFromMat_omp");
  return Matrix(handle);
}

// Plain prediction (no margin transform needed: both objectives predict their raw
// score), every tree, one number per row.
constexpr const char* kPredictConfig =
    R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false})";

}  // namespace

void XGBModel::BoosterFree::operator()(void* booster) const {
  XGBoosterFree(booster);
}

XGBModel::XGBModel(const ModelOptions& options) : options_(options) {}

XGBModel::XGBModel(const ModelOptions& options, std::vector<Sample> samples, const std::string& booster_json,
                   const std::string& source)
    : options_(options), samples_(std::move(samples)) {
  check_samples(samples_, options_.num_features);
  if (booster_json.empty()) return;
  Booster booster = new_booster(nullptr, 0);
  if (XGBoosterLoadModelFromBuffer(booster.get(), booster_json.data(), booster_json.size()) != 0) {
    throw UserError(str("cost model file '", source, "' holds a booster XGBoost cannot load (", XGBGetLastError(),
                        "); retrain it with `temper model train --db LOG`"));
  }
  booster_ = std::move(booster);
}

XGBModel::Booster XGBModel::new_booster(void* const* train_matrices, int count) const {
  BoosterHandle handle = nullptr;
  check_xgb(XGBoosterCreate(train_matrices, static_cast<bst_ulong>(count), &handle), "XGBoosterCreate");
  Booster booster(handle);
  auto set = [&](const char* name, const std::string& value) {
    check_xgb(XGBoosterSetParam(handle, name, value.c_str()), "XGBoosterSetParam");
  };
  set("objective", options_.objective == "rank" ? "rank:pairwise" : "reg:squarederror");
  set("max_depth", std::to_string(options_.max_depth));
  set("eta", str(options_.learning_rate));
  set("nthread", std::to_string(options_.threads));
  set("seed", std::to_string(options_.seed));
  set("verbosity", "0");
  // Histogram splits over 32 bins: a fit's time goes mostly into building histograms
  // (bins x features x tree nodes), and with a few hundred rows, on features that are
  // log-scaled counts with few distinct values, more bins buy nothing. At 500 x 125
  // rows, 100 rank rounds on one thread take ~0.35 s CPU; 256 bins are several times
  // slower and exact splits about twice as slow.
  set("tree_method", "hist");
  set("max_bin", "32");
  // A leaf needs a few rows' worth of hessian (a pairwise row weighs at most 0.5): with 0,
  // as in AutoTVM, rank trees grow to full depth on single rows, fit 1.5x slower and
  // rank held-out rows no better. The small gamma keeps splits that gain nothing out.
  set("min_child_weight", "1");
  set("gamma", "0.0001");
  return booster;
}

void XGBModel::update(const std::vector<Sample>& samples) {
  if (samples.empty()) return;
  check_samples(samples, options_.num_features);
  samples_.insert(samples_.end(), samples.begin(), samples.end());
  fit();
}

void XGBModel::fit() {
  TrainingSet set = make_training_set(samples_, options_.num_features);
  if (set.num_rows() == 0) return;  // no group has a success yet: stay unfitted
  Matrix train = dense_matrix(set.features, set.num_rows(), options_.num_features, options_.threads);
  check_xgb(XGDMatrixSetFloatInfo(train.get(), "label", set.labels.data(), set.labels.size()),
            "XGDMatrixSetFloatInfo(label)");
  if (options_.objective == "rank") {
    check_xgb(XGDMatrixSetUIntInfo(train.get(), "group", set.group_sizes.data(), set.group_sizes.size()),
              "XGDMatrixSetUIntInfo(group)");
  }
  void* matrices[] = {train.get()};
  Booster booster = new_booster(matrices, 1);
  for (int round = 0; round < options_.rounds; ++round) {
    check_xgb(XGBoosterUpdateOneIter(booster.get(), round, train.get()), "XGBoosterUpdateOneIter");
  }
  booster_ = std::move(booster);
}

std::vector<double> XGBModel::predict(const std::vector<std::vector<float>>& rows) const {
  check_rows(rows, options_.num_features);
  if (!booster_ || rows.empty()) return std::vector<double>(rows.size(), 0.0);
  std::vector<float> row_major;
  row_major.reserve(rows.size() * options_.num_features);
  for (const auto& row : rows) row_major.insert(row_major.end(), row.begin(), row.end());
  Matrix matrix = dense_matrix(row_major, static_cast<int64_t>(rows.size()), options_.num_features, options_.threads);
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* scores = nullptr;
  check_xgb(XGBoosterPredictFromDMatrix(booster_.get(), matrix.get(), kPredictConfig, &shape, &dims, &scores),
            "XGBoosterPredictFromDMatrix");
  TEMPER_CHECK(dims == 1 && shape[0] == rows.size(), "XGBoost predicted ", dims, " dimensions for ", rows.size(),
               " rows");
  return std::vector<double>(scores, scores + rows.size());
}

void XGBModel::save(const std::string& path) const {
  nlohmann::json file = model_file_header(kind(), options_, num_samples());
  file["samples"] = samples_to_json(samples_);
  if (booster_) {
    const char* text = nullptr;
    bst_ulong length = 0;
    check_xgb(XGBoosterSaveModelToBuffer(booster_.get(), R"({"format": "json"})", &length, &text),
              "XGBoosterSaveModelToBuffer");
    file["booster"] = std::string(text, length);
  }
  write_model_file(path, file);
}

}  // namespace temper::cost_model
