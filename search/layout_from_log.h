// The blocked layout's block a build takes from its tuning log. Tuning a model with the
// block open tunes the tasks of each candidate block (graph::extract_tasks_by_layout);
// the build then lays the whole graph out in the block whose tasks the log estimates
// fastest, so that every conv agrees on it and no conversion is added between two convs
// that would want different blocks.
#pragma once

#include <string>

#include "compiler/graph/graph.h"
#include "compiler/graph/pass_nchwc_layout.h"
#include "compiler/target/target.h"
#include "search/apply_history_best.h"
#include "tuning_db/database.h"

namespace temper::search {

struct LayoutFromLog {
  graph::LayoutChoice layout;  // with the block fixed when there was a choice to make
  // One line for the user: "NCHW8c, the log's fastest: 3.612 ms estimated against
  // 3.950 ms for NCHW16c"; empty when the layout left nothing to choose.
  std::string why;
};

// layout as it is when its block is fixed, only one block is a candidate on target, or no
// task depends on the block (a model without convs).
// Otherwise each candidate block's estimate, sum over its tasks of how often the build
// runs the task times the task's best record in db that match allows (best_records in
// apply_history_best.h, this machine's by default): the fastest block among those whose
// every task has a record; the target's block when none has (a log tuned with the block
// fixed, or one that never reached some task: the defaults of one block are not weighed
// against the tuned kernels of another).
LayoutFromLog layout_from_log(const graph::Graph& graph, const Target& target, graph::LayoutChoice layout,
                              const tuning_db::Database& db, MachineMatch match = MachineMatch::ThisMachine);

}  // namespace temper::search
