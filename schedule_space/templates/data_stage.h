// The schedule the CPU templates give a data-movement stage of their own -- padding,
// packing a weight, transposing B, unpacking an output: a loop nest that only copies.
#pragma once

#include <string>

#include "compiler/ops/workload.h"
#include "compiler/schedule/schedule.h"

namespace temper::schedule_space {

// The stage's loops outside the innermost, at most two of them, fused and parallel; its
// innermost loop vectorized by `lanes` when that divides it.
void schedule_data_stage(Schedule& s, const std::string& block, int lanes);

// Whether a windowed op's workload pads its input (a nonzero `pad`): its PrimFunc then
// has a padding stage, <op>_pad, which the templates inline or schedule.
bool has_padding(const ops::Workload& w);

}  // namespace temper::schedule_space
