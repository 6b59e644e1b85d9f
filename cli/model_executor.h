// What `temper build MODEL.onnx` and `temper run MODEL.onnx` share: the model compiled by
// GraphExecutor with the schedules of a tuning log (or the template defaults without one),
// and one summary line saying how many of its tunable ops the log served.
#pragma once

#include <memory>
#include <string>

#include "compiler/graph/executor.h"
#include "compiler/graph/graph.h"
#include "compiler/target/target.h"
#include "search/apply_history_best.h"

namespace temper::cli {

// Compiles g for target. With db set: each tuning task's best record in the log (a
// missing or unreadable log is a UserError), ApplyHistoryBest's one line per workload on
// stderr, and with layout's block open the block the log estimates fastest
// (search/layout_from_log.h; "block  ..." on stdout). Prints "schedules  ..." (how many
// tunable ops the log served, how many took the template default), "kernels  ..." (calls
// per run, memory) and "layout  ..." (layout_summary) on stdout.
// match: whose records apply (search::MachineMatch: this machine's unless --any-machine).
// ops_from_log, when given and db is: how many tunable ops took a record of the log.
std::unique_ptr<graph::GraphExecutor> compile_model(const graph::Graph& g, const Target& target, const std::string& db,
                                                    graph::LayoutChoice layout, search::MachineMatch match,
                                                    int* ops_from_log = nullptr);

// Where the plan's activations are blocked and where it converts, in one line:
// "activations in NCHW16c between convs; 1 conversion: out of NCHW16c for 'Flatten_0' (Flatten)".
std::string layout_summary(const graph::ExecutionPlan& plan);

// "12.5 MB", "640 KB", "96 B".
std::string format_bytes(int64_t bytes);

}  // namespace temper::cli
