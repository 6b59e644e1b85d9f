// fp32 convolutions on all cores, layer by layer: Temper's template default config (and,
// with --db, the tuning log's best; with --tune, the fastest config of a quick scan of its
// space) next to oneDNN's convolution primitive on the same plain NCHW data, and on the
// blocked layouts oneDNN prefers (data and weights reordered once, outside the timing:
// its best case, as a framework that keeps activations blocked runs it). Temper's kernels
// are timed as a model build runs them: a config that packs the weight (conv2d's NCHWc
// blocks) reads it packed once, outside the timing; a blocked workload (conv2d_nchwc or
// conv2d_winograd_nchwc, its weight transformed outside the timing; the
// kernels of a model in the blocked layout) runs on blocked data, converted outside the
// timing as oneDNN's is. The layers: the 3x3 layers of ResNet-18 by default, or every
// conv task of the models given (--model, each layer once with how often the model runs
// it). Rounds are interleaved so
// that a burst of load on this shared machine hits every contender alike; prints GFLOP/s
// (median over rounds) and the ratios to both oneDNN variants (vs_onednn: blocked), then
// one summary line per layer.
//
//   conv_templates [--rounds N] [--db LOG] [--tune N] [--workloads w1;w2;...] [--model M.onnx ...]
//
// --tune N times the default config's neighbours and N sampled configs once each and
// adds the fastest to the rounds. Every Temper kernel, and oneDNN, is checked against the
// reference implementation before its time counts.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "benchmarks/baselines.h"
#include "benchmarks/bench_common.h"
#include "compiler/codegen/build.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/graph/task_extraction.h"
#include "compiler/ops/nchwc.h"
#include "compiler/ops/op_data.h"
#include "compiler/ops/winograd.h"
#include "compiler/runtime/c_runtime_api.h"
#include "compiler/runtime/timer.h"
#include "schedule_space/template.h"
#include "search/apply_history_best.h"
#include "tuning_db/sqlite_database.h"

namespace temper::bench {
namespace {

using schedule_space::Config;
using schedule_space::Task;

const char* kResnet18Convs[] = {
    "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1",
    "conv2d:N=1,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1",
    "conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1",
    "conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1",
};

struct Contender {
  std::string name;
  std::function<void()> run;
  std::vector<double> round_seconds;
};

Target host() {
  return Target::parse("llvm -mcpu=native");
}

// A layer's data: the plain conv's (NCHW input, OIHW weight, reference output), which
// oneDNN reads, and the arrays Temper's kernel reads -- the same for a plain workload, the
// input blocked and the weight packed for a blocked one (conv2d_nchwc: the layout a model
// in the blocked layout keeps between its convs), whose output is unblocked before the
// check against the plain reference.
struct LayerData {
  ops::OpData plain;
  std::vector<NDArray> kernel_args;  // input, weight, output
  int64_t out_channels = 0;          // a blocked output's logical channels; 0: plain
};

bool is_blocked(const ops::Workload& w) {
  return w.op == "conv2d_nchwc" || w.op == "group_conv2d_nchwc" || w.op == "depthwise_conv2d_nchwc" ||
         w.op == "conv2d_winograd_nchwc";
}

// The plain workload computing what w computes.
ops::Workload plain_form(const ops::Workload& w) {
  if (!is_blocked(w)) return w;
  std::vector<std::pair<std::string, std::string>> params;
  if (w.op == "conv2d_winograd_nchwc") params = {{"R", "3"}, {"S", "3"}};  // always 3x3, stride 1
  for (const char* key : {"N", "C", "H", "W", "K", "R", "S", "stride", "pad", "dilation", "groups"}) {
    for (const auto& [k, v] : w.params) {
      if (k == key) params.push_back({k, v});
    }
  }
  return ops::Workload::make(w.op == "depthwise_conv2d_nchwc" ? "depthwise_conv2d" : "conv2d", params);
}

LayerData layer_data(const ops::Workload& w, const Task& task) {
  LayerData d{ops::make_op_data(ops::instantiate(plain_form(w)), 1), {}, 0};
  if (!is_blocked(w)) {
    d.kernel_args = {d.plain.inputs[0], d.plain.inputs[1], d.plain.outputs[0]};
    return d;
  }
  bool depthwise = w.op == "depthwise_conv2d_nchwc";
  bool winograd = w.op == "conv2d_winograd_nchwc";
  int64_t in_block = depthwise || winograd ? w.get_int("block") : w.get_int("in_block");
  int64_t out_block = depthwise || winograd ? in_block : w.get_int("out_block");
  const NDArray& x = d.plain.inputs[0];
  const NDArray& weight = d.plain.inputs[1];
  NDArray packed = winograd    ? ops::pack_winograd_weight_nchwc(weight, w.get_int("tile"), in_block)
                   : depthwise ? ops::pack_depthwise_weight_nchwc(weight, in_block)
                               : ops::pack_conv_weight_nchwc(weight, in_block, out_block, ops::nchwc_conv_groups(w));
  d.kernel_args = {in_block == 1 ? x : ops::block_channels(x, in_block), packed,
                   NDArray::zeros(ops::static_shape(task.op().outputs[0], w.op), DataType::float32())};
  d.plain.tolerance_of_largest = task.op().tolerance_of_largest;  // Winograd's rounding
  d.out_channels = d.plain.outputs[0].shape()[1];
  return d;
}

// A config's kernel as a model runs it: its compute function on the layer's arrays, with
// the weight packed once beforehand where the config packs it (Task::apply_prepacked).
struct ModelKernel {
  PackedFunc f;
  std::vector<NDArray> args;  // input, weight (packed or not), output
  void operator()() const {
    std::vector<NDArray> a = args;
    f({&a[0], &a[1], &a[2]});
  }
};

// The kernel of config, checked against the plain reference.
ModelKernel compile_checked(const Task& task, const Config& config, LayerData& data) {
  ModelKernel k;
  k.args = data.kernel_args;
  if (std::optional<schedule_space::PrepackedSchedule> p = task.apply_prepacked(config)) {
    k.args[p->input] = schedule_space::pack_once(*p, data.kernel_args[p->input], host());
    k.f = build({p->compute.func()}, host()).module->get_function(p->compute.func().name);
  } else {
    k.f = build({task.apply(config).func()}, host()).module->get_function(task.op().func.name);
  }
  k.args[2].fill(NAN);
  k();
  if (data.out_channels > 0) data.plain.outputs[0].copy_from(ops::unblock_channels(k.args[2], data.out_channels));
  Comparison cmp = ops::check_outputs(data.plain);
  if (!cmp.ok()) throw UserError(str("config ", config.to_string(), " disagrees with the reference: ", cmp.message));
  return k;
}

// The fastest of the default's neighbours and `samples` sampled configs, each timed once
// (its fastest group: a burst of load on the shared machine does not pick the winner).
Config quick_scan(const Task& task, int samples, LayerData& data) {
  std::vector<Config> candidates = task.space().neighbours(task.default_config());
  std::mt19937_64 rng(7);
  for (int i = 0; i < samples; ++i) candidates.push_back(task.space().sample(rng));
  Config best = task.default_config();
  ModelKernel f = compile_checked(task, best, data);
  double best_s = time_function(f, 3, 20).min_s;
  for (const Config& c : candidates) {
    ModelKernel g = compile_checked(task, c, data);
    double t = time_function(g, 3, 20).min_s;
    if (t < best_s) {
      best_s = t;
      best = c;
    }
  }
  return best;
}

ConvShape conv_shape(const ops::Workload& w) {
  std::vector<int64_t> stride = w.get_ints("stride");
  std::vector<int64_t> pad = w.get_ints("pad");
  std::vector<int64_t> dilation = w.get_ints("dilation");
  if (std::any_of(dilation.begin(), dilation.end(), [](int64_t d) { return d != 1; })) {
    throw UserError(str(w.to_string(), ": the benchmark takes no dilation"));
  }
  bool depthwise = w.op == "depthwise_conv2d";
  int64_t C = w.get_int("C");
  int64_t K = depthwise ? C * w.get_int("multiplier") : w.get_int("K");
  ConvShape s{w.get_int("N"), C, w.get_int("H"), w.get_int("W"), K, w.get_int("R"), w.get_int("S")};
  s.groups = depthwise ? C : w.get_int("groups");  // w: a plain workload (plain_form)
  s.stride_h = stride[0];
  s.stride_w = stride.size() > 1 ? stride[1] : stride[0];
  if (pad.size() == 4) {
    s.pad_top = pad[0], s.pad_left = pad[1], s.pad_bottom = pad[2], s.pad_right = pad[3];
  } else {
    s.pad_top = s.pad_bottom = pad[0];
    s.pad_left = s.pad_right = pad.size() > 1 ? pad[1] : pad[0];
  }
  return s;
}

// One layer's summary: the median GFLOP/s of each Temper contender over oneDNN blocked's.
struct LayerResult {
  std::string workload;
  int count = 1;
  double onednn_blocked_gflops = 0;
  double default_ratio = 0;
  double tuned_ratio = NAN;  // with --db or --tune
};

LayerResult run_workload(const std::string& text, int count, int rounds, int tune_samples,
                         const tuning_db::Database* db) {
  ops::Workload w = ops::Workload::parse(text);
  std::unique_ptr<Task> task = Task::create(w, host());
  LayerData data = layer_data(w, *task);
  const float* input = data.plain.inputs[0].data_as<float>();
  const float* weight = data.plain.inputs[1].data_as<float>();
  float* output = data.plain.outputs[0].data_as<float>();

  OnednnConv2d onednn(conv_shape(plain_form(w)), OnednnConvLayout::Plain);
  OnednnConv2d onednn_blocked(conv_shape(plain_form(w)), OnednnConvLayout::Blocked);
  for (OnednnConv2d* conv : {&onednn, &onednn_blocked}) {
    data.plain.outputs[0].fill(0);
    conv->bind(input, weight, output);
    conv->run();
    conv->fetch_output();
    Comparison cmp = ops::check_outputs(data.plain);
    if (!cmp.ok()) {
      throw UserError(
          str("oneDNN (", conv->implementation(), ") disagrees with the reference on ", text, ": ", cmp.message));
    }
  }

  Config default_config = task->default_config();
  std::vector<Contender> all;
  all.push_back({"temper_default", compile_checked(*task, default_config, data), {}});
  all.push_back({"onednn", [&] { onednn.run(); }, {}});
  all.push_back({"onednn_blocked", [&] { onednn_blocked.run(); }, {}});
  std::optional<Config> best;
  if (db) {
    search::ApplyHistoryBest history(*db, nullptr);
    ops::SourcedSchedule sourced = history.schedule_for(w, task->op(), host());
    if (history.last_source() == "log" && !sourced.config.is_null()) best = task->space().from_json(sourced.config);
  } else if (tune_samples > 0) {
    best = quick_scan(*task, tune_samples, data);
  }
  if (best) all.push_back({"temper_tuned", compile_checked(*task, *best, data), {}});

  double load = wait_for_idle_cpu();
  for (int r = 0; r < rounds; ++r) {
    for (Contender& k : all) k.round_seconds.push_back(time_function(k.run, 3, 50).median_s);
  }

  double flops = task->op().flops;
  double onednn_s = median(all[1].round_seconds);
  double blocked_s = median(all[2].round_seconds);
  std::printf("\n%s (x%d in the models; %d rounds, medians; load %.2f before)\n", text.c_str(), count, rounds, load);
  std::printf("  oneDNN plain: %s; blocked: %s\n", onednn.implementation().c_str(),
              onednn_blocked.implementation().c_str());
  std::printf("  %-15s %10s %10s %10s  %s\n", "kernel", "GFLOP/s", "vs_plain", "vs_onednn", "config");
  LayerResult result{text, count, flops / blocked_s * 1e-9, 0, NAN};
  for (const Contender& k : all) {
    double t = median(k.round_seconds);
    std::string config = k.name == "temper_default" ? default_config.to_string()
                         : k.name == "temper_tuned" ? best->to_string()
                                                    : "-";
    std::printf("  %-15s %10.1f %10.3f %10.3f  %s\n", k.name.c_str(), flops / t * 1e-9, onednn_s / t, blocked_s / t,
                config.c_str());
    if (k.name == "temper_default") result.default_ratio = blocked_s / t;
    if (k.name == "temper_tuned") result.tuned_ratio = blocked_s / t;
  }
  std::fflush(stdout);
  return result;
}

// The conv tasks of a model as a build runs it (in the blocked layout: conv2d_nchwc and
// depthwise_conv2d_nchwc), with how often it runs each.
std::vector<std::pair<std::string, int>> model_convs(const std::string& path) {
  std::vector<std::pair<std::string, int>> out;
  for (const graph::ExtractedTask& t : graph::extract_tasks(graph::import_onnx(path), host())) {
    const std::string& op = t.workload.op;
    if (op == "conv2d" || op == "depthwise_conv2d" || is_blocked(t.workload)) {
      out.push_back({t.workload.to_string(), t.count});
    }
  }
  return out;
}

}  // namespace
}  // namespace temper::bench

int main(int argc, char** argv) {
  using namespace temper;
  int rounds = 5;
  int tune_samples = 0;
  std::string db_path;
  std::vector<std::pair<std::string, int>> workloads;
  const char* usage =
      "usage: conv_templates [--rounds N] [--db LOG] [--tune N] [--workloads w1;w2;...] [--model M.onnx ...]";
  try {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg == "--rounds" && i + 1 < argc) {
        rounds = std::max(1, std::atoi(argv[++i]));
      } else if (arg == "--tune" && i + 1 < argc) {
        tune_samples = std::max(0, std::atoi(argv[++i]));
      } else if (arg == "--db" && i + 1 < argc) {
        db_path = argv[++i];
      } else if (arg == "--workloads" && i + 1 < argc) {
        for (const std::string& w : bench::split_list(argv[++i], ';')) workloads.push_back({w, 1});
      } else if (arg == "--model" && i + 1 < argc) {
        for (auto& layer : bench::model_convs(argv[++i])) workloads.push_back(layer);
      } else {
        throw UserError(str("unknown argument '", arg, "'; ", usage));
      }
    }
    if (!db_path.empty() && tune_samples > 0) throw UserError("give --db or --tune, not both");
    if (workloads.empty()) {
      for (const char* w : bench::kResnet18Convs) workloads.push_back({w, 1});
    }
    std::unique_ptr<tuning_db::SQLiteDatabase> db;
    if (!db_path.empty()) db = std::make_unique<tuning_db::SQLiteDatabase>(db_path, tuning_db::OpenMode::ReadOnly);
    std::printf(
        "fp32 convolutions (NCHW), %d threads; Temper target llvm -mcpu=native, kernels as a model runs them (weights "
        "packed once); oneDNN on nchw/oihw data and on its blocked layouts\n",
        temper_get_num_threads());
    std::vector<bench::LayerResult> results;
    for (const auto& [w, count] : workloads)
      results.push_back(bench::run_workload(w, count, rounds, tune_samples, db.get()));
    std::printf(
        "\nper layer: Temper's GFLOP/s over oneDNN's on its blocked layouts (vs_onednn; >1: Temper is faster)\n");
    std::printf("%-100s %5s %12s %12s %12s\n", "workload", "count", "onednn_gf/s", "default", "tuned");
    for (const bench::LayerResult& r : results) {
      char tuned[32] = "-";
      if (!std::isnan(r.tuned_ratio)) std::snprintf(tuned, sizeof tuned, "%.3f", r.tuned_ratio);
      std::printf("%-100s %5d %12.1f %12.3f %12s\n", r.workload.c_str(), r.count, r.onednn_blocked_gflops,
                  r.default_ratio, tuned);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conv_templates: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
