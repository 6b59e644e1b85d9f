// temper show: a workload's program at one stage of compilation (as scheduled, lowered,
// or the target's code: C, LLVM IR, assembly; CUDA C, PTX or OpenCL C for GPU targets),
// all through emit() (codegen/build.h), which refuses a stage that does not fit the
// target; or, with -o f.so / f.o, the compiled library of an llvm target.
#include <cstring>
#include <fstream>
#include <iostream>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/workload_schedule.h"
#include "compiler/codegen/build.h"

namespace po = boost::program_options;

namespace temper::cli {

int cmd_show(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: temper show WORKLOAD [--db FILE [--any-machine] | --trace FILE | --schedule naive|default] --emit ir|lowered|c|llvm|asm "
      "[--target T] [--log-passes] [-o FILE[.o|.so]]\n"
      "       temper show WORKLOAD --target cuda -arch=sm_90 --emit cuda|ptx   (or --target opencl --emit opencl)";
  ScheduleChoice choice;
  std::string emit_what = "lowered";
  std::string target_text = "llvm -mcpu=native";
  bool log_passes = false;
  std::string output;
  po::options_description desc("temper show: print a workload's program at one stage of compilation");
  add_schedule_options(desc, choice);
  desc.add_options()(
      "emit", po::value(&emit_what)->default_value("lowered"),
      "ir (as scheduled), lowered (after the lowering passes), c, llvm (LLVM IR), asm (machine code); for GPU "
      "targets: cuda or ptx (cuda, compiled by NVRTC), opencl")(
      "target", po::value(&target_text)->default_value("llvm -mcpu=native"),
      "target string: llvm [-mcpu=...], c, cuda -arch=sm_90, opencl")(
      "log-passes", po::bool_switch(&log_passes), "print the IR after each lowering pass (to stderr)")(
      "output,o", po::value(&output),
      "write to this file instead of stdout; a .o or .so file gets the compiled "
      "object or shared library (llvm targets)");
  std::string workload_text;
  if (!parse_command_line(args, usage, desc, workload_text)) return 0;

  ops::Workload workload = ops::Workload::parse(workload_text);
  ops::OpInstance op = ops::instantiate(workload);
  Target target = Target::parse(target_text);
  Schedule sch = make_schedule(workload, op, choice, target).sourced.schedule;
  LowerOptions lower_options;
  lower_options.log_passes = log_passes;
  auto ends_with = [&](const char* suffix) {
    return output.size() > std::strlen(suffix) &&
           output.compare(output.size() - std::strlen(suffix), std::string::npos, suffix) == 0;
  };
  if (ends_with(".o") || ends_with(".so")) {
    export_library({sch.func()}, target, output, lower_options);
    std::cerr << "wrote " << output << " (function " << function_symbol(op.func.name) << ", calling convention of "
              << "compiler/runtime/c_runtime_api.h)\n";
    return 0;
  }
  std::string text = emit({sch.func()}, target, emit_what, lower_options);
  if (output.empty()) {
    std::cout << text;
    return 0;
  }
  std::ofstream out(output);
  if (!out || !(out << text)) throw UserError(str("cannot write '", output, "'"));
  return 0;
}

}  // namespace temper::cli
