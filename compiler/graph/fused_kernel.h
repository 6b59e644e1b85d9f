// One fused group (fusion.h) as one compiled kernel. The group's nodes' te computes are
// composed -- each node's compute reads the te tensors earlier nodes of the group made,
// and placeholders only for the group's external inputs -- and made into one PrimFunc
// whose parameters are those external inputs (in order of first use), then the values
// that leave the group (read by a node outside it, graph outputs, or read by no node at
// all), in node order.
//
// Schedule: every intermediate stage that is not a reduction and feeds no reduction is
// inlined into its consumer (node_kernel.h's rule, applied across the whole group), so an
// elementwise epilogue is computed where it reads the anchor's result and an injective
// chain becomes one loop nest; then the CPU default schedule (cpu_schedules.h) tiles
// whatever stages are left, each on its own (the anchor's reduction and the epilogue
// reading it), a step that does not apply being skipped.
#pragma once

#include "compiler/graph/fusion.h"
#include "compiler/graph/graph.h"
#include "compiler/graph/node_kernel.h"
#include "compiler/target/target.h"

namespace temper::graph {

// The kernel's args: the external inputs, then the outputs (see the file comment); run it
// with run_node. UserError for an op without a compute (the node is named).
NodeKernel compile_group(const Graph& graph, const FusedGroup& group, const Target& target);

}  // namespace temper::graph
