#include "schedule_space/stage_analysis.h"

#include <algorithm>
#include <set>

#include "compiler/ir/functor.h"
#include "compiler/ops/block_info.h"

namespace temper::schedule_space {
namespace {

// Math a consumer would repeat for every use if the stage were inlined into it.
bool is_expensive_call(const CallNode* call) {
  static const std::set<std::string> cheap = {"fabs", "abs", "floor", "ceil", "round", "trunc", "fmin", "fmax"};
  return call->call_kind == CallKind::Pure && !cheap.count(call->name);
}

const BlockNode* find_block(const PrimFunc& f, const std::string& name) {
  const BlockNode* found = nullptr;
  post_order_visit(f.body, [&](const Node* n) {
    if (n->kind == NodeKind::Block && static_cast<const BlockNode*>(n)->name == name) {
      found = static_cast<const BlockNode*>(n);
    }
  });
  TEMPER_CHECK(found != nullptr, "no block ", name);
  return found;
}

// The variables an expression uses.
std::set<const VarNode*> vars_of(const Expr& e) {
  std::set<const VarNode*> vars;
  post_order_visit(e, [&](const Node* n) {
    if (n->kind == NodeKind::Var) vars.insert(static_cast<const VarNode*>(n));
  });
  return vars;
}

int64_t extent_of(const IterVar& iv) {
  const int64_t* e = as_const_int(iv.dom.extent);
  return e ? *e : 1;
}

std::optional<int> packable_read(const BlockNode* block) {
  std::vector<const VarNode*> spatial;
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind == IterKind::Spatial && extent_of(iv) > 1) spatial.push_back(iv.var.get());
  }
  if (spatial.empty()) return std::nullopt;
  for (size_t r = 0; r < block->reads.size(); ++r) {
    const BufferRegion& read = block->reads[r];
    if (read.region.empty() || (!block->writes.empty() && read.buffer.same_as(block->writes[0].buffer))) continue;
    std::set<const VarNode*> used;
    for (const Range& range : read.region) used.merge(vars_of(range.min));
    bool misses_one = std::any_of(spatial.begin(), spatial.end(), [&](const VarNode* v) { return !used.count(v); });
    if (misses_one && vars_of(read.region.back().min).count(spatial.back())) return static_cast<int>(r);
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> stage_names(const Schedule& s) {
  std::vector<std::string> names;
  for (const ops::BlockInfo& b : ops::collect_blocks(s.func())) names.push_back(b.name);
  return names;
}

StageFacts stage_facts(const Schedule& s, const std::string& name) {
  ops::BlockInfo info = ops::block_info(s, name);
  const BlockNode* block = find_block(s.func(), name);
  StageFacts facts;
  facts.name = name;
  facts.is_reduction = info.is_reduction;
  facts.writes_param = info.writes_param;
  facts.consumers = info.consumers;
  facts.loop_is_reduce = info.loop_is_reduce;
  facts.num_reads = static_cast<int>(block->reads.size());
  for (const IterVar& iv : block->iter_vars) {
    (iv.kind == IterKind::Reduce ? facts.reduce_size : facts.spatial_size) *= extent_of(iv);
  }

  bool branches = false, expensive = false;
  post_order_visit(block->body, [&](const Node* n) {
    branches |= n->kind == NodeKind::Select || n->kind == NodeKind::IfThenElse;
    if (n->kind == NodeKind::Call) expensive |= is_expensive_call(static_cast<const CallNode*>(n));
  });
  facts.strictly_inlinable =
      !facts.is_reduction && !facts.writes_param && !facts.consumers.empty() && !branches && !expensive;

  // Data reuse: count the (read, spatial axis of extent > 1) pairs where the read does not
  // use the axis; a reduction with one such pair reuses data across that axis.
  if (facts.is_reduction) {
    int missing = 0;
    for (const BufferRegion& read : block->reads) {
      if (!block->writes.empty() && read.buffer.same_as(block->writes[0].buffer)) continue;
      std::set<const VarNode*> used;
      for (const Range& r : read.region) used.merge(vars_of(r.min));
      for (const IterVar& iv : block->iter_vars) {
        if (iv.kind == IterKind::Spatial && extent_of(iv) > 1 && !used.count(iv.var.get())) ++missing;
      }
    }
    facts.has_data_reuse = missing >= 1;
  }
  if (facts.has_data_reuse) facts.packable_read = packable_read(block);
  return facts;
}

bool is_elementwise_consumer(const Schedule& s, const std::string& producer, const std::string& consumer) {
  const BlockNode* p = find_block(s.func(), producer);
  const BlockNode* c = find_block(s.func(), consumer);
  if (c->init.defined() || p->writes.empty()) return false;
  std::vector<const VarNode*> spatial;
  for (const IterVar& iv : c->iter_vars) {
    if (iv.kind == IterKind::Spatial) spatial.push_back(iv.var.get());
  }
  const Buffer& out = p->writes[0].buffer;
  bool reads_it = false;
  for (const BufferRegion& read : c->reads) {
    if (!read.buffer.same_as(out)) continue;
    if (read.region.size() != spatial.size()) return false;
    for (size_t d = 0; d < spatial.size(); ++d) {
      if (read.region[d].min.get() != spatial[d] || !is_const_int(read.region[d].extent, 1)) return false;
    }
    reads_it = true;
  }
  return reads_it;
}

}  // namespace temper::schedule_space
