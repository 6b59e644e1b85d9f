#include "compiler/graph/task_extraction.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "compiler/graph/fusion.h"
#include "compiler/graph/graph_ops_common.h"
#include "compiler/graph/optimize.h"
#include "compiler/ir/error.h"
#include "schedule_space/template.h"

namespace temper::graph {
namespace {

using detail::has_input;
using detail::ints_attr;
using Params = std::vector<std::pair<std::string, std::string>>;

// A node's task, or nullopt with why_not set.
struct Mapping {
  std::optional<NodeTask> task;
  std::string why_not;
};

Mapping refuse(std::string why) {
  return Mapping{std::nullopt, std::move(why)};
}

Mapping product_of(ops::Workload workload, std::vector<int> inputs) {
  return Mapping{NodeTask{std::move(workload), std::move(inputs), false}, ""};
}

std::string pair_text(int64_t a, int64_t b) {
  return str(a, "x", b);
}

int64_t product(const std::vector<int64_t>& extents) {
  int64_t p = 1;
  for (int64_t e : extents) p *= e;
  return p;
}

Mapping map_conv(const Graph& graph, const Node& node) {
  const TensorType& x = graph.value(node.inputs[0]).type;
  const TensorType& w = graph.value(node.inputs[1]).type;
  if (x.shape.size() != 4) return refuse(str("input ", x.to_string(), ": only 2-D convolutions are tuned"));
  if (x.dtype != DataType::float32()) return refuse(str("input ", x.to_string(), ": only float32 is tuned"));
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], width = x.shape[3];
  int64_t k = w.shape[0], r = w.shape[2], s = w.shape[3];
  detail::ConvWindow2d window = detail::conv2d_window(graph, node);
  const std::vector<int64_t>& strides = window.strides;
  const std::vector<int64_t>& dilations = window.dilations;
  const std::vector<int64_t>& pads = window.pads;  // top, left, bottom, right
  int64_t groups = node.attrs.get_int_or("group", 1);
  Params common = {{"N", str(n)},
                   {"C", str(c)},
                   {"H", str(h)},
                   {"W", str(width)},
                   {"R", str(r)},
                   {"S", str(s)},
                   {"stride", pair_text(strides[0], strides[1])},
                   {"pad", str(pads[0], "x", pads[1], "x", pads[2], "x", pads[3])},
                   {"dilation", pair_text(dilations[0], dilations[1])}};
  if (groups == 1) {
    common.push_back({"K", str(k)});
    return product_of(ops::Workload::make("conv2d", common), {0, 1});
  }
  if (groups == c && k % c == 0) {
    common.push_back({"multiplier", str(k / c)});
    return product_of(ops::Workload::make("depthwise_conv2d", common), {0, 1});
  }
  // Grouped convolutions other than depthwise: the workload says so and Task::create
  // decides whether a template serves them.
  common.push_back({"K", str(k)});
  common.push_back({"groups", str(groups)});
  return product_of(ops::Workload::make("conv2d", common), {0, 1});
}

// A conv of the blocked layout (pass_nchwc_layout.h): its workload names the blocks.
Mapping map_nchwc_conv(const Graph& graph, const Node& node) {
  const TensorType& x = graph.value(node.inputs[0]).type;
  const std::vector<int64_t>& w = graph.value(node.inputs[1]).type.shape;
  std::vector<int64_t> strides = ints_attr(node, "strides", 2, 1);
  std::vector<int64_t> dilations = ints_attr(node, "dilations", 2, 1);
  std::vector<int64_t> pads = ints_attr(node, "pads", 4, 0);
  if (node.op == "NchwcWinogradConv") {  // W [a, a, Ko, Ci, b, b]
    Params params = {{"N", str(x.shape[0])},
                     {"C", str(node.attrs.get_int("in_channels"))},
                     {"H", str(x.shape[2])},
                     {"W", str(x.shape[3])},
                     {"K", str(node.attrs.get_int("channels"))},
                     {"pad", str(pads[0], "x", pads[1], "x", pads[2], "x", pads[3])},
                     {"block", str(w[5])},
                     {"tile", str(node.attrs.get_int("tile"))}};
    return product_of(ops::Workload::make("conv2d_winograd_nchwc", params), {0, 1});
  }
  Params params = {{"N", str(x.shape[0])},
                   {"C", str(node.attrs.get_int(node.op == "NchwcConv" ? "in_channels" : "channels"))},
                   {"H", str(x.shape[2])},
                   {"W", str(x.shape[3])},
                   {"stride", pair_text(strides[0], strides[1])},
                   {"pad", str(pads[0], "x", pads[1], "x", pads[2], "x", pads[3])},
                   {"dilation", pair_text(dilations[0], dilations[1])}};
  if (node.op == "NchwcDepthwiseConv") {  // W [Cb, R, S, b]
    params.insert(params.end(), {{"R", str(w[1])}, {"S", str(w[2])}, {"block", str(w[3])}});
    return product_of(ops::Workload::make("depthwise_conv2d_nchwc", params), {0, 1});
  }
  if (node.op == "NchwcDepthwisePointwiseConv") {  // Wdw [Cb, R, S, b]; the 1x1 conv's bias is its epilogue
    params[1] = {"C", str(node.attrs.get_int("in_channels"))};
    params.insert(params.end(), {{"R", str(w[1])},
                                 {"S", str(w[2])},
                                 {"K", str(node.attrs.get_int("channels"))},
                                 {"block", str(w[3])},
                                 {"act", node.attrs.get_string_or("activation", "none")}});
    return product_of(ops::Workload::make("depthwise_pointwise_nchwc", params), {0, 1, 2, 3});
  }
  // W [Ko, Ci/Gb, R, S, cb, kb]
  params.insert(params.end(), {{"K", str(node.attrs.get_int("channels"))},
                               {"R", str(w[2])},
                               {"S", str(w[3])},
                               {"in_block", str(w[4])},
                               {"out_block", str(w[5])}});
  int64_t groups = node.attrs.get_int_or("group", 1);
  if (groups == 1) return product_of(ops::Workload::make("conv2d_nchwc", params), {0, 1});
  params.push_back({"groups", str(groups)});
  return product_of(ops::Workload::make("group_conv2d_nchwc", params), {0, 1});
}

Mapping map_gemm(const Graph& graph, const Node& node) {
  const TensorType& a = graph.value(node.inputs[0]).type;
  const TensorType& b = graph.value(node.inputs[1]).type;
  if (a.dtype != DataType::float32()) return refuse(str("input ", a.to_string(), ": only float32 is tuned"));
  if (node.attrs.get_int_or("transA", 0) != 0) return refuse("transA=1: no tuned op reads A transposed");
  double alpha = node.attrs.get_float_or("alpha", 1.0);
  if (alpha != 1.0) return refuse(str("alpha=", alpha, ": the tuned ops compute A B without a scale"));
  bool trans_b = node.attrs.get_int_or("transB", 0) != 0;
  int64_t m = a.shape[0], k = a.shape[1], n = trans_b ? b.shape[0] : b.shape[1];
  Params params = {{"M", str(m)}, {"N", str(n)}, {"K", str(k)}};
  if (!trans_b) return product_of(ops::Workload::make("matmul", params), {0, 1});
  // dense adds a bias[N]; any other C is added by the kernel's epilogue.
  bool bias = false;
  if (has_input(node, 2) && node.attrs.get_float_or("beta", 1.0) == 1.0) {
    const std::vector<int64_t>& c = graph.value(node.inputs[2]).type.shape;
    bias = c == std::vector<int64_t>{n} || c == std::vector<int64_t>{1, n};
  }
  params.push_back({"bias", bias ? "1" : "0"});
  if (!bias) return product_of(ops::Workload::make("dense", params), {0, 1});
  return Mapping{NodeTask{ops::Workload::make("dense", params), {0, 1, 2}, true}, ""};
}

Mapping map_matmul(const Graph& graph, const Node& node) {
  const TensorType& a = graph.value(node.inputs[0]).type;
  const TensorType& b = graph.value(node.inputs[1]).type;
  if (a.dtype != DataType::float32()) return refuse(str("input ", a.to_string(), ": only float32 is tuned"));
  if (a.shape.size() < 2 || b.shape.size() < 2) {
    return refuse(str("inputs ", a.to_string(), " and ", b.to_string(), ": a 1-D operand is not tuned"));
  }
  int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back(), n = b.shape.back();
  std::vector<int64_t> batch_a(a.shape.begin(), a.shape.end() - 2);
  std::vector<int64_t> batch_b(b.shape.begin(), b.shape.end() - 2);
  if (batch_b.empty()) {
    Params params = {{"M", str(product(batch_a) * m)}, {"N", str(n)}, {"K", str(k)}};
    return product_of(ops::Workload::make("matmul", params), {0, 1});
  }
  if (batch_a != batch_b) {
    return refuse(str("inputs ", a.to_string(), " and ", b.to_string(),
                      ": batch extents that broadcast are not tuned (only equal ones, or a 2-D B)"));
  }
  Params params = {{"B", str(product(batch_a))}, {"M", str(m)}, {"N", str(n)}, {"K", str(k)}};
  return product_of(ops::Workload::make("batch_matmul", params), {0, 1});
}

std::string exact_float(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

// Attention (pass_fuse_attention.h): its arrays read in the op's [B, S, D], [B, D, T],
// [B, T, E] (or the heads' layout) and [MB, T] shapes.
Mapping map_attention(const Graph& graph, const Node& node) {
  const std::vector<int64_t>& q = graph.value(node.inputs[0]).type.shape;
  const std::vector<int64_t>& k = graph.value(node.inputs[1]).type.shape;
  const std::vector<int64_t>& v = graph.value(node.inputs[2]).type.shape;
  int64_t heads = node.attrs.get_int_or("heads", 0);
  // The scores' leading extents, their keys, and q's rows and columns.
  std::vector<int64_t> batch =
      heads > 0 ? std::vector<int64_t>{q[0], heads} : std::vector<int64_t>(q.begin(), q.end() - 2);
  int64_t keys = heads > 0 ? k[1] : k.back();
  int64_t rows = q[heads > 0 ? 1 : q.size() - 2];
  int64_t mask_rows = 0;
  std::vector<int> inputs = {0, 1, 2};
  if (has_input(node, 3)) {
    mask_rows = *detail::attention_mask_rows(batch, keys, graph.value(node.inputs[3]).type.shape);
    inputs.push_back(3);
  }
  Params params = {{"B", str(product(batch))},
                   {"S", str(rows)},
                   {"T", str(keys)},
                   {"D", str(q.back())},
                   {"E", str(v.back())},
                   {"scale", exact_float(node.attrs.get_float_or("scale", 1.0))},
                   {"mask_rows", str(mask_rows)},
                   {"heads", str(heads)}};
  return Mapping{NodeTask{ops::Workload::make("attention", params), inputs, true}, ""};
}

// The row reductions and layout ops the auto-scheduler tunes (no template serves them): a
// lone node's op, which reads the node's inputs and writes its output.
Mapping whole_node(ops::Workload workload, std::vector<int> inputs) {
  return Mapping{NodeTask{std::move(workload), std::move(inputs), true}, ""};
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text;
  for (int64_t e : shape) text += (text.empty() ? "" : "x") + str(e);
  return text;
}

Mapping map_softmax(const Graph& graph, const Node& node) {
  const TensorType& x = graph.value(node.inputs[0]).type;
  int64_t rank = static_cast<int64_t>(x.shape.size());
  if (x.dtype != DataType::float32() || rank == 0) return Mapping{};
  int64_t axis = node.attrs.get_int_or("axis", graph.opset >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  // Before opset 13 Softmax runs over all of [axis, rank): the op's one axis only when last.
  if (graph.opset < 13 && axis != rank - 1) return Mapping{};
  return whole_node(ops::Workload::make("softmax", {{"shape", shape_text(x.shape)}, {"axis", str(axis)}}), {0});
}

Mapping map_layer_norm(const Graph& graph, const Node& node) {
  const TensorType& x = graph.value(node.inputs[0]).type;
  int64_t rank = static_cast<int64_t>(x.shape.size());
  if (x.dtype != DataType::float32() || rank == 0 || node.outputs.size() != 1 || !has_input(node, 2)) return Mapping{};
  int64_t axis = node.attrs.get_int_or("axis", -1);
  if (axis < 0) axis += rank;
  // The op's gamma and beta have the normalised dimensions' shape exactly.
  std::vector<int64_t> normalized(x.shape.begin() + axis, x.shape.end());
  for (int i : {1, 2}) {
    if (graph.value(node.inputs[i]).type.shape != normalized) return Mapping{};
  }
  return whole_node(ops::Workload::make("layer_norm", {{"shape", shape_text(x.shape)},
                                                       {"axis", str(axis)},
                                                       {"eps", exact_float(node.attrs.get_float_or("epsilon", 1e-5))}}),
                    {0, 1, 2});
}

Mapping map_transpose(const Graph& graph, const Node& node) {
  const TensorType& x = graph.value(node.inputs[0]).type;
  if (x.dtype != DataType::float32() && x.dtype != DataType::int32()) return Mapping{};
  std::vector<int64_t> perm = node.attrs.get_ints_or("perm", {});
  if (perm.empty()) {
    for (int64_t d = static_cast<int64_t>(x.shape.size()) - 1; d >= 0; --d) perm.push_back(d);
  }
  Params params = {{"shape", shape_text(x.shape)}, {"perm", shape_text(perm)}};
  if (x.dtype == DataType::int32()) params.push_back({"dtype", "int32"});
  return whole_node(ops::Workload::make("transpose", params), {0});
}

Mapping map_node(const Graph& graph, const Node& node) {
  if (node.op == "Attention") return map_attention(graph, node);
  if (node.op == "Softmax") return map_softmax(graph, node);
  if (node.op == "LayerNormalization") return map_layer_norm(graph, node);
  if (node.op == "Transpose") return map_transpose(graph, node);
  if (node.op == "Conv") return map_conv(graph, node);
  if (node.op == "NchwcConv" || node.op == "NchwcDepthwiseConv" || node.op == "NchwcWinogradConv" ||
      node.op == "NchwcDepthwisePointwiseConv") {
    return map_nchwc_conv(graph, node);
  }
  if (node.op == "Gemm") return map_gemm(graph, node);
  if (node.op == "MatMul") return map_matmul(graph, node);
  return Mapping{};
}

}  // namespace

std::optional<NodeTask> node_task(const Graph& graph, const Node& node, std::string* why_not) {
  Mapping m = map_node(graph, node);
  if (!m.task && why_not) *why_not = m.why_not;
  return m.task;
}

std::vector<ExtractedTask> extract_tasks(const Graph& graph, const Target& target, std::vector<std::string>* skipped,
                                         LayoutChoice layout) {
  Graph g = graph;
  optimize_graph(g, graph_passes_for(target, layout));

  std::vector<ExtractedTask> tasks;
  std::map<std::string, size_t> index;         // workload string -> position in tasks
  std::map<std::string, std::string> refused;  // workload string -> why Task::create refused it
  auto skip = [&](const Node& node, const std::string& why) {
    if (skipped) skipped->push_back(str("node '", node.name, "' (", node.op, "): ", why));
  };
  // A build computes a group's anchor with its task's kernel (execution_plan.h): only
  // anchors are tasks (a Transpose inside a chain of injective ops is no kernel of its own).
  std::vector<bool> anchor(g.nodes().size(), false);
  for (const FusedGroup& group : partition_for_fusion(g)) anchor[group.anchor] = true;
  for (int n = 0; n < static_cast<int>(g.nodes().size()); ++n) {
    if (!anchor[n]) continue;
    const Node& node = g.nodes()[n];
    std::string why_not;
    std::optional<NodeTask> m = node_task(g, node, &why_not);
    if (!m) {
      if (!why_not.empty()) skip(node, why_not);
      continue;
    }
    std::string key = m->workload.to_string();
    if (!index.count(key) && !refused.count(key)) {
      try {
        // An op no template serves is the auto-scheduler's; one a template refuses is left out.
        if (schedule_space::find_template(m->workload.op, target)) schedule_space::Task::create(m->workload, target);
        index[key] = tasks.size();
        tasks.push_back(ExtractedTask{m->workload, 0, {}});
      } catch (const UserError& e) {
        refused[key] = e.what();
      }
    }
    if (auto r = refused.find(key); r != refused.end()) {
      skip(node, str(key, ": ", r->second));
      continue;
    }
    ExtractedTask& task = tasks[index.at(key)];
    ++task.count;
    task.nodes.push_back(node.name);
  }
  return tasks;
}

LayoutTasks extract_tasks_by_layout(const Graph& graph, const Target& target, std::vector<std::string>* skipped,
                                    LayoutChoice layout) {
  LayoutTasks out;
  std::map<std::string, size_t> index;  // workload string -> position in out.tasks
  std::set<std::string> seen_skips;
  for (int64_t block : nchwc_block_candidates(target, layout)) {
    LayoutChoice fixed(layout.kind, block);
    std::vector<std::string> layout_skipped;
    std::vector<int> counts(out.tasks.size(), 0);
    for (ExtractedTask& task : extract_tasks(graph, target, &layout_skipped, fixed)) {
      std::string key = task.workload.to_string();
      auto [it, added] = index.emplace(key, out.tasks.size());
      if (added) {
        out.tasks.push_back(task);
        counts.push_back(0);
      }
      counts[it->second] = task.count;
    }
    for (const std::string& line : layout_skipped) {
      if (skipped && seen_skips.insert(line).second) skipped->push_back(line);
    }
    out.layouts.push_back(fixed);
    out.counts.push_back(std::move(counts));
  }
  for (std::vector<int>& counts : out.counts) counts.resize(out.tasks.size(), 0);
  // A model whose tasks do not depend on the block (no conv) has one way.
  bool same =
      std::all_of(out.counts.begin(), out.counts.end(), [&](const std::vector<int>& c) { return c == out.counts[0]; });
  if (same) {
    out.layouts.resize(1);
    out.counts.resize(1);
  }
  return out;
}

}  // namespace temper::graph
