// temper run, in two forms: a WORKLOAD (one operator compiled with a schedule, checked
// against its reference, timed) or an ONNX MODEL (imported, compiled by GraphExecutor with
// the best schedules of a tuning log or the defaults, or a model `temper build` wrote,
// run on .npy or random inputs, outputs printed and saved, timed).
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/model_executor.h"
#include "cli/workload_kernel.h"
#include "cli/workload_schedule.h"
#include "compiler/codegen/build.h"
#include "compiler/graph/executor.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/ir/duration.h"
#include "compiler/ir/text.h"
#include "compiler/ops/op_data.h"
#include "compiler/runtime/c_runtime_api.h"
#include "compiler/runtime/npy.h"
#include "compiler/runtime/timer.h"
#include "search/apply_history_best.h"
#include "tuning_db/sqlite_database.h"

namespace po = boost::program_options;

namespace temper::cli {
namespace {

struct Measured {
  double lower_seconds = 0, codegen_seconds = 0;
  TimingResult timing;
  Comparison check;
  bool weight_packed = false;  // timed on its weight packed once beforehand
};

// Compiles, checks and times one schedule of the workload (cli/workload_kernel.h).
Measured measure(const ops::Workload& workload, const ops::OpInstance& op, const ops::SourcedSchedule& sch,
                 const Target& target, ops::OpData& data, int repeat, double min_repeat_ms) {
  CheckedKernel kernel(workload, op, sch, target, data);
  TimingOptions options;
  options.repeat = repeat;
  options.min_repeat_ms = min_repeat_ms;
  return {kernel.build().lower_seconds, kernel.build().codegen_seconds, kernel.time(options), kernel.check(),
          kernel.weight_packed()};
}

void print_line(const char* label, const std::string& text) {
  std::printf("%-10s %s\n", label, text.c_str());
}

std::string format_gflops(double flops, double seconds) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f GFLOP/s", flops / seconds * 1e-9);
  return buf;
}

// ---- temper run MODEL.onnx | MODEL.so ----

// The first argument names a model: a .onnx path, a library `temper build` wrote, or any
// existing file (which import then judges), never a workload string.
bool names_model(const std::vector<std::string>& args) {
  if (args.empty() || args[0].starts_with("-")) return false;
  std::error_code ec;
  return args[0].ends_with(".onnx") || args[0].ends_with(".so") || std::filesystem::is_regular_file(args[0], ec);
}

using ModelInputs = std::vector<std::pair<std::string, graph::TensorType>>;

// Each --input file against the model's inputs, with the file named (and, where the model
// is still to compile, the --shape that would fit a file of other extents).
void check_input_files(const std::map<std::string, NDArray>& inputs,
                       const std::map<std::string, std::string>& input_files, const ModelInputs& model_inputs,
                       const std::string& model_path, bool reshapable) {
  for (const auto& [name, array] : inputs) {
    auto it = std::find_if(model_inputs.begin(), model_inputs.end(), [&](const auto& in) { return in.first == name; });
    if (it == model_inputs.end()) {
      std::vector<std::string> names;
      for (const auto& [n, type] : model_inputs) names.push_back(n + " " + type.to_string());
      throw UserError(str("--input ", name, "=", input_files.at(name), ": ", model_path, " has no input '", name,
                          "'; its inputs are: ", names.empty() ? "(none)" : join(names, ", ")));
    }
    graph::TensorType given{array.shape(), array.dtype()};
    if (given != it->second) {
      std::string hint;
      if (reshapable && given.dtype == it->second.dtype && given.shape.size() == it->second.shape.size()) {
        std::vector<std::string> extents;
        for (int64_t e : given.shape) extents.push_back(std::to_string(e));
        hint = str(" (to compile the model for the file's shape, give --shape ", name, "=", join(extents, "x"), ")");
      }
      throw UserError(str("--input ", name, "=", input_files.at(name), ": input '", name, "' expects ",
                          it->second.to_string(), ", the file holds ", given.to_string(), hint));
    }
  }
}

// "-0.1234 0.5 ... (10 values); min -1 max 2 mean 0.25": the first values and the range.
std::string summarize(const NDArray& a) {
  const int64_t shown = std::min<int64_t>(a.size(), 6);
  std::string text;
  char buf[64];
  for (int64_t i = 0; i < shown; ++i) {
    std::snprintf(buf, sizeof buf, "%s%.6g", i ? " " : "", a.get(i));
    text += buf;
  }
  if (a.size() > shown) text += str(" ... (", a.size(), " values)");
  double lo = a.get(0), hi = a.get(0), sum = 0;
  for (int64_t i = 0; i < a.size(); ++i) {
    double x = a.get(i);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  std::snprintf(buf, sizeof buf, "; min %.6g max %.6g mean %.6g", lo, hi, sum / static_cast<double>(a.size()));
  return text + buf;
}

// An output's file name: its name with anything but letters, digits, '.', '-' and '_'
// replaced by '_', so that a name like "logits/0" stays inside the directory.
std::string output_file_name(const std::string& name) {
  std::string file = name;
  for (char& c : file) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  }
  return file + ".npy";
}

// One line per kernel call: median time, share of the summed medians, the function and
// what it writes; slowest first. With a log (db not empty), a tuning task's kernel also
// shows the time the log holds for its schedule and the model's time over it: a kernel
// far slower in the model than in the tuner is where tuning does not reach the model.
// Last, the summed medians beside the model's median latency, and the time between the
// kernels: each run's latency less its kernels' times, the median over the runs.
void print_profile(const graph::ExecutionPlan& plan, std::vector<std::vector<double>>& call_s, const std::string& db,
                   search::MachineMatch match, double latency_s, double between_s) {
  std::unique_ptr<tuning_db::SQLiteDatabase> log;
  if (!db.empty()) log = std::make_unique<tuning_db::SQLiteDatabase>(db, tuning_db::OpenMode::ReadOnly);
  // The log's time for the schedule the build applied: its best record's, or with a
  // schedule chosen in a model (search/confirm_in_model.h), that record's (a template
  // default chosen there has one where the tuner measured it among the log's 5 best).
  auto logged_s = [&](const graph::KernelCall& call, std::string& chosen) -> std::optional<double> {
    if (!log || call.workload.empty()) return std::nullopt;
    Target target = Target::parse(plan.target);
    tuning_db::WorkloadKey key = tuning_db::WorkloadKey::from(ops::Workload::parse(call.workload));
    std::optional<tuning_db::ModelChoice> choice = search::model_choice_for(*log, key, target);
    std::vector<tuning_db::TuningRecord> best = search::best_records(*log, key, target, choice ? 5 : 1, match).best;
    if (choice) {
      chosen = str("chosen in ", choice->model, ": ", choice->picked);
      for (const tuning_db::TuningRecord& r : best) {
        if (r.trace == choice->trace && r.config == choice->config) return r.mean;
      }
      return std::nullopt;
    }
    if (best.empty()) return std::nullopt;
    return best[0].mean;
  };
  std::vector<double> median(call_s.size());
  double total = 0;
  for (size_t c = 0; c < call_s.size(); ++c) {
    std::sort(call_s[c].begin(), call_s[c].end());
    median[c] = call_s[c][call_s[c].size() / 2];
    total += median[c];
  }
  std::vector<size_t> order(call_s.size());
  for (size_t c = 0; c < order.size(); ++c) order[c] = c;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return median[a] > median[b]; });
  // The kernels the log times: their sum in the model against the log's, the tuner's
  // estimate of the model (tune MODEL's "latency ... estimated").
  int logged = 0;
  double logged_model_s = 0, logged_log_s = 0;
  for (size_t c : order) {
    const graph::KernelCall& call = plan.calls[c];
    const graph::PlannedArray& out = plan.arrays[call.args.back()];
    std::string in_log, chosen;
    if (std::optional<double> t = logged_s(call, chosen)) {
      ++logged;
      logged_model_s += median[c];
      logged_log_s += *t;
      char text[64];
      std::snprintf(text, sizeof text, "log %.3f ms, model/log %.2fx", *t * 1e3, median[c] / *t);
      in_log = str("  (", text, chosen.empty() ? "" : "; " + chosen, ")");
    } else if (!chosen.empty()) {
      in_log = str("  (", chosen, ")");
    } else if (log && !call.workload.empty()) {
      in_log = "  (not in the log)";
    }
    char line[512];
    std::snprintf(line, sizeof line, "%9.3f ms %5.1f%%  %s -> %s %s%s", median[c] * 1e3, 100 * median[c] / total,
                  call.function.c_str(), out.name.c_str(), out.type.to_string().c_str(), in_log.c_str());
    print_line("profile", line);
  }
  char line[256];
  std::snprintf(line, sizeof line, "%9.3f ms in %zu kernels, %.1f%% of the median latency %.3f ms", total * 1e3,
                call_s.size(), 100 * total / latency_s, latency_s * 1e3);
  print_line("profile", line);
  std::snprintf(line, sizeof line,
                "%9.3f ms per run between the kernels (each run's latency less its kernels' times, the "
                "median over the runs: %.1f%% of the latency, %.1f us per kernel)",
                between_s * 1e3, 100 * between_s / latency_s, 1e6 * between_s / static_cast<double>(call_s.size()));
  print_line("profile", line);
  if (logged > 0) {
    std::snprintf(line, sizeof line,
                  "%9.3f ms in the %d kernels the log times, which it estimates at %.3f ms (model/log %.2fx); the "
                  "other %zu kernels take %.3f ms",
                  logged_model_s * 1e3, logged, logged_log_s * 1e3, logged_model_s / logged_log_s,
                  call_s.size() - static_cast<size_t>(logged), (total - logged_model_s) * 1e3);
    print_line("profile", line);
  }
  int conversions = 0;
  double conversion_s = 0;
  for (size_t c = 0; c < call_s.size(); ++c) {
    if (!plan.calls[c].layout_conversion) continue;
    ++conversions;
    conversion_s += median[c];
  }
  std::snprintf(line, sizeof line, "%9.3f ms in %d layout conversion%s per run (%s)", conversion_s * 1e3, conversions,
                conversions == 1 ? "" : "s", plan.layout.c_str());
  print_line("profile", line);
}

int run_model(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: temper run MODEL.onnx|MODEL.so [--db FILE [--any-machine]] [--input NAME=FILE.npy ...] [--dim NAME=N "
      "...] [--shape NAME=D0xD1x... ...] [--repeat N] "
      "[--output-dir DIR] [--target T] [--threads N] [--seed N] [--profile] [--layout "
      "nchwc|nchw8c|nchw16c|...-direct|nchw]";
  std::vector<std::string> input_flags;
  std::string layout = "nchwc";
  ModelShapeFlags shape_flags;
  std::string db;
  std::string target_text;
  std::string output_dir;
  int repeat = 10;
  int threads = 0;
  uint64_t seed = 0;
  bool profile = false;
  bool any_machine = false;
  po::options_description desc(
      "temper run MODEL: compile an ONNX model (with the best schedules of a tuning log, or the defaults) or load "
      "one `temper build` wrote, run it on the given inputs, print its outputs and latency");
  desc.add_options()("db", po::value(&db),
                     "compile each tunable op with the best record of this tuning log (MODEL.onnx only)")(
      "input", po::value(&input_flags)->composing(),
      "NAME=FILE.npy: an input's data (repeatable), whose shape sizes the dynamic dimensions it declares; inputs "
      "not given get random data")("repeat", po::value(&repeat)->default_value(10),
                                   "timed runs after the first; the median and min are printed")(
      "output-dir", po::value(&output_dir), "write each output as DIR/NAME.npy (DIR is created when missing)")(
      "target", po::value(&target_text),
      "target string: llvm [-mcpu=...], c (default llvm -mcpu=native; a built "
      "model runs on the target it was built for)")("threads", po::value(&threads)->default_value(0),
                                                    "threads for parallel loops (0: one per core)")(
      "seed", po::value(&seed)->default_value(0), "seed of the random data for inputs not given")(
      "profile", po::bool_switch(&profile), "print each kernel's median time and share of the run, slowest first")(
      "layout", po::value(&layout)->default_value("nchwc"),
      "activations of the convs: nchwc (blocked, kept across the graph; the block the log estimates fastest, else the "
      "target's vector; 3x3 stride-1 convs by Winograd where it pays), nchw8c or nchw16c (a fixed block), "
      "nchwc-direct, nchw8c-direct, nchw16c-direct (every conv direct) or nchw; a log tuned in one layout or block "
      "does not apply to another"
      " (MODEL.onnx only)");
  shape_flags.add_options(desc);
  add_machine_option(desc, any_machine);
  std::vector<std::string> positionals;
  po::variables_map vm;
  if (!parse_command_line(args, usage, desc, "MODEL", 1, 1, positionals, vm)) return 0;
  const std::string& model_path = positionals[0];
  if (repeat < 1) throw UserError(str("--repeat must be at least 1, got ", repeat));
  if (threads < 0) throw UserError(str("--threads must be 0 (all cores) or positive, got ", threads));
  bool built = model_path.ends_with(".so");
  if (built) {
    for (const char* flag : {"db", "any-machine", "dim", "shape", "target", "layout"}) {
      if (vm.count(flag) && !vm[flag].defaulted()) {
        throw UserError(str("--", flag, " applies when compiling MODEL.onnx; ", model_path,
                            " was built already (give the .onnx file, or rebuild with `temper build`)"));
      }
    }
  }

  // The .npy files are read before the model so that a bad file fails fast.
  std::map<std::string, NDArray> inputs;
  std::map<std::string, std::string> input_files;
  for (const std::string& flag : input_flags) {
    auto [name, file] = split_binding(flag, "--input", "NAME=FILE.npy");
    if (input_files.count(name)) throw UserError(str("--input gives '", name, "' twice"));
    inputs[name] = read_npy(file);
    input_files[name] = file;
  }
  if (threads > 0) temper_set_num_threads(threads);
  auto make_output_dir = [&] {
    if (output_dir.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(output_dir, ec);
    if (ec) throw UserError(str("cannot create --output-dir '", output_dir, "': ", ec.message()));
  };

  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<graph::GraphExecutor> executor;
  ModelInputs model_inputs;
  if (built) {
    executor = graph::GraphExecutor::load(model_path);
    const graph::ExecutionPlan& plan = executor->plan();
    for (int id : plan.inputs) model_inputs.emplace_back(plan.arrays[id].name, plan.arrays[id].type);
    check_input_files(inputs, input_files, model_inputs, model_path, /*reshapable=*/false);
    make_output_dir();
    print_line("model", str(model_path, ": built for ", plan.target, ", ", plural(executor->num_kernels(), "kernel"),
                            ", ", plural(static_cast<int64_t>(plan.inputs.size()), "input"), ", ",
                            plural(static_cast<int64_t>(plan.outputs.size()), "output")));
  } else {
    graph::ImportOptions options;
    options.dims = shape_flags.dim_sizes();
    options.input_shapes = shape_flags.input_shapes();
    for (const auto& [name, array] : inputs) options.data_shapes[name] = array.shape();
    graph::Graph g = graph::import_onnx(model_path, options);
    for (graph::ValueId v : g.inputs()) model_inputs.emplace_back(g.value(v).name, g.value(v).type);
    // Before compiling, so that a bad file fails fast.
    check_input_files(inputs, input_files, model_inputs, model_path, /*reshapable=*/true);
    make_output_dir();
    print_line("model", str(model_path, ": ", plural(static_cast<int64_t>(g.nodes().size()), "node"), ", ",
                            plural(static_cast<int64_t>(g.inputs().size()), "input"), ", ",
                            plural(static_cast<int64_t>(g.outputs().size()), "output"), ", opset ", g.opset));
    Target target = Target::parse(target_text.empty() ? "llvm -mcpu=native" : target_text);
    print_line("target", target.to_string() + ", " + std::to_string(temper_get_num_threads()) + " threads");
    executor = compile_model(g, target, db, graph::parse_layout_choice(layout), machine_match(any_machine));
  }
  std::chrono::duration<double> load_s = std::chrono::steady_clock::now() - start;
  print_line(built ? "load" : "compile", format_ms(load_s.count()));

  for (const auto& [name, type] : model_inputs) {
    if (inputs.count(name)) {
      print_line("input", str(name, " ", type.to_string(), " from ", input_files[name]));
      continue;
    }
    uint64_t input_seed = seed + inputs.size();
    inputs[name] = NDArray::random(type.shape, type.dtype, input_seed);
    print_line("input", str(name, " ", type.to_string(), ": not given, random data (seed ", input_seed, ")"));
  }

  std::vector<NDArray> outputs = executor->run(inputs);
  std::vector<double> run_s;
  std::vector<std::vector<double>> call_s(executor->num_kernels());  // per call, one time per run
  std::vector<double> calls;
  for (int i = 0; i < repeat; ++i) {
    start = std::chrono::steady_clock::now();
    executor->run(inputs, profile ? &calls : nullptr);
    run_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    for (size_t c = 0; c < calls.size(); ++c) call_s[c].push_back(calls[c]);
  }
  // What each run spent outside its kernels (the executor's loop, each parallel loop's
  // start and end, the output arrays), before the runs are sorted apart from their calls.
  std::vector<double> between_s(run_s.size());
  for (size_t r = 0; r < run_s.size() && profile; ++r) {
    between_s[r] = run_s[r];
    for (const std::vector<double>& times : call_s) between_s[r] -= times[r];
  }
  std::sort(run_s.begin(), run_s.end());
  std::sort(between_s.begin(), between_s.end());
  if (profile) {
    print_profile(executor->plan(), call_s, db, machine_match(any_machine), run_s[run_s.size() / 2],
                  between_s[between_s.size() / 2]);
  }
  print_line("latency", "median " + format_ms(run_s[run_s.size() / 2]) + " (min " + format_ms(run_s.front()) +
                            ") over " + plural(repeat, "run"));

  const graph::ExecutionPlan& plan = executor->plan();
  std::set<std::string> written;
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const graph::PlannedArray& value = plan.arrays[plan.outputs[i]];
    print_line("output", str(value.name, " ", value.type.to_string(), ": ", summarize(outputs[i])));
    if (output_dir.empty()) continue;
    std::string file = (std::filesystem::path(output_dir) / output_file_name(value.name)).string();
    if (!written.insert(file).second) {
      throw UserError(str("two outputs would be written to ", file, "; rename one in the model"));
    }
    write_npy(file, outputs[i]);
    print_line("wrote", file);
  }
  return 0;
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  if (names_model(args)) return run_model(args);
  const std::string usage =
      "usage: temper run WORKLOAD [--db FILE [--any-machine] | --trace FILE | --schedule naive|default] [--target T] "
      "[--repeat N] "
      "[--threads N] [--compare-naive] [--save-trace FILE]";
  ScheduleChoice choice;
  std::string target_text;
  std::string save_trace;
  int repeat = 7;
  int threads = 0;
  double min_repeat_ms = 100;
  bool compare_naive = false;
  po::options_description desc("temper run: compile a workload, check it against the reference, time it");
  add_schedule_options(desc, choice);
  desc.add_options()("target", po::value(&target_text)->default_value("llvm -mcpu=native"),
                     "target string: llvm [-mcpu=...], c")("repeat", po::value(&repeat)->default_value(7),
                                                           "timed groups of calls; the median is reported")(
      "min-repeat-ms", po::value(&min_repeat_ms)->default_value(100), "minimum length of one group")(
      "threads", po::value(&threads)->default_value(0), "threads for parallel loops (0: one per core)")(
      "compare-naive", po::bool_switch(&compare_naive), "also time the naive schedule and print the speed-up")(
      "save-trace", po::value(&save_trace), "write the schedule's trace (JSON) to this file");
  std::string workload_text;
  if (!parse_command_line(args, usage, desc, workload_text)) return 0;
  if (threads < 0) throw UserError(str("--threads must be 0 (all cores) or positive, got ", threads));

  ops::Workload workload = ops::Workload::parse(workload_text);
  ops::OpInstance op = ops::instantiate(workload);
  Target target = Target::parse(target_text);
  if (threads > 0) temper_set_num_threads(threads);
  ChosenSchedule chosen = make_schedule(workload, op, choice, target);
  const ops::SourcedSchedule& sch = chosen.sourced;
  if (!save_trace.empty()) {
    std::ofstream out(save_trace);
    if (!out) throw UserError(str("cannot write trace file '", save_trace, "'"));
    out << sch.schedule.trace().to_json().dump(2) << "\n";
  }

  ops::OpData data = ops::make_op_data(op);
  const std::string& schedule_name = chosen.label;
  print_line("workload", workload.to_string());
  print_line("target", target.to_string() + ", " + std::to_string(temper_get_num_threads()) + " threads");
  print_line("schedule", schedule_name);
  Measured m = measure(workload, op, sch, target, data, repeat, min_repeat_ms);
  if (m.weight_packed)
    print_line("weights", "packed once into the config's layout before timing, as a model build does");
  print_line("compile", "lower " + format_ms(m.lower_seconds) + ", codegen " + format_ms(m.codegen_seconds));
  char err[64];
  std::snprintf(err, sizeof err, "%.2g", m.check.max_abs_error);
  print_line("check", std::string("ok, max abs error ") + err + " against the reference");
  print_line("time", "median " + format_ms(m.timing.median_s) + " (min " + format_ms(m.timing.min_s) + ") over " +
                         std::to_string(repeat) + " x " + std::to_string(m.timing.calls_per_group) + " calls");
  if (op.flops > 0) print_line("speed", format_gflops(op.flops, m.timing.median_s));

  // With a log record applied, the default schedule beside it: what tuning bought.
  if (chosen.from_log) {
    Measured def = measure(workload, op, search::default_sourced_schedule(workload, op, target), target, data, repeat,
                           min_repeat_ms);
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, "%.2fx", def.timing.median_s / m.timing.median_s);
    std::string speed = op.flops > 0 ? format_gflops(op.flops, def.timing.median_s) + ", " : "";
    print_line("default",
               speed + "median " + format_ms(def.timing.median_s) + "; tuned is " + ratio + " the default's speed");
  }

  if (compare_naive) {
    // The naive loop nest is slow: fewer, single-call groups.
    Measured naive = measure(workload, op, {Schedule(op.func), nullptr}, target, data, 3, 0);
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, "%.1fx", naive.timing.median_s / m.timing.median_s);
    std::string speed = op.flops > 0 ? format_gflops(op.flops, naive.timing.median_s) + ", " : "";
    print_line("naive", speed + "median " + format_ms(naive.timing.median_s) + "; " + schedule_name + " is " + ratio +
                            " faster");
  }
  return 0;
}

}  // namespace temper::cli
