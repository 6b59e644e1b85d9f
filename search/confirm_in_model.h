// The last step of tuning a model: each task's best few schedules, and its template
// default, timed inside builds of the model, where they run between their real
// neighbours. The measurer times a kernel alone; in the model it reads activations the
// other core has just written, and the weights of the kernels around it share the
// caches with its own, so a schedule that wins alone can lose there (a 1x1 conv whose
// channel-block split reads rows the other thread wrote; a dense layer tuned against a
// weight the measurer evicts to memory, which the model keeps in the last-level cache).
//
// Builds are made by rank: the k-th build gives every task its log's k-th best schedule
// (its best when it has fewer), the last one every task its template default. They run
// in many short interleaved rounds with each kernel call timed; a task's time in a round
// is the median over the round's runs of its kernels' summed times. A candidate replaces
// the log's best when, in the median round, it ran faster than the log's best by the
// switch margin (this host's slow spells hit whole rounds, which the comparison within a
// round leaves out). A last set of rounds times the whole model built with the choices
// against the log's best and the defaults; when it runs slower than the better of the
// two (in the median round), that one's schedules are kept instead: a log's choices do
// not make its model slower than the model built without them.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/graph/pass_nchwc_layout.h"
#include "compiler/target/target.h"
#include "search/apply_history_best.h"
#include "tuning_db/database.h"
#include "tuning_db/model_choice.h"

namespace temper::search {

struct InModelOptions {
  int candidates = 5;     // the log's best schedules tried per task, besides the default
  int rounds = 30;        // interleaved rounds over the builds
  double round_s = 0.03;  // each build's runs per round, in seconds of its latency (3 to 20 runs)
  // How much faster than the log's best (in the median round) another candidate must run
  // to replace it.
  double switch_margin = 0.02;
  double margin = 0;       // how much slower the chosen build may run than the better of the others
  std::string model_name;  // for the choices' `model` field and the messages
  MachineMatch match = MachineMatch::ThisMachine;
};

// One task of the model, as the rounds found it.
struct InModelTask {
  std::string workload;
  std::string picked;               // "log rank 1" (the log's best), "log rank 2", "template default"
  double picked_s = 0;              // its kernels' median time per run of the model
  double log_best_s = 0;            // the log's best's
  std::optional<double> default_s;  // the default's (none when the build failed to apply it)
};

struct InModelResult {
  std::vector<InModelTask> tasks;               // the tasks with a record in the log, in plan order
  std::vector<tuning_db::ModelChoice> choices;  // what to commit: one per task of `tasks`
  // Whole-model medians of the last rounds, seconds.
  double chosen_latency_s = 0, log_best_latency_s = 0, default_latency_s = 0;
  // "in-model choices", or the build kept instead: "the log's best" / "the template defaults".
  std::string kept;
};

// Runs the rounds on graph for target with layout (as a build would lay it out: the
// log's block where the layout leaves it open); progress lines go to `progress` when set.
// Nothing is committed: the caller commits result.choices. A model with no task in the
// log gives an empty result.
InModelResult confirm_in_model(const graph::Graph& graph, const Target& target, graph::LayoutChoice layout,
                               const tuning_db::Database& db, const InModelOptions& options, std::ostream* progress);

}  // namespace temper::search
