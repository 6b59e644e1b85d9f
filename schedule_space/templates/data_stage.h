// The schedule the CPU templates give a data-movement stage of their own -- padding,
// packing a weight, transposing B, unpacking an output: a loop nest that only copies.
#pragma once

#include <string>

#include "compiler/schedule/schedule.h"

namespace temper::schedule_space {

// The stage's loops outside the innermost, at most two of them, fused and parallel; its
// innermost loop vectorized by `lanes` when that divides it.
void schedule_data_stage(Schedule& s, const std::string& block, int lanes);

}  // namespace temper::schedule_space
