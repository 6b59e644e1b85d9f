#include "compiler/graph/memory_plan.h"

#include <algorithm>

namespace temper::graph {
namespace {

int64_t bytes_of(const PlannedArray& a) {
  return a.type.size() * a.type.dtype.bytes();
}

bool is_intermediate(const PlannedArray& a) {
  return a.kind == PlannedArray::Kind::Intermediate;
}

}  // namespace

void plan_memory(ExecutionPlan& plan) {
  int num_arrays = static_cast<int>(plan.arrays.size());
  std::vector<int> last_read(num_arrays, -1);
  for (int c = 0; c < static_cast<int>(plan.calls.size()); ++c) {
    const KernelCall& call = plan.calls[c];
    for (int i = 0; i < call.num_inputs; ++i) last_read[call.args[i]] = c;
  }
  plan.storage_bytes.clear();
  std::vector<bool> block_free;
  for (PlannedArray& a : plan.arrays) a.storage = -1;

  for (int c = 0; c < static_cast<int>(plan.calls.size()); ++c) {
    const KernelCall& call = plan.calls[c];
    // Blocks for what the call writes, while what it reads is still held.
    for (size_t i = call.num_inputs; i < call.args.size(); ++i) {
      PlannedArray& a = plan.arrays[call.args[i]];
      if (!is_intermediate(a) || a.storage >= 0) continue;
      int64_t need = bytes_of(a);
      int best_fit = -1, largest = -1;
      for (int b = 0; b < static_cast<int>(block_free.size()); ++b) {
        if (!block_free[b]) continue;
        int64_t size = plan.storage_bytes[b];
        if (size >= need && (best_fit < 0 || size < plan.storage_bytes[best_fit])) best_fit = b;
        if (largest < 0 || size > plan.storage_bytes[largest]) largest = b;
      }
      int block = best_fit >= 0 ? best_fit : largest;
      if (block < 0) {
        block = static_cast<int>(plan.storage_bytes.size());
        plan.storage_bytes.push_back(0);
        block_free.push_back(true);
      }
      plan.storage_bytes[block] = std::max(plan.storage_bytes[block], need);
      block_free[block] = false;
      a.storage = block;
    }
    // Blocks whose array this call read for the last time (or an array nothing reads).
    for (int id : call.args) {
      const PlannedArray& a = plan.arrays[id];
      if (is_intermediate(a) && a.storage >= 0 && last_read[id] <= c) block_free[a.storage] = true;
    }
  }
}

int64_t unplanned_intermediate_bytes(const ExecutionPlan& plan) {
  int64_t total = 0;
  for (const PlannedArray& a : plan.arrays) {
    if (is_intermediate(a) && a.storage >= 0) total += bytes_of(a);
  }
  return total;
}

}  // namespace temper::graph
