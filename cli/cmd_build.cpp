// temper build MODEL.onnx --db LOG -o MODEL.so: the model compiled with the log's best
// schedules (ApplyHistoryBest; the template defaults where the log has nothing) and
// exported as one shared library, with its execution plan and weights beside it, for
// `temper run MODEL.so` and GraphExecutor::load.
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/model_executor.h"
#include "cli/workload_schedule.h"
#include "compiler/graph/onnx_import.h"
#include "compiler/ir/error.h"

namespace po = boost::program_options;

namespace temper::cli {

int cmd_build(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: temper build MODEL.onnx -o OUT.so [--db FILE [--any-machine]] [--target T] [--dim NAME=N ...] [--shape "
      "NAME=D0xD1x... ...] [--layout nchwc|nchw8c|nchw16c|...-direct|nchw]";
  std::string db;
  std::string layout = "nchwc";
  std::string out;
  std::string target_text;
  ModelShapeFlags shape_flags;
  po::options_description desc(
      "temper build MODEL.onnx: compile an ONNX model with the best schedules of a tuning log and write it as a shared "
      "library OUT.so, with OUT.plan.json (the kernel calls and memory plan) and OUT.weights beside it; "
      "`temper run OUT.so` runs it");
  desc.add_options()("output,o", po::value(&out), "the library to write (.so); the plan and weights go beside it")(
      "db", po::value(&db), "tuning log whose best records schedule the tunable ops (without it: template defaults)")(
      "target", po::value(&target_text)->default_value("llvm -mcpu=native"), "target string: llvm [-mcpu=...]")(
      "layout", po::value(&layout)->default_value("nchwc"),
      "activations of the convs: nchwc (blocked, kept across the graph; the block the log estimates fastest, else the "
      "target's vector; 3x3 stride-1 convs by Winograd where it pays), nchw8c or nchw16c (a fixed block), "
      "nchwc-direct, nchw8c-direct, nchw16c-direct (every conv direct) or nchw; a log tuned in one layout or block "
      "does not apply to another");
  shape_flags.add_options(desc);
  bool any_machine = false;
  add_machine_option(desc, any_machine);
  std::vector<std::string> positionals;
  po::variables_map vm;
  if (!parse_command_line(args, usage, desc, "MODEL.onnx", 1, 1, positionals, vm)) return 0;
  if (out.empty()) throw UserError(str("temper build needs -o OUT.so: where to write the model\n", usage));
  if (!out.ends_with(".so")) throw UserError(str("-o ", out, ": the output is a shared library; name it OUT.so"));
  std::filesystem::path dir = std::filesystem::path(out).parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec)) {
    throw UserError(str("-o ", out, ": the directory '", dir.string(), "' does not exist"));
  }
  Target target = Target::parse(target_text);
  graph::LayoutChoice layout_choice = graph::parse_layout_choice(layout);
  if (target.kind != Target::Kind::LLVM) {
    throw UserError(str("--target ", target_text, ": temper build exports LLVM targets only (llvm [-mcpu=...])"));
  }

  graph::ImportOptions options;
  options.dims = shape_flags.dim_sizes();
  options.input_shapes = shape_flags.input_shapes();
  const std::string& model_path = positionals[0];
  graph::Graph g = graph::import_onnx(model_path, options);
  std::printf("%-10s %s: %zu nodes, opset %d\n", "model", model_path.c_str(), g.nodes().size(), g.opset);
  std::printf("%-10s %s\n", "target", target.to_string().c_str());
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<graph::GraphExecutor> executor =
      compile_model(g, target, db, layout_choice, machine_match(any_machine));
  executor->export_library(out);
  std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
  std::printf("%-10s %s, %s, %s in %.1f s\n", "wrote", out.c_str(), graph::GraphExecutor::plan_path_for(out).c_str(),
              graph::GraphExecutor::weights_path_for(out).c_str(), seconds.count());
  return 0;
}

}  // namespace temper::cli
