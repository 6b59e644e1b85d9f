// One fused group (fusion.h) as one kernel. The group's nodes' te computes are composed --
// each node's compute reads the te tensors earlier nodes of the group made, and
// placeholders only for the group's external inputs -- and made into one PrimFunc whose
// parameters are those external inputs (in order of first use), then the values that
// leave the group (read by a node outside it, graph outputs, or read by no node at all),
// in node order.
//
// Schedule: every intermediate stage that is not a reduction and feeds no reduction is
// inlined into its consumer (node_kernel.h's rule, applied across the whole group), so an
// elementwise epilogue is computed where it reads the anchor's result and an injective
// chain becomes one loop nest; then the CPU default schedule (cpu_schedules.h) tiles
// whatever stages are left, each on its own (the anchor's reduction and the epilogue
// reading it), a step that does not apply being skipped.
//
// When a tuned kernel computes the anchor (executor.h), the group's kernel is what is left:
// it reads the anchor's product (AnchorProduct) instead of computing it.
#pragma once

#include <string>
#include <vector>

#include "compiler/graph/fusion.h"
#include "compiler/graph/graph.h"
#include "compiler/graph/node_kernel.h"
#include "compiler/target/target.h"

namespace temper::graph {

// A kernel scheduled but not built: build() it, alone or with others into one module.
struct ScheduledKernel {
  // The arrays passed, in parameter order: value ids, or the id the caller gave an
  // AnchorProduct (which is no graph value).
  std::vector<int> args;
  int num_inputs = 0;  // the args read; the rest are written
  PrimFunc func;
  PrimFunc inlined;  // func before the CPU default schedule: what epilogue fusion schedules
  std::string workload;  // the tuning task it runs, if any (KernelCall::workload)
};

// The anchor's result, computed by another kernel into the array `id`: the anchor node's
// output itself (is_output), or the product its GraphOp::epilogue turns into the output.
struct AnchorProduct {
  int id = -1;
  bool is_output = false;
  // The shape the kernel wrote it in: the anchor's output shape, or another view of the
  // same elements (a matmul's [128, 768] for a [1, 128, 768] MatMul), read through a reshape.
  std::vector<int64_t> shape;
};

// "<prefix><anchor index>_<anchor name>", the prefix "n" for a lone node and "f" for a
// fused group unless given: the index keeps names unique where sanitising made two node
// names alike.
std::string kernel_name(const Graph& graph, const FusedGroup& group, const char* prefix = nullptr);

// UserError for an op without a compute (the node is named). The function is named name.
ScheduledKernel schedule_group(const Graph& graph, const FusedGroup& group, const Target& target,
                               const std::string& name, const AnchorProduct* product = nullptr);
// schedule_group built on its own; run it with run_node.
NodeKernel compile_group(const Graph& graph, const FusedGroup& group, const Target& target);

}  // namespace temper::graph
