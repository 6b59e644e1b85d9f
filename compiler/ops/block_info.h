// What hand-written schedule rules (ops/cpu_schedules, ops/gpu_schedules) need to know
// about the blocks of a program, read off its current state, and how they take a step
// that may not apply.
#pragma once

#include <string>
#include <vector>

#include "compiler/schedule/schedule.h"

namespace temper::ops {

// What the rules need to know about a block, read off the current program.
struct BlockInfo {
  std::string name;
  bool is_reduction = false;
  bool writes_param = false;
  Buffer output;
  std::vector<std::string> consumers;  // blocks that read `output`
  // Per loop around the block (outermost first): does it bind a reduction variable?
  std::vector<bool> loop_is_reduce;
};

// The blocks of f in program order.
std::vector<BlockInfo> collect_blocks(const PrimFunc& f);
// The block of that name in s's current program.
BlockInfo block_info(const Schedule& s, const std::string& name);

// Runs one schedule step; an illegal step leaves the schedule unchanged and is skipped.
template <typename Fn>
bool try_step(Fn&& fn) {
  try {
    fn();
    return true;
  } catch (const ScheduleError&) {
    return false;
  }
}

}  // namespace temper::ops
