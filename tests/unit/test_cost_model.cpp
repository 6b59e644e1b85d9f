// The cost models: an xgb model recovers a planted ranking (both objectives), learns that
// failed candidates are slow, saves and loads to the same predictions and continues
// training seamlessly; bad samples and model files of another format, version, layout
// or width are refused with a message saying what to do; the random model repeats per seed.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "compiler/ir/error.h"
#include "cost_model/cost_model.h"
#include "cost_model/features.h"
#include "cost_model/metrics.h"

namespace temper::cost_model {
namespace {

constexpr int kWidth = 8;

// A known nonlinear cost over [0, 1]^8 (the last three features are noise); each group
// scales it by its own factor, so only the order within a group is shared.
double planted_cost(const std::vector<float>& x, int group) {
  double cost =
      1.0 + 3.0 * x[0] * x[1] + std::sin(3.0 * x[2]) + 4.0 * (x[3] - 0.5) * (x[3] - 0.5) + (x[4] > 0.5 ? 0.7 : 0.0);
  return cost * std::pow(10.0, group - 2);
}

std::vector<Sample> planted_samples(int groups, int rows_per_group, uint64_t seed, int width = kWidth) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<Sample> samples;
  for (int g = 0; g < groups; ++g) {
    for (int r = 0; r < rows_per_group; ++r) {
      Sample s;
      for (int f = 0; f < width; ++f) s.features.push_back(uniform(rng));
      s.cost = planted_cost(s.features, g);
      s.group = "group" + std::to_string(g);
      samples.push_back(std::move(s));
    }
  }
  return samples;
}

std::vector<std::vector<float>> rows_of(const std::vector<Sample>& samples) {
  std::vector<std::vector<float>> rows;
  for (const Sample& s : samples) rows.push_back(s.features);
  return rows;
}

double held_out_accuracy(const CostModel& model, const std::vector<Sample>& held_out) {
  std::vector<double> costs;
  std::vector<std::string> groups;
  for (const Sample& s : held_out) {
    costs.push_back(s.cost);
    groups.push_back(s.group);
  }
  return pairwise_accuracy(model.predict(rows_of(held_out)), costs, groups);
}

ModelOptions small_options(const std::string& objective = "rank") {
  ModelOptions options;
  options.num_features = kWidth;
  options.objective = objective;
  options.threads = 1;
  options.seed = 7;
  return options;
}

// The UserError message of `action`, or a test failure when there is none.
template <typename F>
std::string user_error(F action) {
  try {
    action();
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no UserError";
  return "";
}

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "temper_cost_model_" + name;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

TEST(XGBModel, RankObjectiveRecoversAPlantedRanking) {
  auto model = make_cost_model("xgb", small_options("rank"));
  EXPECT_EQ(model->kind(), "xgb");
  EXPECT_FALSE(model->trained());
  model->update(planted_samples(4, 200, 1));
  EXPECT_TRUE(model->trained());
  EXPECT_EQ(model->num_samples(), 800);
  double accuracy = held_out_accuracy(*model, planted_samples(3, 60, 2));
  EXPECT_GT(accuracy, 0.9);
  std::cout << "rank: held-out pairwise accuracy " << accuracy << "\n";
}

TEST(XGBModel, RegressionObjectiveRecoversAPlantedRanking) {
  auto model = make_cost_model("xgb", small_options("reg"));
  model->update(planted_samples(4, 200, 1));
  double accuracy = held_out_accuracy(*model, planted_samples(3, 60, 2));
  EXPECT_GT(accuracy, 0.85);
  std::cout << "reg: held-out pairwise accuracy " << accuracy << "\n";
}

TEST(XGBModel, LearnsInBatches) {
  // Batches of 8 as a tuner measures them: each update re-fits on everything so far.
  auto model = make_cost_model("xgb", small_options());
  std::vector<Sample> samples = planted_samples(1, 160, 3);
  for (size_t begin = 0; begin < samples.size(); begin += 8) {
    model->update(std::vector<Sample>(samples.begin() + begin, samples.begin() + begin + 8));
  }
  EXPECT_EQ(model->num_samples(), 160);
  EXPECT_GT(held_out_accuracy(*model, planted_samples(1, 100, 4)), 0.85);
}

TEST(XGBModel, PredictsZerosUntilFitted) {
  auto model = make_cost_model("xgb", small_options());
  std::vector<std::vector<float>> rows(3, std::vector<float>(kWidth, 0.5f));
  EXPECT_EQ(model->predict(rows), std::vector<double>(3, 0.0));
  EXPECT_TRUE(model->predict({}).empty());
}

// Candidates with x0 > 0.7 fail, with each kind of failed cost in turn.
std::vector<Sample> samples_with_failures(uint64_t seed) {
  std::vector<Sample> samples = planted_samples(2, 150, seed);
  const double failed_costs[] = {INFINITY, NAN, 0.0, -1.0};
  int next = 0;
  for (Sample& s : samples) {
    if (s.features[0] > 0.7f) s.cost = failed_costs[next++ % 4];
  }
  return samples;
}

TEST(XGBModel, FailedCandidatesRankLast) {
  auto model = make_cost_model("xgb", small_options());
  model->update(samples_with_failures(5));
  std::vector<Sample> held_out = samples_with_failures(6);
  std::vector<double> scores = model->predict(rows_of(held_out));
  // Of the (success, failure) pairs within a group, the share scored the right way round.
  int right = 0;
  int pairs = 0;
  for (size_t i = 0; i < held_out.size(); ++i) {
    for (size_t j = 0; j < held_out.size(); ++j) {
      if (held_out[i].group != held_out[j].group) continue;
      if (is_failed_cost(held_out[i].cost) || !is_failed_cost(held_out[j].cost)) continue;
      right += scores[i] > scores[j] ? 1 : 0;
      ++pairs;
    }
  }
  ASSERT_GT(pairs, 1000);
  EXPECT_GT(static_cast<double>(right) / pairs, 0.95);
  EXPECT_GT(held_out_accuracy(*model, held_out), 0.9);
}

TEST(XGBModel, AllFailedTeachesNothing) {
  auto model = make_cost_model("xgb", small_options());
  std::vector<Sample> failed = planted_samples(2, 10, 8);
  for (Sample& s : failed) s.cost = INFINITY;
  model->update(failed);
  EXPECT_FALSE(model->trained());
  EXPECT_EQ(model->num_samples(), 20);
  EXPECT_EQ(model->predict(rows_of(failed)), std::vector<double>(20, 0.0));
  // A group with a success makes it fit; the all-failed group stays out of the labels.
  model->update(planted_samples(1, 30, 9));
  EXPECT_TRUE(model->trained());
  EXPECT_EQ(model->num_samples(), 50);
}

TEST(XGBModel, BadSamplesAreRefused) {
  auto model = make_cost_model("xgb", small_options());
  std::vector<Sample> samples = planted_samples(1, 4, 10);
  samples[2].features.pop_back();
  std::string message = user_error([&] { model->update(samples); });
  EXPECT_NE(message.find("sample 2"), std::string::npos) << message;
  EXPECT_NE(message.find("has 7 features; the model expects 8"), std::string::npos) << message;
  EXPECT_EQ(model->num_samples(), 0);

  for (float bad : {NAN, INFINITY, -INFINITY}) {
    samples = planted_samples(1, 4, 10);
    samples[1].features[5] = bad;
    message = user_error([&] { model->update(samples); });
    EXPECT_NE(message.find("non-finite feature"), std::string::npos) << message;
    EXPECT_NE(message.find("index 5"), std::string::npos) << message;
  }
  message = user_error([&] { model->predict({std::vector<float>(9, 0.0f)}); });
  EXPECT_NE(message.find("row 0 has 9 features; the model expects 8"), std::string::npos) << message;
}

TEST(XGBModel, PredictsOnSeveralThreadsAtOnce) {
  auto model = make_cost_model("xgb", small_options());
  model->update(planted_samples(2, 100, 11));
  std::vector<std::vector<float>> rows = rows_of(planted_samples(1, 64, 12));
  std::vector<double> expected = model->predict(rows);
  std::vector<std::vector<double>> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int repeat = 0; repeat < 20; ++repeat) got[t] = model->predict(rows);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& scores : got) EXPECT_EQ(scores, expected);
}

TEST(ModelFile, SaveAndLoadGiveTheSamePredictions) {
  auto model = make_cost_model("xgb", small_options());
  model->update(planted_samples(3, 80, 13));
  std::vector<std::vector<float>> rows = rows_of(planted_samples(2, 50, 14));
  std::string path = temp_path("saved.json");
  model->save(path);

  auto loaded = load_cost_model(path, kWidth);
  EXPECT_EQ(loaded->kind(), "xgb");
  EXPECT_TRUE(loaded->trained());
  EXPECT_EQ(loaded->num_samples(), 240);
  EXPECT_EQ(loaded->predict(rows), model->predict(rows));  // bit for bit

  // The file keeps the samples, so training goes on as if the model had never been saved.
  std::vector<Sample> more = planted_samples(3, 16, 15);
  model->update(more);
  loaded->update(more);
  EXPECT_EQ(loaded->num_samples(), 288);
  EXPECT_EQ(loaded->predict(rows), model->predict(rows));

  nlohmann::json file = read_json(path);
  EXPECT_EQ(file["format"], "temper-cost-model");
  EXPECT_EQ(file["version"], kModelFileVersion);
  EXPECT_EQ(file["kind"], "xgb");
  EXPECT_EQ(file["objective"], "rank");
  EXPECT_EQ(file["feature_layout"], kFeatureLayoutVersion);
  EXPECT_EQ(file["num_features"], kWidth);
  EXPECT_FALSE(file.contains("feature_names"));  // hand-made rows, not candidate_features()
  EXPECT_EQ(file["options"]["rounds"], 100);
  EXPECT_EQ(file["options"]["seed"], 7);
  EXPECT_TRUE(file["booster"].is_string());
}

TEST(ModelFile, UntrainedAndRandomModelsRoundTrip) {
  auto untrained = make_cost_model("xgb", small_options("reg"));
  std::vector<Sample> failed = planted_samples(1, 5, 16);
  for (Sample& s : failed) s.cost = INFINITY;  // saved as null, read back as failures
  untrained->update(failed);
  std::string path = temp_path("untrained.json");
  untrained->save(path);
  EXPECT_FALSE(read_json(path).contains("booster"));
  auto loaded = load_cost_model(path, kWidth);
  EXPECT_FALSE(loaded->trained());
  EXPECT_EQ(loaded->num_samples(), 5);
  loaded->update(planted_samples(1, 20, 17));
  EXPECT_TRUE(loaded->trained());

  auto random = make_cost_model("random", small_options());
  random->update(planted_samples(1, 3, 18));
  path = temp_path("random.json");
  random->save(path);
  auto random_loaded = load_cost_model(path, kWidth);
  EXPECT_EQ(random_loaded->kind(), "random");
  EXPECT_EQ(random_loaded->num_samples(), 3);
  // A loaded random model starts its generator afresh from the saved seed.
  auto fresh = make_cost_model("random", small_options());
  std::vector<std::vector<float>> rows(5, std::vector<float>(kWidth, 0.0f));
  EXPECT_EQ(random_loaded->predict(rows), fresh->predict(rows));
}

// A saved trained model's file, edited by `edit`, then loaded at `width`.
std::string load_error_after(const std::function<void(nlohmann::json&)>& edit, int width = kWidth) {
  static const std::string original = [] {
    auto model = make_cost_model("xgb", small_options());
    model->update(planted_samples(1, 20, 19));
    std::string path = temp_path("original.json");
    model->save(path);
    return path;
  }();
  nlohmann::json file = read_json(original);
  edit(file);
  std::string path = temp_path("edited.json");
  write_text(path, file.dump());
  return user_error([&] { load_cost_model(path, width); });
}

TEST(ModelFile, MismatchedFilesAreRefused) {
  const std::string retrain = "retrain it with `temper model train --db LOG`";
  std::string message = load_error_after([](nlohmann::json& f) { f["feature_layout"] = 999; });
  EXPECT_NE(message.find("trained on feature layout 999 with 8 features"), std::string::npos) << message;
  EXPECT_NE(message.find(str("this build uses feature layout ", kFeatureLayoutVersion, " with 8 features")),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(retrain), std::string::npos) << message;

  message = load_error_after([](nlohmann::json&) {}, 9);
  EXPECT_NE(message.find("with 8 features; this build uses feature layout"), std::string::npos) << message;
  EXPECT_NE(message.find("with 9 features"), std::string::npos) << message;
  EXPECT_NE(message.find(retrain), std::string::npos) << message;

  message = load_error_after([](nlohmann::json& f) { f["version"] = 2; });
  EXPECT_NE(message.find("has file version 2; this build reads version 1"), std::string::npos) << message;
  EXPECT_NE(message.find(retrain), std::string::npos) << message;

  message = load_error_after([](nlohmann::json& f) { f["format"] = "temper-tuning-log"; });
  EXPECT_NE(message.find("is not a Temper cost model file (format \"temper-tuning-log\""), std::string::npos)
      << message;
  message = load_error_after([](nlohmann::json& f) { f = nlohmann::json::array({1, 2}); });
  EXPECT_NE(message.find("is not a Temper cost model file (format none"), std::string::npos) << message;

  message = load_error_after([](nlohmann::json& f) { f["kind"] = "lightgbm"; });
  EXPECT_NE(message.find("unknown kind 'lightgbm' (this build knows xgb and random)"), std::string::npos) << message;

  message = load_error_after([](nlohmann::json& f) { f.erase("options"); });
  EXPECT_NE(message.find("is damaged"), std::string::npos) << message;
  EXPECT_NE(message.find(retrain), std::string::npos) << message;

  message = load_error_after([](nlohmann::json& f) { f["samples"].erase(0); });
  EXPECT_NE(message.find("says 20 samples but holds 19"), std::string::npos) << message;

  message = load_error_after([](nlohmann::json& f) { f["booster"] = "{\"learner\": 3}"; });
  EXPECT_NE(message.find("holds a booster XGBoost cannot load"), std::string::npos) << message;
}

TEST(ModelFile, RenamedCandidateFeaturesAreRefused) {
  // A model on candidate_features() rows records their names; a file whose names differ
  // comes from another layout even if its version number says otherwise.
  const int width = static_cast<int>(feature_names().size());
  ModelOptions options;
  options.rounds = 5;
  auto model = make_cost_model("xgb", options);
  model->update(planted_samples(1, 20, 20, width));
  std::string path = temp_path("candidate.json");
  model->save(path);
  nlohmann::json file = read_json(path);
  ASSERT_EQ(file["feature_names"], feature_names());
  EXPECT_TRUE(load_cost_model(path)->trained());

  file["feature_names"][3] = "bogus";
  write_text(path, file.dump());
  std::string message = user_error([&] { load_cost_model(path); });
  EXPECT_NE(message.find("names feature 3 'bogus' where this build's feature layout"), std::string::npos) << message;
  EXPECT_NE(message.find(feature_names()[3]), std::string::npos) << message;
}

TEST(ModelFile, UnreadableFilesAreRefused) {
  std::string message = user_error([] { load_cost_model("/nonexistent/model.json"); });
  EXPECT_NE(message.find("no cost model file at '/nonexistent/model.json'"), std::string::npos) << message;

  auto model = make_cost_model("xgb", small_options());
  model->update(planted_samples(1, 20, 21));
  std::string path = temp_path("truncated.json");
  model->save(path);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_text(path, text.substr(0, text.size() / 2));
  message = user_error([&] { load_cost_model(path, kWidth); });
  EXPECT_NE(message.find("is not valid JSON (truncated or damaged?)"), std::string::npos) << message;

  write_text(path, "hello, I am not a model\n");
  message = user_error([&] { load_cost_model(path, kWidth); });
  EXPECT_NE(message.find("is not valid JSON"), std::string::npos) << message;

  message = user_error([&] { model->save("/nonexistent/dir/model.json"); });
  EXPECT_NE(message.find("cannot write cost model file '/nonexistent/dir/model.json'"), std::string::npos) << message;
}

TEST(RandomModel, RepeatsPerSeed) {
  ModelOptions a = small_options();
  ModelOptions b = small_options();
  b.seed = 8;
  auto first = make_cost_model("random", a);
  auto again = make_cost_model("random", a);
  auto other = make_cost_model("random", b);
  std::vector<std::vector<float>> rows(16, std::vector<float>(kWidth, 0.0f));
  std::vector<double> scores = first->predict(rows);
  EXPECT_EQ(scores, again->predict(rows));
  EXPECT_NE(scores, other->predict(rows));
  EXPECT_NE(scores, first->predict(rows));  // the generator moves on
  for (double s : scores) {
    EXPECT_GE(s, 0.0);
    EXPECT_LT(s, 1.0);
  }
  EXPECT_TRUE(first->trained());
  first->update(planted_samples(1, 6, 22));
  EXPECT_EQ(first->num_samples(), 6);
  std::string message = user_error([&] { first->update({Sample{{1.0f}, 1.0, "g"}}); });
  EXPECT_NE(message.find("the model expects 8"), std::string::npos) << message;
}

TEST(MakeCostModel, BadKindsAndOptionsAreRefused) {
  std::string message = user_error([] { make_cost_model("bogus"); });
  EXPECT_NE(message.find("unknown cost model 'bogus': use xgb or random"), std::string::npos) << message;
  ModelOptions options;
  options.objective = "lambdamart";
  message = user_error([&] { make_cost_model("xgb", options); });
  EXPECT_NE(message.find("objective 'lambdamart': use rank"), std::string::npos) << message;
  options = {};
  options.rounds = 0;
  message = user_error([&] { make_cost_model("xgb", options); });
  EXPECT_NE(message.find("rounds must be at least 1"), std::string::npos) << message;
  EXPECT_EQ(resolve_model_options({}).num_features, static_cast<int>(feature_names().size()));
}

TEST(XGBModel, RefitTimeAtTuningSize) {
  // Informational: the time one re-fit takes on 500 candidate-width rows (a tuning job
  // after ~60 batches), on one thread. Noisy on a shared machine; bounded only loosely.
  const int width = static_cast<int>(feature_names().size());
  ModelOptions options;
  options.threads = 1;
  auto model = make_cost_model("xgb", options);
  std::vector<Sample> samples = planted_samples(1, 492, 23, width);
  model->update(samples);
  auto start = std::chrono::steady_clock::now();
  model->update(planted_samples(1, 8, 24, width));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "refit on 500 x " << width << " rows, " << options.rounds << " rounds: " << seconds << " s\n";
  EXPECT_TRUE(model->trained());
  EXPECT_LT(seconds, 10.0);
}

}  // namespace
}  // namespace temper::cost_model
