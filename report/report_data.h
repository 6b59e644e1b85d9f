// What `temper report` draws, gathered from a tuning log into one JSON document: the
// machines (fingerprints, with their probes), per workload and machine the tuning curve,
// the spread of the fastest schedules' repeats and the failures, in the form the page's
// script (report/page/report.js) reads:
//
//   {title, log, generated, temper_version,
//    machines: [{id, label, target, cpu_model, cores, compiler, device, simd,
//                probe: {fp32_gflops, int8_gops, bandwidth_gbs, threads, date} | null}],
//    workloads: [{id, workload, op, flops, bytes,
//                 results: [{machine, records, valid, failures: {kind: count},
//                            best_ms, median_ms, best_gflops, first_ms, first_gflops,
//                            curve: {kind: [[trial, seconds, best GFLOP/s so far]...]},
//                            spread: [{rank, min_ms, median_ms, max_ms, repeats, kind}]}]}],
//    sweeps: [{sweep, entry, entry_kind, machine, date, flops, threads,
//              contenders: [{contender, status, why, description, seconds, rounds,
//                            details (a model's tasks and the log's estimate, when kept)}]}],
//    failures: [{machine, kind, count}]}
//
// A machine is a target string on one kind of hardware (tuning_db::same_machine); a
// kind is the search a record came from: "template" for records with a knob config,
// "auto-scheduler" for those with a trace alone, followed by the tuner that proposed it,
// "template (ga)", where the record names one. The best is the build's choice (tuning_db::rank_schedules: a
// re-measured schedule by its median record); GFLOP/s count the op's FLOPs
// (ops::OpInstance::flops), 0 where the workload no longer instantiates. A sweep entry
// shows its latest run on each machine.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tuning_db/database.h"

namespace temper::report {

struct ReportOptions {
  std::string title = "Temper tuning report";
  std::string log_path;  // shown on the page
};

nlohmann::json report_data(const tuning_db::Database& log, const ReportOptions& options);

}  // namespace temper::report
