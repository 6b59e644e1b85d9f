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

bool is_accumulator(const BlockNode* block, const BufferRegion& read) {
  return !block->writes.empty() && read.buffer.same_as(block->writes[0].buffer);
}

std::set<const VarNode*> vars_of(const BufferRegion& read) {
  std::set<const VarNode*> used;
  for (const Range& range : read.region) used.merge(vars_of(range.min));
  return used;
}

// The dimensions 0..ndim-1 with `dim` moved last; empty when it is last already.
std::vector<int> layout_with_last(int ndim, int dim) {
  if (dim == ndim - 1) return {};
  std::vector<int> layout;
  for (int d = 0; d < ndim; ++d) {
    if (d != dim) layout.push_back(d);
  }
  layout.push_back(dim);
  return layout;
}

// The first read that misses a spatial axis and has a dimension indexed by `axis`, and
// the layout that makes the last such dimension the copy's last.
VectorAxis packed_read_along(const BlockNode* block, int axis, const std::vector<const VarNode*>& spatial) {
  VectorAxis out;
  out.loop = axis;
  const VarNode* v = block->iter_vars[axis].var.get();
  for (size_t r = 0; r < block->reads.size(); ++r) {
    const BufferRegion& read = block->reads[r];
    if (read.region.empty() || is_accumulator(block, read)) continue;
    std::set<const VarNode*> used = vars_of(read);
    if (std::all_of(spatial.begin(), spatial.end(), [&](const VarNode* s) { return used.count(s); })) continue;
    int dim = -1;
    for (size_t d = 0; d < read.region.size(); ++d) {
      if (vars_of(read.region[d].min).count(v)) dim = static_cast<int>(d);
    }
    if (dim < 0) continue;
    out.packed_read = static_cast<int>(r);
    out.packed_layout = layout_with_last(static_cast<int>(read.region.size()), dim);
    for (size_t k = 0; k < block->iter_vars.size(); ++k) {
      const VarNode* var = block->iter_vars[k].var.get();
      bool is_spatial = std::find(spatial.begin(), spatial.end(), var) != spatial.end();
      if (is_spatial && used.count(var)) out.packed_read_loops.push_back(static_cast<int>(k));
    }
    break;
  }
  if (!block->writes.empty()) {
    const BufferRegion& write = block->writes[0];
    for (size_t d = 0; d < write.region.size(); ++d) {
      if (write.region[d].min.get() == v) {
        out.output_layout = layout_with_last(static_cast<int>(write.region.size()), static_cast<int>(d));
      }
    }
  }
  return out;
}

std::vector<VectorAxis> vector_axes(const BlockNode* block) {
  std::vector<int> spatial_axes;
  std::vector<const VarNode*> spatial;
  std::set<const VarNode*> reduce;
  for (size_t k = 0; k < block->iter_vars.size(); ++k) {
    const IterVar& iv = block->iter_vars[k];
    if (iv.kind == IterKind::Reduce) reduce.insert(iv.var.get());
    if (iv.kind == IterKind::Spatial && extent_of(iv) > 1) {
      spatial_axes.push_back(static_cast<int>(k));
      spatial.push_back(iv.var.get());
    }
  }
  if (spatial.empty()) return {};
  std::vector<VectorAxis> axes = {packed_read_along(block, spatial_axes.back(), spatial)};
  // A window stage: some read index combines the innermost axis with a reduction axis.
  bool window = false;
  for (const BufferRegion& read : block->reads) {
    for (const Range& r : read.region) {
      std::set<const VarNode*> vars = vars_of(r.min);
      window |= vars.count(spatial.back()) &&
                std::any_of(vars.begin(), vars.end(), [&](const VarNode* x) { return reduce.count(x); });
    }
  }
  if (!window) return axes;
  for (size_t k = 0; k + 1 < spatial.size(); ++k) {
    // An axis that alone, among the spatial ones, indexes some read.
    bool alone = std::any_of(block->reads.begin(), block->reads.end(), [&](const BufferRegion& read) {
      if (is_accumulator(block, read)) return false;
      std::set<const VarNode*> used = vars_of(read);
      return used.count(spatial[k]) && std::none_of(spatial.begin(), spatial.end(), [&](const VarNode* s) {
               return s != spatial[k] && used.count(s);
             });
    });
    if (alone) axes.push_back(packed_read_along(block, spatial_axes[k], spatial));
  }
  return axes;
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
      if (is_accumulator(block, read)) continue;
      std::set<const VarNode*> used = vars_of(read);
      for (const IterVar& iv : block->iter_vars) {
        if (iv.kind == IterKind::Spatial && extent_of(iv) > 1 && !used.count(iv.var.get())) ++missing;
      }
    }
    facts.has_data_reuse = missing >= 1;
  }
  if (facts.has_data_reuse) facts.vector_axes = vector_axes(block);
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
    std::set<const Node*> seen;
    for (const Range& r : read.region) {
      const Node* v = r.min.get();  // an axis only if it is one of the spatial variables
      bool is_axis = std::find(spatial.begin(), spatial.end(), v) != spatial.end();
      if (!is_axis || !seen.insert(v).second || !is_const_int(r.extent, 1)) return false;
    }
    reads_it = true;
  }
  return reads_it;
}

}  // namespace temper::schedule_space
