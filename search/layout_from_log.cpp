#include "search/layout_from_log.h"

#include <cstdio>
#include <optional>
#include <vector>

#include "compiler/graph/task_extraction.h"
#include "compiler/ir/duration.h"
#include "compiler/ir/error.h"

namespace temper::search {

LayoutFromLog layout_from_log(const graph::Graph& graph, const Target& target, graph::LayoutChoice layout,
                              const tuning_db::Database& db, MachineMatch match) {
  std::vector<int64_t> blocks = graph::nchwc_block_candidates(target, layout);
  if (blocks.size() < 2) return {layout, ""};
  graph::LayoutTasks model = graph::extract_tasks_by_layout(graph, target, nullptr, layout);
  if (model.layouts.size() < 2) return {layout, ""};  // no task depends on the block
  std::vector<std::optional<double>> estimates;
  std::vector<int> missing;
  for (size_t w = 0; w < model.layouts.size(); ++w) {
    double total = 0;
    int lacking = 0;
    for (size_t t = 0; t < model.tasks.size(); ++t) {
      if (model.counts[w][t] == 0) continue;
      std::vector<tuning_db::TuningRecord> best =
          best_records(db, tuning_db::WorkloadKey::from(model.tasks[t].workload), target, 1, match).best;
      if (best.empty()) {
        ++lacking;
      } else {
        total += model.counts[w][t] * best[0].mean;
      }
    }
    estimates.push_back(lacking == 0 ? std::optional<double>(total) : std::nullopt);
    missing.push_back(lacking);
  }
  std::optional<size_t> fastest;
  for (size_t w = 0; w < estimates.size(); ++w) {
    if (estimates[w] && (!fastest || *estimates[w] < *estimates[*fastest])) fastest = w;
  }
  if (!fastest) {
    std::string lacking;
    for (size_t w = 0; w < model.layouts.size(); ++w) {
      lacking += str(w == 0 ? "" : ", ", missing[w], " of ", model.layouts[w].activations());
    }
    return {model.layouts[0], str(model.layouts[0].activations(), ", the target's: every block has tasks the log lacks (",
                                  lacking, ")")};
  }
  std::string others;
  for (size_t w = 0; w < model.layouts.size(); ++w) {
    if (w == *fastest) continue;
    others += str(others.empty() ? "" : ", ", estimates[w] ? format_ms(*estimates[w]) : str(missing[w], " tasks untuned"),
                  " for ", model.layouts[w].activations());
  }
  return {model.layouts[*fastest], str(model.layouts[*fastest].activations(), ", the log's fastest: ",
                                       format_ms(*estimates[*fastest]), " estimated against ", others)};
}

}  // namespace temper::search
