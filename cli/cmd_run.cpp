#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/workload_schedule.h"
#include "compiler/codegen/build.h"
#include "compiler/ops/op_data.h"
#include "compiler/runtime/c_runtime_api.h"
#include "compiler/runtime/timer.h"
#include "search/apply_history_best.h"

namespace po = boost::program_options;

namespace temper::cli {
namespace {

struct Measured {
  BuildResult build;
  TimingResult timing;
  Comparison check;
};

// Compiles, checks against the reference, and times one schedule of the workload. A wrong
// result is an error: its time would mean nothing.
Measured measure(const ops::OpInstance& op, const Schedule& sch, const Target& target, ops::OpData& data, int repeat,
                 double min_repeat_ms) {
  Measured m;
  m.build = build({sch.func()}, target);
  PackedFunc f = m.build.module->get_function(op.func.name);
  m.check = ops::run_and_check(f, data);
  if (!m.check.ok()) throw UserError(str("wrong result: ", m.check.message));
  std::vector<NDArray*> args = data.args();
  m.timing = time_function([&] { f(args); }, repeat, min_repeat_ms);
  return m;
}

void print_line(const char* label, const std::string& text) { std::printf("%-10s %s\n", label, text.c_str()); }

std::string format_ms(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  return buf;
}

std::string format_gflops(double flops, double seconds) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f GFLOP/s", flops / seconds * 1e-9);
  return buf;
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: temper run WORKLOAD [--db FILE | --trace FILE | --schedule naive|default] [--target T] [--repeat N] "
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
  desc.add_options()
      ("target", po::value(&target_text)->default_value("llvm -mcpu=native"), "target string: llvm [-mcpu=...], c")
      ("repeat", po::value(&repeat)->default_value(7), "timed groups of calls; the median is reported")
      ("min-repeat-ms", po::value(&min_repeat_ms)->default_value(100), "minimum length of one group")
      ("threads", po::value(&threads)->default_value(0), "threads for parallel loops (0: one per core)")
      ("compare-naive", po::bool_switch(&compare_naive), "also time the naive schedule and print the speed-up")
      ("save-trace", po::value(&save_trace), "write the schedule's trace (JSON) to this file");
  std::string workload_text;
  if (!parse_command_line(args, usage, desc, workload_text)) return 0;
  if (threads < 0) throw UserError(str("--threads must be 0 (all cores) or positive, got ", threads));

  ops::Workload workload = ops::Workload::parse(workload_text);
  ops::OpInstance op = ops::instantiate(workload);
  Target target = Target::parse(target_text);
  if (threads > 0) temper_set_num_threads(threads);
  Schedule sch = make_schedule(workload, op, choice, target);
  if (!save_trace.empty()) {
    std::ofstream out(save_trace);
    if (!out) throw UserError(str("cannot write trace file '", save_trace, "'"));
    out << sch.trace().to_json().dump(2) << "\n";
  }

  ops::OpData data = ops::make_op_data(op);
  std::string schedule_name = schedule_label(choice);
  print_line("workload", workload.to_string());
  print_line("target", target.to_string() + ", " + std::to_string(temper_get_num_threads()) + " threads");
  print_line("schedule", schedule_name);
  Measured m = measure(op, sch, target, data, repeat, min_repeat_ms);
  print_line("compile", "lower " + format_ms(m.build.lower_seconds) + ", codegen " + format_ms(m.build.codegen_seconds));
  char err[64];
  std::snprintf(err, sizeof err, "%.2g", m.check.max_abs_error);
  print_line("check", std::string("ok, max abs error ") + err + " against the reference");
  print_line("time", "median " + format_ms(m.timing.median_s) + " (min " + format_ms(m.timing.min_s) + ") over " +
                         std::to_string(repeat) + " x " + std::to_string(m.timing.calls_per_group) + " calls");
  if (op.flops > 0) print_line("speed", format_gflops(op.flops, m.timing.median_s));

  // With a log, the default schedule beside the tuned one: what tuning bought.
  if (!choice.db.empty()) {
    Measured def = measure(op, search::default_schedule(workload, op, target), target, data, repeat, min_repeat_ms);
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, "%.2fx", def.timing.median_s / m.timing.median_s);
    std::string speed = op.flops > 0 ? format_gflops(op.flops, def.timing.median_s) + ", " : "";
    print_line("default", speed + "median " + format_ms(def.timing.median_s) + "; tuned is " + ratio +
                              " the default's speed");
  }

  if (compare_naive) {
    // The naive loop nest is slow: fewer, single-call groups.
    Measured naive = measure(op, Schedule(op.func), target, data, 3, 0);
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, "%.1fx", naive.timing.median_s / m.timing.median_s);
    std::string speed = op.flops > 0 ? format_gflops(op.flops, naive.timing.median_s) + ", " : "";
    print_line("naive", speed + "median " + format_ms(naive.timing.median_s) + "; " + schedule_name + " is " + ratio +
                            " faster");
  }
  return 0;
}

}  // namespace temper::cli
