// temper: the command line. Each subcommand lives in cmd_<name>.cpp; this file only
// dispatches and turns errors into a message and a non-zero exit status.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "compiler/ir/error.h"

namespace {

const char* kUsage =
    "usage: temper COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  show WORKLOAD --emit ir|lowered|c|llvm|asm   print the program at a stage of compilation\n"
    "  run WORKLOAD [--db FILE]                     compile (applying the tuning log), check, time\n"
    "  run MODEL.onnx|MODEL.so [--db FILE]          run an ONNX model (or a built one): outputs and latency\n"
    "  build MODEL.onnx --db FILE -o OUT.so         compile a model with the tuning log into a shared library\n"
    "  tune WORKLOAD --db FILE                      search the schedule space, logging every measurement\n"
    "  ops [OP]                                     list the operators and their parameters\n"
    "  db SUBCOMMAND --db FILE                      list, inspect, merge, prune a tuning log\n"
    "  sweep SUITE.toml --db FILE                   tune a suite where the log lacks trials, time it beside baselines\n"
    "  report --db FILE -o PAGE.html                draw a tuning log as one self-contained HTML page\n"
    "  model train|eval --db FILE                   fit a cost model on a tuning log, or judge one against it\n"
    "  devices [--json]                             the targets this machine can run, and why not the others\n"
    "\n"
    "A workload is one string: matmul:M=1024,N=1024,K=1024 or\n"
    "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1. `temper COMMAND --help` for options.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (command == "show") return temper::cli::cmd_show(args);
    if (command == "run") return temper::cli::cmd_run(args);
    if (command == "ops") return temper::cli::cmd_ops(args);
    if (command == "db") return temper::cli::cmd_db(args);
    if (command == "tune") return temper::cli::cmd_tune(args);
    if (command == "model") return temper::cli::cmd_model(args);
    if (command == "build") return temper::cli::cmd_build(args);
    if (command == "devices") return temper::cli::cmd_devices(args);
    if (command == "report") return temper::cli::cmd_report(args);
    if (command == "sweep") return temper::cli::cmd_sweep(args);
    std::cerr << "temper: unknown command '" << command << "'\n\n" << kUsage;
    return 2;
  } catch (const temper::UserError& e) {
    std::cerr << "temper " << command << ": error: " << e.what() << "\n";
    return 1;
  } catch (const temper::InternalError& e) {
    std::cerr << "temper " << command << ": " << e.what() << "\nThis is a bug in Temper; please report it.\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "temper " << command << ": error: " << e.what() << "\n";
    return 1;
  }
}
