#include <iostream>

#include "cli/commands.h"
#include "cli/workload_schedule.h"
#include "compiler/codegen/build.h"

namespace po = boost::program_options;

namespace temper::cli {

int cmd_show(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: temper show WORKLOAD [--trace FILE | --schedule naive|default] --emit ir|lowered|c|llvm|asm "
      "[--target T] [--log-passes]";
  ScheduleChoice choice;
  std::string emit_what = "lowered";
  std::string target_text = "llvm -mcpu=native";
  bool log_passes = false;
  po::options_description desc("temper show: print a workload's program at one stage of compilation");
  add_schedule_options(desc, choice);
  desc.add_options()
      ("emit", po::value(&emit_what)->default_value("lowered"),
       "ir (as scheduled), lowered (after the lowering passes), c, llvm (LLVM IR), asm (machine code)")
      ("target", po::value(&target_text)->default_value("llvm -mcpu=native"), "target string")
      ("log-passes", po::bool_switch(&log_passes), "print the IR after each lowering pass (to stderr)");
  std::string workload_text;
  if (!parse_command_line(args, usage, desc, workload_text)) return 0;

  ops::OpInstance op = ops::instantiate(ops::Workload::parse(workload_text));
  Target target = Target::parse(target_text);
  Schedule sch = make_schedule(op, choice, target);
  LowerOptions lower_options;
  lower_options.log_passes = log_passes;
  std::cout << emit({sch.func()}, target, emit_what, lower_options);
  return 0;
}

}  // namespace temper::cli
