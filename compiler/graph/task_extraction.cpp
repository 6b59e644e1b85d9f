#include "compiler/graph/task_extraction.h"

#include <algorithm>
#include <map>
#include <optional>

#include "compiler/graph/graph_ops_common.h"
#include "compiler/graph/pass_fold_batch_norm.h"
#include "compiler/graph/pass_remove_identity.h"
#include "compiler/ir/error.h"
#include "schedule_space/template.h"

namespace temper::graph {
namespace {

using detail::has_input;
using detail::ints_attr;
using Params = std::vector<std::pair<std::string, std::string>>;

// The workload of a node, or nullopt with why_not set.
struct Mapping {
  std::optional<ops::Workload> workload;
  std::string why_not;
};

Mapping refuse(std::string why) {
  return Mapping{std::nullopt, std::move(why)};
}

std::string pair_text(int64_t a, int64_t b) {
  return str(a, "x", b);
}

Mapping map_conv(const Graph& graph, const Node& node) {
  const TensorType& x = graph.value(node.inputs[0]).type;
  const TensorType& w = graph.value(node.inputs[1]).type;
  if (x.shape.size() != 4) return refuse(str("input ", x.to_string(), ": only 2-D convolutions are tuned"));
  if (x.dtype != DataType::float32()) return refuse(str("input ", x.to_string(), ": only float32 is tuned"));
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], width = x.shape[3];
  int64_t k = w.shape[0], r = w.shape[2], s = w.shape[3];
  std::vector<int64_t> strides = ints_attr(node, "strides", 2, 1);
  std::vector<int64_t> dilations = ints_attr(node, "dilations", 2, 1);
  std::vector<int64_t> pads = ints_attr(node, "pads", 4, 0);  // ONNX: top, left, bottom, right
  std::string auto_pad = node.attrs.get_string_or("auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    pads.assign(4, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // The padding that makes each output extent ceil(in / stride), the extra one at the end
    // (UPPER) or the start (LOWER): shape inference's rule.
    int64_t in[2] = {h, width}, kernel[2] = {r, s};
    for (int d = 0; d < 2; ++d) {
      int64_t effective = dilations[d] * (kernel[d] - 1) + 1;
      int64_t out = (in[d] + strides[d] - 1) / strides[d];
      int64_t total = std::max<int64_t>(0, (out - 1) * strides[d] + effective - in[d]);
      pads[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[d + 2] = total - pads[d];
    }
  }
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
    return Mapping{ops::Workload::make("conv2d", common), ""};
  }
  if (groups == c && k % c == 0) {
    common.push_back({"multiplier", str(k / c)});
    return Mapping{ops::Workload::make("depthwise_conv2d", common), ""};
  }
  // Grouped convolutions other than depthwise: the workload says so and Task::create
  // decides whether a template serves them.
  common.push_back({"K", str(k)});
  common.push_back({"groups", str(groups)});
  return Mapping{ops::Workload::make("conv2d", common), ""};
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
  if (!trans_b) return Mapping{ops::Workload::make("matmul", params), ""};
  // dense adds a bias[N]; any other C is added by the kernel's epilogue.
  bool bias = false;
  if (has_input(node, 2) && node.attrs.get_float_or("beta", 1.0) == 1.0) {
    const std::vector<int64_t>& c = graph.value(node.inputs[2]).type.shape;
    bias = c == std::vector<int64_t>{n} || c == std::vector<int64_t>{1, n};
  }
  params.push_back({"bias", bias ? "1" : "0"});
  return Mapping{ops::Workload::make("dense", params), ""};
}

Mapping map_matmul(const Graph& graph, const Node& node) {
  const TensorType& a = graph.value(node.inputs[0]).type;
  const TensorType& b = graph.value(node.inputs[1]).type;
  if (a.shape.size() != 2 || b.shape.size() != 2) {
    return refuse(str("inputs ", a.to_string(), " and ", b.to_string(), ": only 2-D MatMuls are tuned"));
  }
  if (a.dtype != DataType::float32()) return refuse(str("input ", a.to_string(), ": only float32 is tuned"));
  return Mapping{
      ops::Workload::make("matmul", {{"M", str(a.shape[0])}, {"N", str(b.shape[1])}, {"K", str(a.shape[1])}}), ""};
}

}  // namespace

std::vector<ExtractedTask> extract_tasks(const Graph& graph, const Target& target, std::vector<std::string>* skipped) {
  Graph g = graph;
  remove_identity(g);
  fold_batch_norm(g);

  std::vector<ExtractedTask> tasks;
  std::map<std::string, size_t> index;         // workload string -> position in tasks
  std::map<std::string, std::string> refused;  // workload string -> why Task::create refused it
  auto skip = [&](const Node& node, const std::string& why) {
    if (skipped) skipped->push_back(str("node '", node.name, "' (", node.op, "): ", why));
  };
  for (const Node& node : g.nodes()) {
    Mapping m;
    if (node.op == "Conv") {
      m = map_conv(g, node);
    } else if (node.op == "Gemm") {
      m = map_gemm(g, node);
    } else if (node.op == "MatMul") {
      m = map_matmul(g, node);
    } else {
      continue;
    }
    if (!m.workload) {
      skip(node, m.why_not);
      continue;
    }
    std::string key = m.workload->to_string();
    if (!index.count(key) && !refused.count(key)) {
      try {
        schedule_space::Task::create(*m.workload, target);
        index[key] = tasks.size();
        tasks.push_back(ExtractedTask{*m.workload, 0, {}});
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

}  // namespace temper::graph
