// Whole models from ONNX, each timed in one run with interleaved rounds: Temper's
// GraphExecutor with the template default schedules (and, given a tuning log, with the
// log's best schedules), onnxruntime (CPU provider, all graph optimisations, the same
// threads; in a process of its own, benchmarks/onnxruntime_runner.py, under a Python that
// has it) and OpenCV's dnn module on the same file. Rounds are interleaved so that a burst
// of load on this shared machine hits every contender alike (each round starting one
// contender later, once the last one's threads have gone quiet); prints each one's median latency, the ratios temper/onnxruntime (per
// round: the median and quartiles over the rounds), and each one's FLOP rate as a share of
// this machine's fp32 FMA peak (measured here first, fma_peak.h), after checking that Temper's
// outputs agree with onnxruntime's (OpenCV's where onnxruntime is not run).
//
//   model_e2e [--models-dir DIR | --model PATH ...] [--db LOG] [--onnxruntime-python PY]
//             [--rounds N] [--warmup N] [--min-round-ms MS] [--target T] [--dim NAME=N ...]
//
// --models-dir DIR runs the models of scripts/make_bench_models.py found in DIR; --dim sizes
// the models' dynamic dimensions (the batch of make_test_models.py --zoo's). Both sides
// run on the same number of threads: the target's -num-cores, or one per core. Inputs are
// random (seeded), integer inputs are attention masks: ones, with the last eighth of each row
// zero (padding); every graph input must have a static shape or one --dim sizes. Of a model
// with several outputs the first is compared. An output whose max abs
// error exceeds 1e-3 of the reference's largest output magnitude fails the run: a fast
// wrong answer is no result. A model OpenCV cannot run (its importer refuses many
// transformer exports) is timed without it, with one line saying why.
//
// OpenCV runs on its OpenMP backend unless OPENCV_PARALLEL_BACKEND says otherwise: with
// Debian's default, TBB, its worker threads and Temper's OpenMP threads contend for the
// same cores in one process, and whichever runs next is slowed by up to 100x at random.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>
#include <string>
#include <optional>
#include <thread>
#include <unistd.h>
#include <vector>

#include "benchmarks/bench_common.h"
#include "measure/fma_peak.h"
#include "compiler/graph/executor.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/task_extraction.h"
#include "compiler/ir/error.h"
#include "compiler/runtime/c_runtime_api.h"
#include "search/apply_history_best.h"
#include "search/layout_from_log.h"
#include "sweep/onnxruntime_process.h"
#include "sweep/quiet_threads.h"
#include "tuning_db/sqlite_database.h"

namespace temper::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kMaxRelativeError = 1e-3;

struct Options {
  std::vector<std::string> models;
  std::string db;
  std::string onnxruntime_python;  // empty: onnxruntime is not run
  std::string onnxruntime_runner;  // benchmarks/onnxruntime_runner.py
  int rounds = 15;
  int warmup = 2;
  double min_round_ms = 100;
  std::string target = "llvm -mcpu=native";
  std::map<std::string, int64_t> dims;  // --dim NAME=N: the models' dynamic dimensions
};

struct Ratios {
  double median = NAN, low = NAN, high = NAN;  // low, high: the first and third quartiles
};

Ratios per_round_ratios(const std::vector<double>& num, const std::vector<double>& den) {
  std::vector<double> r;
  for (size_t i = 0; i < num.size() && i < den.size(); ++i) r.push_back(num[i] / den[i]);
  if (r.empty()) return {};
  std::sort(r.begin(), r.end());
  auto at = [&](double q) { return r[static_cast<size_t>(q * static_cast<double>(r.size() - 1) + 0.5)]; };
  return {median(r), at(0.25), at(0.75)};
}

struct ModelResult {
  std::string name;
  double gflop = 0;
  double default_ms = 0;
  double tuned_ms = NAN;        // NAN without --db
  double onnxruntime_ms = NAN;  // NAN where it was not run
  double opencv_ms = NAN;       // NAN where OpenCV cannot run the model
  // Temper's time over onnxruntime's within each round, where both met the same load:
  // the median and the quartiles over the rounds (NAN where either was not run).
  Ratios default_vs_ort, tuned_vs_ort;
};

// The model's multiply-adds, counted twice, over its tuning tasks (convolutions, Gemm,
// MatMul): what the other ops add is a rounding error in these models.
double model_gflop(const graph::Graph& g, const Target& target) {
  double flops = 0;
  for (const graph::ExtractedTask& t : graph::extract_tasks(g, target)) flops += t.count * ops::instantiate(t.workload).flops;
  return flops / 1e9;
}

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

// Ones with the last eighth of the last dimension zero: a padded sequence's attention mask.
NDArray attention_mask(const std::vector<int64_t>& shape, DataType dtype) {
  NDArray mask = NDArray::empty(shape, dtype);
  int64_t row = shape.empty() ? 1 : shape.back();
  for (int64_t k = 0; k < mask.size(); ++k) mask.set(k, k % row < row - row / 8 ? 1 : 0);
  return mask;
}

cv::Mat as_mat(const NDArray& array) {
  std::vector<int> sizes(array.shape().begin(), array.shape().end());
  return cv::Mat(static_cast<int>(sizes.size()), sizes.data(), CV_32F, array.data());
}

// Max abs error of Temper's output against the reference's, and that relative to the
// reference's largest magnitude (elementwise relative errors blow up on outputs near zero).
struct Agreement {
  double max_abs = 0;
  double relative = 0;
};

Agreement compare(const NDArray& temper, const float* o, int64_t size, const std::string& reference,
                  const std::string& model) {
  if (size != temper.size()) {
    throw UserError(str(model, ": ", reference, "'s output has ", size, " elements, Temper's ",
                        shape_to_string(temper.shape()), " has ", temper.size()));
  }
  const float* t = temper.data_as<float>();
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
  graph::ImportOptions import_options;
  import_options.dims = options.dims;
  graph::Graph g = graph::import_onnx(path, import_options);
  ModelResult result;
  result.name = std::filesystem::path(path).stem().string();
  result.gflop = model_gflop(g, target);
  std::map<std::string, NDArray> inputs;
  uint64_t seed = 1;
  for (graph::ValueId v : g.inputs()) {
    const graph::Value& value = g.value(v);
    if (value.type.dtype == DataType::float32()) {
      inputs[value.name] = NDArray::random(value.type.shape, value.type.dtype, seed++);
    } else if (value.type.dtype == DataType::int64() || value.type.dtype == DataType::int32()) {
      inputs[value.name] = attention_mask(value.type.shape, value.type.dtype);
    } else {
      throw UserError(str(path, ": input '", value.name, "' is ", value.type.to_string(),
                          "; the benchmark feeds float32 and integer (attention-mask) inputs"));
    }
  }

  Clock::time_point start = Clock::now();
  graph::GraphExecutor temper_default(g, target, graph::ExecutorOptions{});
  std::printf("  temper default: %d kernels, compiled in %.1f s; %.2f GFLOP per run\n", temper_default.num_kernels(),
              seconds_since(start), result.gflop);
  std::fflush(stdout);  // before ApplyHistoryBest's lines on stderr
  std::unique_ptr<graph::GraphExecutor> temper_tuned;
  if (!options.db.empty()) {
    tuning_db::SQLiteDatabase db(options.db, tuning_db::OpenMode::ReadOnly);
    search::LayoutFromLog chosen = search::layout_from_log(g, target, graph::LayoutChoice::Blocked, db);
    if (!chosen.why.empty()) std::printf("  temper tuned:   block %s\n", chosen.why.c_str());
    std::fflush(stdout);
    search::ApplyHistoryBest best(db, &std::cerr);
    graph::ExecutorOptions tuned_options;
    tuned_options.schedules = &best;
    tuned_options.layout = chosen.layout;
    start = Clock::now();
    temper_tuned = std::make_unique<graph::GraphExecutor>(g, target, tuned_options);
    std::printf("  temper tuned:   %d kernels, compiled in %.1f s (log %s)\n", temper_tuned->num_kernels(),
                seconds_since(start), options.db.c_str());
  }

  std::unique_ptr<sweep::OnnxruntimeProcess> onnxruntime;
  std::string work_dir;
  if (!options.onnxruntime_python.empty()) {
    work_dir = (std::filesystem::temp_directory_path() / ("temper-model-e2e-" + std::to_string(getpid()))).string();
    std::filesystem::create_directories(work_dir);
    onnxruntime = std::make_unique<sweep::OnnxruntimeProcess>(options.onnxruntime_python, options.onnxruntime_runner,
                                                             path, threads, inputs, work_dir);
  }

  std::optional<cv::dnn::Net> net;
  cv::Mat opencv_out;
  try {
    net = cv::dnn::readNetFromONNX(path);
    net->setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    net->setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    for (const auto& [name, array] : inputs) net->setInput(as_mat(array), name);
    opencv_out = net->forward().clone();
  } catch (const cv::Exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::printf("  OpenCV cannot run this model, timed without it: %s\n", what.c_str());
    net.reset();
  }

  // The reference: onnxruntime's output, else OpenCV's.
  NDArray reference;
  std::string reference_name;
  if (onnxruntime) {
    reference = onnxruntime->output();
    reference_name = "onnxruntime " + onnxruntime->version();
  } else if (net) {
    if (opencv_out.type() != CV_32F || !opencv_out.isContinuous()) throw UserError(path + ": OpenCV's output is not float32");
    reference = NDArray::empty({static_cast<int64_t>(opencv_out.total())}, DataType::float32());
    std::copy_n(opencv_out.ptr<float>(), opencv_out.total(), reference.data_as<float>());
    reference_name = "OpenCV";
  } else {
    throw UserError(str(path, ": neither onnxruntime (give --onnxruntime-python) nor OpenCV runs it: no reference"));
  }
  std::vector<std::pair<std::string, const graph::GraphExecutor*>> temper_runs = {{"default", &temper_default}};
  if (temper_tuned) temper_runs.push_back({"tuned", temper_tuned.get()});
  for (const auto& [label, exec] : temper_runs) {
    Agreement a = compare(exec->run(inputs).front(), reference.data_as<float>(), reference.size(), reference_name, path);
    std::printf("  temper %-7s vs %s: max abs error %.3g, relative to max |output| %.3g\n", label.c_str(),
                reference_name.c_str(), a.max_abs, a.relative);
    if (!(a.relative <= kMaxRelativeError)) {
      throw UserError(str(path, ": Temper (", label, ") disagrees with ", reference_name, ": max abs error ", a.max_abs,
                          " is ", a.relative, " of the output's scale, above ", kMaxRelativeError));
    }
  }

  // Each contender's round: seconds per call over at least min_round_ms.
  std::vector<std::pair<std::string, std::function<double()>>> contenders;
  contenders.push_back({"default", [&] { return time_round([&] { temper_default.run(inputs); }, options.min_round_ms); }});
  if (temper_tuned) {
    contenders.push_back({"tuned", [&] { return time_round([&] { temper_tuned->run(inputs); }, options.min_round_ms); }});
  }
  if (onnxruntime) contenders.push_back({"onnxruntime", [&] { return onnxruntime->time_round(options.min_round_ms); }});
  if (net) contenders.push_back({"opencv", [&] { return time_round([&] { net->forward(); }, options.min_round_ms); }});
  std::vector<std::vector<double>> round_seconds(contenders.size());
  for (int w = 0; w < options.warmup; ++w) {
    for (auto& [name, round] : contenders) round();
  }
  double load = wait_for_idle_cpu();
  // Each contender's round starts once the last one's threads have gone quiet (onnxruntime's
  // idle workers spin about 50 ms after a run, OpenCV's OpenMP ones a while too: a core taken
  // from whoever runs next). Each round starts one contender later than the last, so that
  // none always runs first (after another's caches) or last.
  std::vector<int> processes = {static_cast<int>(getpid())};
  if (onnxruntime) processes.push_back(static_cast<int>(onnxruntime->pid()));
  double settled_ms = 0;
  for (int r = 0; r < options.rounds; ++r) {
    for (size_t k = 0; k < contenders.size(); ++k) {
      size_t c = (k + static_cast<size_t>(r)) % contenders.size();
      settled_ms += sweep::wait_until_quiet(processes);
      round_seconds[c].push_back(contenders[c].second());
    }
  }
  std::printf("  %d rounds, %d threads, load %.2f before; %.0f ms per round waited for the last contender's threads to "
              "go quiet\n",
              options.rounds, threads, load, settled_ms / static_cast<double>(options.rounds * contenders.size()));
  for (size_t c = 0; c < contenders.size(); ++c) {
    double ms = median(round_seconds[c]) * 1e3;
    const std::string& name = contenders[c].first;
    if (name == "default") result.default_ms = ms;
    if (name == "tuned") result.tuned_ms = ms;
    if (name == "onnxruntime") result.onnxruntime_ms = ms;
    if (name == "opencv") result.opencv_ms = ms;
  }
  auto seconds_of = [&](const std::string& name) -> const std::vector<double>* {
    for (size_t c = 0; c < contenders.size(); ++c) {
      if (contenders[c].first == name) return &round_seconds[c];
    }
    return nullptr;
  };
  if (const std::vector<double>* ort = seconds_of("onnxruntime")) {
    result.default_vs_ort = per_round_ratios(*seconds_of("default"), *ort);
    if (const std::vector<double>* tuned = seconds_of("tuned")) result.tuned_vs_ort = per_round_ratios(*tuned, *ort);
  }
  onnxruntime.reset();
  if (!work_dir.empty()) std::filesystem::remove_all(work_dir);
  return result;
}

std::string cell(double value, const char* format) {
  if (std::isnan(value)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string ratio_cell(const Ratios& r) {
  if (std::isnan(r.median)) return "-";
  char text[48];
  std::snprintf(text, sizeof text, "%.3f (%.2f-%.2f)", r.median, r.low, r.high);
  return text;
}

void print_table(const std::vector<ModelResult>& results, const measure::FmaPeak& peak) {
  std::printf(
      "\nmedian latency per inference (ms); temper/ort = Temper's latency over onnxruntime's in the same round, the "
      "median over the rounds and (the quartiles) (<1: Temper is faster); %%peak = the model's GFLOP per second as a "
      "share of the %.0f GFLOP/s FMA peak measured above\n",
      peak.gflops);
  std::printf("%-14s %7s %9s %9s %9s %9s %19s %19s %8s %9s %8s %7s\n", "model", "GFLOP", "default", "tuned", "ort",
              "opencv", "default/ort", "tuned/ort", "%pk def", "%pk tuned", "%pk ort", "%pk cv");
  auto share = [&](const ModelResult& r, double ms) { return 100 * r.gflop / (ms * 1e-3) / peak.gflops; };
  for (const ModelResult& r : results) {
    std::printf("%-14s %7.2f %9s %9s %9s %9s %19s %19s %8s %9s %8s %7s\n", r.name.c_str(), r.gflop,
                cell(r.default_ms, "%.2f").c_str(), cell(r.tuned_ms, "%.2f").c_str(),
                cell(r.onnxruntime_ms, "%.2f").c_str(), cell(r.opencv_ms, "%.2f").c_str(),
                ratio_cell(r.default_vs_ort).c_str(), ratio_cell(r.tuned_vs_ort).c_str(),
                cell(share(r, r.default_ms), "%.1f").c_str(), cell(share(r, r.tuned_ms), "%.1f").c_str(),
                cell(share(r, r.onnxruntime_ms), "%.1f").c_str(), cell(share(r, r.opencv_ms), "%.1f").c_str());
  }
}

// The models of scripts/make_bench_models.py that DIR holds, in its order.
std::vector<std::string> models_in(const std::string& dir) {
  std::vector<std::string> found;
  for (const char* name : {"resnet18", "mobilenet_v2", "resnet50", "bert_layer", "bert_encoder", "bert_masked"}) {
    std::string path = dir + "/" + name + ".onnx";
    if (std::filesystem::exists(path)) found.push_back(path);
  }
  if (found.empty()) throw UserError(str(dir, " holds none of the benchmark's models; scripts/make_bench_models.py writes them"));
  return found;
}

const char* kUsage =
    "usage: model_e2e [--models-dir DIR | --model PATH ...] [--db LOG] [--onnxruntime-python PY] [--rounds N] [--warmup N] [--min-round-ms MS] "
    "[--target T] [--dim NAME=N ...]";

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
      } else if (arg == "--onnxruntime-python" && has_value) {
        options.onnxruntime_python = argv[++i];
      } else if (arg == "--rounds" && has_value) {
        options.rounds = std::max(1, std::atoi(argv[++i]));
      } else if (arg == "--warmup" && has_value) {
        options.warmup = std::max(0, std::atoi(argv[++i]));
      } else if (arg == "--min-round-ms" && has_value) {
        options.min_round_ms = std::max(0.0, std::atof(argv[++i]));
      } else if (arg == "--target" && has_value) {
        options.target = argv[++i];
      } else if (arg == "--dim" && has_value) {
        std::string binding = argv[++i];
        size_t eq = binding.find('=');
        char* end = nullptr;
        long long size = eq == std::string::npos ? 0 : std::strtoll(binding.c_str() + eq + 1, &end, 10);
        if (eq == std::string::npos || eq == 0 || size <= 0 || *end != '\0') {
          throw UserError(str("--dim ", binding, ": give NAME=N with N a positive integer"));
        }
        options.dims[binding.substr(0, eq)] = size;
      } else {
        throw UserError(str("unknown argument '", arg, "'; ", bench::kUsage));
      }
    }
    if (!models_dir.empty() && !options.models.empty()) throw UserError("give --models-dir or --model, not both");
    if (!models_dir.empty()) options.models = bench::models_in(models_dir);
    if (options.models.empty())
      throw UserError(str("no model: give --models-dir DIR or --model PATH; ", bench::kUsage));

    // The runner script sits beside this program's source; bench.sh runs the build tree's copy.
    options.onnxruntime_runner =
        (std::filesystem::canonical("/proc/self/exe").parent_path() / "onnxruntime_runner.py").string();
    Target target = Target::parse(options.target);
    int threads = target.num_cores > 0 ? target.num_cores : static_cast<int>(std::thread::hardware_concurrency());
    temper_set_num_threads(threads);
    cv::setNumThreads(threads);
    std::printf(
        "end-to-end latency, fp32, batch 1; Temper target %s, %d threads; OpenCV %s, DNN_BACKEND_OPENCV on "
        "the CPU, %d threads, parallel backend %s\n",
        target.to_string().c_str(), temper_get_num_threads(), CV_VERSION, cv::getNumThreads(),
        std::getenv("OPENCV_PARALLEL_BACKEND"));
    bench::wait_for_idle_cpu();
    measure::FmaPeak peak = measure::measure_fma_peak(threads);
    std::printf("fp32 FMA peak on %d threads: %.0f GFLOP/s (%d-bit vectors, independent vfmadd231ps chains)\n", threads,
                peak.gflops, peak.vector_bits);
    std::vector<bench::ModelResult> results;
    for (const std::string& model : options.models)
      results.push_back(bench::run_model(model, options, target, threads));
    bench::print_table(results, peak);
  } catch (const cv::Exception& e) {
    std::fprintf(stderr, "model_e2e: OpenCV error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "model_e2e: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
