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

// A padding stage where a window template's "pad" knob puts it: "inline" in its consumer's
// loads, "tile" computed under the consumer's parallel loop `tiles` for what one iteration
// reads, "root" a data stage of its own (schedule_data_stage).
void place_padding(Schedule& s, const std::string& block, const std::string& where, LoopRV tiles, int lanes);

// The extent of a loop, which in a template's schedule is always a constant.
int64_t loop_extent(Schedule& s, LoopRV loop);

}  // namespace temper::schedule_space
