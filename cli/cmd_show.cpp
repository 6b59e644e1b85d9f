#include <iostream>

#include "cli/commands.h"
#include "cli/workload_schedule.h"
#include "compiler/codegen/build.h"

namespace po = boost::program_options;

namespace temper::cli {

int cmd_show(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: temper show WORKLOAD [--trace FILE | --schedule naive|default] --emit ir|lowered|c|llvm|asm "
      "[--target T]";
  ScheduleChoice choice;
  std::string emit_what = "lowered";
  std::string target_text = "llvm -mcpu=native";
  po::options_description desc("temper show: print a workload's program at one stage of compilation");
  add_schedule_options(desc, choice);
  desc.add_options()
      ("emit", po::value(&emit_what)->default_value("lowered"),
       "ir (as scheduled), lowered (after the lowering passes), c, llvm (LLVM IR), asm (machine code)")
      ("target", po::value(&target_text)->default_value("llvm -mcpu=native"), "target string");
  std::string workload_text;
  if (!parse_command_line(args, usage, desc, workload_text)) return 0;

  ops::OpInstance op = ops::instantiate(ops::Workload::parse(workload_text));
  Target target = Target::parse(target_text);
  Schedule sch = make_schedule(op, choice);
  std::cout << emit({sch.func()}, target, emit_what);
  return 0;
}

}  // namespace temper::cli
