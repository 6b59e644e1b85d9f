// Task extraction: the distinct tunable operators of a model, each with how often the
// model runs it (TVM's extract_from_program for AutoTVM). A tuning job over a model tunes
// these workloads; a build looks each one up in the log.
//
// The graph is first rewritten as the fused executor rewrites it for the target
// (optimize_graph, on a copy): a Conv that absorbs a BatchNormalization is one task, and
// the BN none; on a CPU the convs are in the blocked layout. Then each node that a
// template serves becomes a workload:
//
//   NchwcConv                       conv2d_nchwc:N,C,H,W,K,R,S,stride,pad,dilation,
//                                   in_block,out_block (C, K: the logical channels);
//                                   group_conv2d_nchwc:...,groups when grouped
//   NchwcDepthwiseConv              depthwise_conv2d_nchwc:N,C,H,W,R,S,stride,pad,dilation,block
//   NchwcDepthwisePointwiseConv     depthwise_pointwise_nchwc:N,C,H,W,R,S,stride,pad,dilation,K,
//                                   block,act (the 1x1 conv's bias is the kernel's epilogue)
//   Conv (2-D, float32, NCHW)       conv2d:N,C,H,W,K,R,S,stride,pad (top x left x bottom x
//                                   right),dilation,groups; depthwise_conv2d (multiplier
//                                   K/C) when group == C. The bias is the kernel's epilogue.
//   Gemm (transA=0, alpha=1)        transB=1: dense:M,N,K (weight [N,K]), bias=1 when C is
//                                   a per-column vector [N] or [1,N] and beta=1;
//                                   transB=0: matmul:M,N,K (C, if any, is an epilogue).
//   MatMul, B 2-D                   matmul:M,N,K, A's leading extents folded into M (a
//                                   [1, 128, 768] x [768, 3072] projection is M=128)
//   MatMul, same batch extents      batch_matmul:B,M,N,K over the product of the batch
//                                   extents ([1, 12, 128, 64] x [1, 12, 64, 128])
//   Attention (the fused chain of   attention:B,S,T,D,E,scale,mask_rows over the product of
//   pass_fuse_attention.h)          the batch extents (a BERT layer's 12 heads: B=12)
//   Softmax (float32; before opset  softmax:shape,axis
//   13 over the last axis only)
//   LayerNormalization (Scale and   layer_norm:shape,axis,eps
//   B of the normalised shape)
//   Transpose                       transpose:shape,perm
//
// Only a node that anchors its fused group (fusion.h) is a task: a build computes the
// anchor with its task's kernel, and a Transpose that joined an injective chain after a
// Reshape is no kernel of its own. The last three have no template: the auto-scheduler
// tunes them (a model job gives them its space whatever --space says of the others).
// Identical workloads merge into one task with a count and the nodes' names. A node of
// these ops that no workload or template can express (a 3-D Conv, a Gemm with transA, a
// MatMul whose batch extents broadcast) is left out with one line saying why; every other
// op (elementwise chains, reshapes, pooling, ...) is not a tuning task and is left out silently.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/graph/pass_nchwc_layout.h"
#include "compiler/ops/workload.h"
#include "compiler/target/target.h"

namespace temper::graph {

// How one node runs as its task's kernel: the kernel (the workload's op, scheduled from the
// log) reads the node inputs `inputs` and writes either the node's output or, for a node
// whose op adds an epilogue (Conv's bias, Gemm's beta C; GraphOp::epilogue), the product
// it is applied to. The workload's arrays are the node's with the same elements in the
// same order (a [1, 128, 768] input is the matmul's [128, 768] A).
struct NodeTask {
  ops::Workload workload;
  std::vector<int> inputs;  // indices into node.inputs, in the kernel's parameter order
  bool writes_output = false;
};

// The task of node, or nullopt with why_not (when not null) set: for ops no workload
// serves (not Conv, Gemm or MatMul) why_not is left empty. Does not ask the templates.
std::optional<NodeTask> node_task(const Graph& graph, const Node& node, std::string* why_not = nullptr);

struct ExtractedTask {
  ops::Workload workload;
  int count = 0;                   // nodes running it
  std::vector<std::string> nodes;  // their names, in graph order
};

// The tasks in order of first occurrence. Each workload a template serves is checked with
// schedule_space::Task::create for target; one it refuses is skipped. skipped (when not
// null) receives "node 'NAME' (OP): reason" for every Conv, Gemm or MatMul left out.
// Expects a verified graph with inferred types (import_onnx's result).
// layout: as the build that will apply the log lays out the graph (execution_plan.h).
std::vector<ExtractedTask> extract_tasks(const Graph& graph, const Target& target,
                                         std::vector<std::string>* skipped = nullptr,
                                         LayoutChoice layout = LayoutChoice::Blocked);

// A model's tasks under each layout a build may choose (the blocks of
// nchwc_block_candidates): the tasks of every layout, a workload two layouts share (a
// Gemm, a Softmax) once, and how often each layout's build runs each task. Tuning compares
// the layouts by these counts (search/task_scheduler.h); a build with a log takes the one
// its best records estimate fastest (search/layout_from_log.h).
struct LayoutTasks {
  std::vector<ExtractedTask> tasks;         // in order of first occurrence, layout by layout; count: in the first
                                            // layout that runs the task
  std::vector<LayoutChoice> layouts;        // each with its block fixed (block 0 for NCHW)
  std::vector<std::vector<int>> counts;     // [layout][task]: nodes running the task in that layout's build, or 0
};

// extract_tasks for each candidate block of `layout` on target; skipped as extract_tasks
// fills it, each line once. A model whose tasks are the same in every block (no conv) has
// one way, the first candidate's.
LayoutTasks extract_tasks_by_layout(const Graph& graph, const Target& target, std::vector<std::string>* skipped = nullptr,
                                    LayoutChoice layout = LayoutChoice::Blocked);

}  // namespace temper::graph
