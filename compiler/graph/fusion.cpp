#include "compiler/graph/fusion.h"

#include <algorithm>

#include "compiler/graph/graph_ops.h"

namespace temper::graph {
namespace {

OpPattern pattern_of(const Node& node) {
  const GraphOp* op = find_graph_op(node.op);
  // Evaluated ops (Constant, Shape) are never compiled, so nothing can join them.
  if (!op || op->evaluate || node.outputs.size() != 1) return OpPattern::Opaque;
  return op->pattern;
}

bool is_elementwise_or_broadcast(OpPattern p) {
  return p == OpPattern::Elementwise || p == OpPattern::Broadcast;
}
bool is_injective_like(OpPattern p) {
  return is_elementwise_or_broadcast(p) || p == OpPattern::Injective;
}

// Whether a group whose anchor has pattern `group` may take a node of pattern `joining`.
bool can_absorb(OpPattern group, OpPattern joining) {
  switch (group) {
    case OpPattern::OutFusable:
    case OpPattern::Reduction:
      return is_elementwise_or_broadcast(joining);
    case OpPattern::Elementwise:
    case OpPattern::Broadcast:
    case OpPattern::Injective:
      return is_injective_like(joining);
    case OpPattern::Opaque:
      return false;
  }
  return false;
}

// How strongly a pattern anchors a group (see FusedGroup::anchor).
int rank(OpPattern p) {
  switch (p) {
    case OpPattern::Elementwise:
      return 0;
    case OpPattern::Broadcast:
      return 1;
    case OpPattern::Injective:
      return 2;
    case OpPattern::OutFusable:
    case OpPattern::Reduction:
    case OpPattern::Opaque:
      return 3;
  }
  return 3;
}

}  // namespace

std::vector<FusedGroup> partition_for_fusion(const Graph& graph) {
  const std::vector<Node>& nodes = graph.nodes();
  std::vector<int> uses(graph.values().size(), 0);
  for (const Node& node : nodes) {
    for (ValueId v : node.inputs) {
      if (v != kNoValue) ++uses[v];
    }
  }
  std::vector<bool> is_output(graph.values().size(), false);
  for (ValueId v : graph.outputs()) is_output[v] = true;

  std::vector<FusedGroup> groups;
  std::vector<OpPattern> group_pattern;  // per group: its anchor's pattern
  std::vector<int> group_of(nodes.size(), -1);
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
    OpPattern pattern = pattern_of(nodes[n]);
    int joined = -1;
    for (ValueId v : nodes[n].inputs) {
      if (v == kNoValue || uses[v] != 1 || is_output[v]) continue;
      int producer = graph.value(v).producer;
      if (producer < 0 || pattern_of(nodes[producer]) == OpPattern::Opaque) continue;
      int g = group_of[producer];
      if (groups[g].nodes.back() != producer || !can_absorb(group_pattern[g], pattern)) continue;
      joined = g;
      break;
    }
    if (joined < 0) {
      groups.push_back(FusedGroup{{n}, n});
      group_pattern.push_back(pattern);
      group_of[n] = static_cast<int>(groups.size()) - 1;
      continue;
    }
    FusedGroup& group = groups[joined];
    group.nodes.push_back(n);
    group_of[n] = joined;
    if (rank(pattern) > rank(group_pattern[joined])) {
      group.anchor = n;
      group_pattern[joined] = pattern;
    }
  }
  // Groups were opened in the order of their first node; they run in the order of their last.
  std::sort(groups.begin(), groups.end(),
            [](const FusedGroup& a, const FusedGroup& b) { return a.nodes.back() < b.nodes.back(); });
  return groups;
}

}  // namespace temper::graph
