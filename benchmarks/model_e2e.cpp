// Whole models from ONNX: Temper's GraphExecutor with the template default schedules
// (and, given a tuning log, with the log's best schedules) next to OpenCV's dnn module
// running the same file, in one process. Rounds are interleaved so that a burst of load on
// this shared machine hits every contender alike; prints each one's median latency and
// the ratios to OpenCV, after checking that Temper's outputs agree with OpenCV's.
//
//   model_e2e [--models-dir DIR | --model PATH ...] [--db LOG] [--rounds N] [--warmup N]
//             [--min-round-ms MS] [--target T]
//
// --models-dir DIR runs DIR/resnet.onnx and DIR/encoder.onnx (scripts/make_bench_models.py
// writes them). Both sides run on the same number of threads: the target's -num-cores, or
// one per core. Inputs are random (seeded); every graph input must have a static shape.
// An output whose max abs error exceeds 1e-3 of OpenCV's largest output magnitude fails
// the run: a fast wrong answer is no result.
//
// OpenCV runs on its OpenMP backend unless OPENCV_PARALLEL_BACKEND says otherwise: with
// Debian's default, TBB, its worker threads and Temper's OpenMP threads contend for the
// same cores in one process, and whichever runs next is slowed by up to 100x at random.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/bench_common.h"
#include "compiler/graph/executor.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/ir/error.h"
#include "compiler/runtime/c_runtime_api.h"
#include "search/apply_history_best.h"
#include "tuning_db/sqlite_database.h"

namespace temper::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kMaxRelativeError = 1e-3;

struct Options {
  std::vector<std::string> models;
  std::string db;
  int rounds = 15;
  int warmup = 2;
  double min_round_ms = 100;
  std::string target = "llvm -mcpu=native";
};

struct Contender {
  std::function<void()> run;
  std::vector<double> round_seconds;
};

struct ModelResult {
  std::string name;
  double default_ms = 0;
  double tuned_ms = NAN;  // NAN without --db
  double opencv_ms = 0;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Seconds per call of one round: calls until min_round_ms has passed (at least one).
double time_round(const std::function<void()>& run, double min_round_ms) {
  Clock::time_point start = Clock::now();
  int calls = 0;
  double elapsed = 0;
  do {
    run();
    ++calls;
    elapsed = seconds_since(start);
  } while (elapsed * 1e3 < min_round_ms);
  return elapsed / calls;
}

cv::Mat as_mat(const NDArray& array) {
  std::vector<int> sizes(array.shape().begin(), array.shape().end());
  return cv::Mat(static_cast<int>(sizes.size()), sizes.data(), CV_32F, array.data());
}

// Max abs error of Temper's output against OpenCV's, and that relative to OpenCV's
// largest magnitude (elementwise relative errors blow up on outputs near zero).
struct Agreement {
  double max_abs = 0;
  double relative = 0;
};

Agreement compare_to_opencv(const NDArray& temper, const cv::Mat& opencv, const std::string& model) {
  if (opencv.type() != CV_32F || !opencv.isContinuous() || static_cast<int64_t>(opencv.total()) != temper.size()) {
    throw UserError(str(model, ": OpenCV's output has ", opencv.total(), " elements, Temper's ",
                        shape_to_string(temper.shape()), " has ", temper.size()));
  }
  const float* t = temper.data_as<float>();
  const float* o = opencv.ptr<float>();
  double scale = 0;
  Agreement a;
  for (int64_t i = 0; i < temper.size(); ++i) {
    double diff = std::abs(static_cast<double>(t[i]) - o[i]);
    a.max_abs = std::isnan(diff) ? INFINITY : std::max(a.max_abs, diff);
    scale = std::max(scale, std::abs(static_cast<double>(o[i])));
  }
  a.relative = a.max_abs / std::max(scale, 1e-30);
  return a;
}

ModelResult run_model(const std::string& path, const Options& options, const Target& target, int threads) {
  std::printf("\n%s\n", path.c_str());
  graph::Graph g = graph::import_onnx(path);
  if (g.outputs().size() != 1) {
    throw UserError(str(path, " has ", g.outputs().size(), " outputs; the benchmark compares models of one output"));
  }
  std::map<std::string, NDArray> inputs;
  uint64_t seed = 1;
  for (graph::ValueId v : g.inputs()) {
    const graph::Value& value = g.value(v);
    if (value.type.dtype != DataType::float32()) {
      throw UserError(
          str(path, ": input '", value.name, "' is ", value.type.to_string(), "; the benchmark feeds float32"));
    }
    inputs[value.name] = NDArray::random(value.type.shape, value.type.dtype, seed++);
  }

  Clock::time_point start = Clock::now();
  graph::GraphExecutor temper_default(g, target, graph::ExecutorOptions{});
  std::printf("  temper default: %d kernels, compiled in %.1f s\n", temper_default.num_kernels(), seconds_since(start));
  std::fflush(stdout);  // before ApplyHistoryBest's lines on stderr
  std::unique_ptr<graph::GraphExecutor> temper_tuned;
  if (!options.db.empty()) {
    tuning_db::SQLiteDatabase db(options.db, tuning_db::OpenMode::ReadOnly);
    search::ApplyHistoryBest best(db, &std::cerr);
    graph::ExecutorOptions tuned_options;
    tuned_options.schedules = &best;
    start = Clock::now();
    temper_tuned = std::make_unique<graph::GraphExecutor>(g, target, tuned_options);
    std::printf("  temper tuned:   %d kernels, compiled in %.1f s (log %s)\n", temper_tuned->num_kernels(),
                seconds_since(start), options.db.c_str());
  }

  cv::dnn::Net net = cv::dnn::readNetFromONNX(path);
  net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
  net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
  for (const auto& [name, array] : inputs) net.setInput(as_mat(array), name);
  cv::Mat opencv_out;
  auto run_opencv = [&] { opencv_out = net.forward(); };

  std::vector<Contender> all;
  all.push_back({[&] { temper_default.run(inputs); }, {}});
  if (temper_tuned) all.push_back({[&] { temper_tuned->run(inputs); }, {}});
  all.push_back({run_opencv, {}});

  run_opencv();
  cv::Mat reference = opencv_out.clone();
  std::vector<std::pair<std::string, const graph::GraphExecutor*>> temper_runs = {{"default", &temper_default}};
  if (temper_tuned) temper_runs.push_back({"tuned", temper_tuned.get()});
  for (const auto& [label, exec] : temper_runs) {
    Agreement a = compare_to_opencv(exec->run(inputs).front(), reference, path);
    std::printf("  temper %-7s vs OpenCV: max abs error %.3g, relative to max |output| %.3g\n", label.c_str(),
                a.max_abs, a.relative);
    if (!(a.relative <= kMaxRelativeError)) {
      throw UserError(str(path, ": Temper (", label, ") disagrees with OpenCV: max abs error ", a.max_abs, " is ",
                          a.relative, " of the output's scale, above ", kMaxRelativeError));
    }
  }

  for (int w = 0; w < options.warmup; ++w) {
    for (Contender& k : all) k.run();
  }
  double load = wait_for_idle_cpu();
  for (int r = 0; r < options.rounds; ++r) {
    for (Contender& k : all) k.round_seconds.push_back(time_round(k.run, options.min_round_ms));
  }
  std::printf("  %d rounds, %d threads, load %.2f before\n", options.rounds, threads, load);

  ModelResult result;
  result.name = path.substr(path.find_last_of('/') + 1);
  result.default_ms = median(all.front().round_seconds) * 1e3;
  if (temper_tuned) result.tuned_ms = median(all[1].round_seconds) * 1e3;
  result.opencv_ms = median(all.back().round_seconds) * 1e3;
  return result;
}

void print_table(const std::vector<ModelResult>& results) {
  std::printf("\nmedian latency per inference; ratio = OpenCV ms / Temper ms (>1: Temper is faster)\n");
  std::printf("%-16s %12s %12s %12s %12s %12s\n", "model", "default_ms", "tuned_ms", "opencv_ms", "default/cv",
              "tuned/cv");
  for (const ModelResult& r : results) {
    char tuned_ms[32] = "-", tuned_ratio[32] = "-";
    if (!std::isnan(r.tuned_ms)) {
      std::snprintf(tuned_ms, sizeof tuned_ms, "%.2f", r.tuned_ms);
      std::snprintf(tuned_ratio, sizeof tuned_ratio, "%.3f", r.opencv_ms / r.tuned_ms);
    }
    std::printf("%-16s %12.2f %12s %12.2f %12.3f %12s\n", r.name.c_str(), r.default_ms, tuned_ms, r.opencv_ms,
                r.opencv_ms / r.default_ms, tuned_ratio);
  }
}

const char* kUsage =
    "usage: model_e2e [--models-dir DIR | --model PATH ...] [--db LOG] [--rounds N] [--warmup N] [--min-round-ms MS] "
    "[--target T]";

}  // namespace
}  // namespace temper::bench

int main(int argc, char** argv) {
  using namespace temper;
  bench::Options options;
  std::string models_dir;
  setenv("OPENCV_PARALLEL_BACKEND", "OPENMP", /*overwrite=*/0);
  try {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      bool has_value = i + 1 < argc;
      if (arg == "--model" && has_value) {
        options.models.push_back(argv[++i]);
      } else if (arg == "--models-dir" && has_value) {
        models_dir = argv[++i];
      } else if (arg == "--db" && has_value) {
        options.db = argv[++i];
      } else if (arg == "--rounds" && has_value) {
        options.rounds = std::max(1, std::atoi(argv[++i]));
      } else if (arg == "--warmup" && has_value) {
        options.warmup = std::max(0, std::atoi(argv[++i]));
      } else if (arg == "--min-round-ms" && has_value) {
        options.min_round_ms = std::max(0.0, std::atof(argv[++i]));
      } else if (arg == "--target" && has_value) {
        options.target = argv[++i];
      } else {
        throw UserError(str("unknown argument '", arg, "'; ", bench::kUsage));
      }
    }
    if (!models_dir.empty() && !options.models.empty()) throw UserError("give --models-dir or --model, not both");
    if (!models_dir.empty()) options.models = {models_dir + "/resnet.onnx", models_dir + "/encoder.onnx"};
    if (options.models.empty())
      throw UserError(str("no model: give --models-dir DIR or --model PATH; ", bench::kUsage));

    Target target = Target::parse(options.target);
    int threads = target.num_cores > 0 ? target.num_cores : static_cast<int>(std::thread::hardware_concurrency());
    temper_set_num_threads(threads);
    cv::setNumThreads(threads);
    std::printf(
        "end-to-end latency, fp32, batch 1; Temper target %s, %d threads; OpenCV %s, DNN_BACKEND_OPENCV on "
        "the CPU, %d threads, parallel backend %s\n",
        target.to_string().c_str(), temper_get_num_threads(), CV_VERSION, cv::getNumThreads(),
        std::getenv("OPENCV_PARALLEL_BACKEND"));
    std::vector<bench::ModelResult> results;
    for (const std::string& model : options.models)
      results.push_back(bench::run_model(model, options, target, threads));
    bench::print_table(results);
  } catch (const cv::Exception& e) {
    std::fprintf(stderr, "model_e2e: OpenCV error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "model_e2e: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
