#include "compiler/schedule/schedule_ir.h"

#include <functional>
#include <set>
#include <unordered_set>

#include "compiler/ir/functor.h"
#include "compiler/ir/substitute.h"
#include "compiler/lower/analyzer.h"
#include "compiler/lower/linear_sum.h"

namespace temper::schedule_detail {
namespace {

// [e, e + 1)
Range point(const Expr& e) {
  return Range{e, make_const(e.dtype(), int64_t{1})};
}

// The body as its leading Allocate statements and what they enclose.
struct FuncBody {
  std::vector<Buffer> allocs;
  Stmt inner;
};

FuncBody split_allocations(const Stmt& body) {
  FuncBody out;
  out.inner = body;
  while (auto* a = out.inner.as<AllocateNode>()) {
    out.allocs.push_back(a->buffer);
    out.inner = a->body;
  }
  return out;
}

Stmt join_allocations(const FuncBody& body) {
  Stmt s = body.inner;
  for (size_t i = body.allocs.size(); i-- > 0;) s = allocate(body.allocs[i], s);
  return s;
}

// Calls visit(path) for every statement under root in program order, parents first;
// visit returns false to stop the walk.
bool walk(const Stmt& s, std::vector<Stmt>& path, const std::function<bool(const std::vector<Stmt>&)>& visit) {
  if (!s.defined()) return true;
  path.push_back(s);
  bool go_on = visit(path);
  auto child = [&](const Stmt& c) { go_on = go_on && walk(c, path, visit); };
  if (go_on) {
    if (auto* f = s.as<ForNode>()) {
      child(f->body);
    } else if (auto* sq = s.as<SeqStmtNode>()) {
      for (const Stmt& c : sq->seq) child(c);
    } else if (auto* a = s.as<AllocateNode>()) {
      child(a->body);
    } else if (auto* ite = s.as<IfThenElseNode>()) {
      child(ite->then_case);
      child(ite->else_case);
    } else if (auto* let = s.as<LetStmtNode>()) {
      child(let->body);
    } else if (auto* br = s.as<BlockRealizeNode>()) {
      child(br->block);
    } else if (auto* b = s.as<BlockNode>()) {
      child(b->init);
      child(b->body);
    }
  }
  path.pop_back();
  return go_on;
}

std::optional<StmtPath> find_path(const Stmt& root, const std::function<bool(const Stmt&)>& match) {
  std::optional<StmtPath> found;
  std::vector<Stmt> path;
  walk(root, path, [&](const std::vector<Stmt>& p) {
    if (!match(p.back())) return true;
    found = StmtPath{p};
    return false;
  });
  return found;
}

class StmtReplacer : public IRMutator {
 public:
  using IRMutator::visit;
  StmtReplacer(const Stmt& target, const Stmt& replacement) : target_(target), replacement_(replacement) {}

  Expr mutate(const Expr& e) override { return e; }
  Stmt mutate(const Stmt& s) override {
    if (s.same_as(target_)) return replacement_;
    return IRMutator::mutate(s);
  }

 protected:
  Stmt visit(const SeqStmtNode* op, const Stmt& self) override {
    std::vector<Stmt> children;
    bool changed = false;
    for (const Stmt& c : op->seq) {
      Stmt n = mutate(c);
      changed = changed || !n.same_as(c);
      if (n.defined()) children.push_back(n);
    }
    if (!changed) return self;
    if (children.empty()) return Stmt();
    return seq(children);
  }

 private:
  const Stmt& target_;
  const Stmt& replacement_;
};

class BufferReplacer : public IRMutator {
 public:
  using IRMutator::visit;
  BufferReplacer(const Buffer& from, const Buffer& to) : from_(from), to_(to) {}

 protected:
  Buffer mutate_buffer(const Buffer& b) override { return b.same_as(from_) ? to_ : b; }

 private:
  const Buffer& from_;
  const Buffer& to_;
};

// Calls fn(buffer, indices) for every load (kind BufferLoad) or store (BufferStore) in s,
// in post order.
void for_each_access(const Stmt& s, NodeKind kind,
                     const std::function<void(const Buffer&, const std::vector<Expr>&)>& fn) {
  post_order_visit(s, [&](const Node* n) {
    if (n->kind != kind) return;
    if (kind == NodeKind::BufferLoad) {
      auto* load = static_cast<const BufferLoadNode*>(n);
      fn(load->buffer, load->indices);
    } else {
      auto* st = static_cast<const BufferStoreNode*>(n);
      fn(st->buffer, st->indices);
    }
  });
}

std::vector<BufferRegion> point_regions(const Stmt& s, NodeKind kind) {
  std::vector<BufferRegion> regions;
  for_each_access(s, kind, [&](const Buffer& b, const std::vector<Expr>& indices) {
    for (const BufferRegion& r : regions) {
      if (r.buffer.same_as(b)) return;
    }
    BufferRegion r{b, {}};
    for (const Expr& i : indices) r.region.push_back(point(i));
    regions.push_back(std::move(r));
  });
  return regions;
}

std::vector<std::vector<Expr>> access_indices(const Stmt& s, const Buffer& b, NodeKind kind) {
  std::vector<std::vector<Expr>> out;
  for_each_access(s, kind, [&](const Buffer& accessed, const std::vector<Expr>& indices) {
    if (accessed.same_as(b)) out.push_back(indices);
  });
  return out;
}

}  // namespace

std::vector<const ForNode*> StmtPath::loops() const {
  std::vector<const ForNode*> out;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    if (auto* f = path[i].as<ForNode>()) out.push_back(f);
  }
  return out;
}

std::vector<BlockSite> collect_blocks(const Stmt& root) {
  std::vector<BlockSite> out;
  std::vector<Stmt> path;
  walk(root, path, [&](const std::vector<Stmt>& p) {
    if (p.back().as<BlockRealizeNode>()) out.push_back(BlockSite{{p}});
    return true;
  });
  return out;
}

std::optional<BlockSite> find_block(const Stmt& root, const std::string& name) {
  auto p = find_path(root, [&](const Stmt& s) {
    auto* br = s.as<BlockRealizeNode>();
    return br && br->block.as<BlockNode>()->name == name;
  });
  if (!p) return std::nullopt;
  return BlockSite{*p};
}

std::optional<LoopSite> find_loop(const Stmt& root, const VarNode* loop_var) {
  auto p = find_path(root, [&](const Stmt& s) {
    auto* f = s.as<ForNode>();
    return f && f->loop_var.get() == loop_var;
  });
  if (!p) return std::nullopt;
  return LoopSite{*p};
}

bool contains(const Stmt& root, const Stmt& node) {
  return find_path(root, [&](const Stmt& s) { return s.same_as(node); }).has_value();
}

Stmt replace_stmt(const Stmt& root, const Stmt& target, const Stmt& replacement) {
  StmtReplacer r(target, replacement);
  return r.mutate(root);
}

Stmt insert_beside(const Stmt& root, const Stmt& target, const Stmt& stmt, bool after) {
  return replace_stmt(root, target, after ? seq({target, stmt}) : seq({stmt, target}));
}

Stmt add_allocation(const Stmt& body, const Buffer& b) {
  FuncBody fb = split_allocations(body);
  fb.allocs.push_back(b);
  return join_allocations(fb);
}

Stmt remove_allocation(const Stmt& body, const Buffer& b) {
  FuncBody fb = split_allocations(body);
  std::erase_if(fb.allocs, [&](const Buffer& a) { return a.same_as(b); });
  return join_allocations(fb);
}

Stmt top_level_stmt(const Stmt& body, const Stmt& node) {
  Stmt inner = split_allocations(body).inner;
  if (auto* sq = inner.as<SeqStmtNode>()) {
    for (const Stmt& c : sq->seq) {
      if (contains(c, node)) return c;
    }
    TEMPER_CHECK(false, "statement not found in the function body");
  }
  return inner;
}

bool reads_buffer(const BlockNode* block, const Buffer& b) {
  for (const BufferRegion& r : block->reads) {
    if (r.buffer.same_as(b)) return true;
  }
  return false;
}

bool writes_buffer(const BlockNode* block, const Buffer& b) {
  for (const BufferRegion& r : block->writes) {
    if (r.buffer.same_as(b)) return true;
  }
  return false;
}

bool is_param(const PrimFunc& f, const Buffer& b) {
  for (const Buffer& p : f.params) {
    if (p.same_as(b)) return true;
  }
  return false;
}

bool uses_buffer(const Stmt& s, const Buffer& b) {
  bool used = false;
  post_order_visit(s, [&](const Node* n) {
    if (n->kind == NodeKind::BufferLoad) {
      used = used || static_cast<const BufferLoadNode*>(n)->buffer.same_as(b);
    } else if (n->kind == NodeKind::BufferStore) {
      used = used || static_cast<const BufferStoreNode*>(n)->buffer.same_as(b);
    } else if (n->kind == NodeKind::Block) {
      auto* block = static_cast<const BlockNode*>(n);
      used = used || reads_buffer(block, b) || writes_buffer(block, b);
    }
  });
  return used;
}

std::vector<BufferRegion> load_regions(const Stmt& s) {
  return point_regions(s, NodeKind::BufferLoad);
}
std::vector<BufferRegion> store_regions(const Stmt& s) {
  return point_regions(s, NodeKind::BufferStore);
}

std::vector<std::vector<Expr>> load_indices(const Stmt& s, const Buffer& b) {
  return access_indices(s, b, NodeKind::BufferLoad);
}
std::vector<std::vector<Expr>> store_indices(const Stmt& s, const Buffer& b) {
  return access_indices(s, b, NodeKind::BufferStore);
}

Stmt replace_buffer(const Stmt& s, const Buffer& from, const Buffer& to) {
  BufferReplacer r(from, to);
  return r.mutate(s);
}

std::vector<BufferRegion> replace_buffer(const std::vector<BufferRegion>& regions, const Buffer& from,
                                         const Buffer& to) {
  std::vector<BufferRegion> out = regions;
  for (BufferRegion& r : out) {
    if (r.buffer.same_as(from)) r.buffer = to;
  }
  return out;
}

std::string unique_block_name(const Stmt& root, const std::string& base) {
  std::set<std::string> names;
  for (const BlockSite& b : collect_blocks(root)) names.insert(b.block()->name);
  std::string name = base;
  for (int k = 1; names.count(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

Stmt realize(std::vector<Expr> iter_values, Expr predicate, const BlockNode& block) {
  return block_realize(std::move(iter_values), std::move(predicate), std::make_shared<const BlockNode>(block));
}

Stmt make_loop_nest(const std::vector<LoopSpec>& loops, Stmt body) {
  for (size_t i = loops.size(); i-- > 0;) {
    Expr min = loops[i].min.defined() ? loops[i].min : make_const(loops[i].var.dtype(), int64_t{0});
    body = make_for(loops[i].var, min, loops[i].extent, ForKind::Serial, body);
  }
  return body;
}

std::optional<int64_t> constant_difference(const Expr& a, const Expr& b) {
  if (a.dtype() != b.dtype()) return std::nullopt;
  Expr d = simplify(a - b);
  const int64_t* c = as_const_int(d);
  if (!c) return std::nullopt;
  return *c;
}

std::optional<IndexBounds> bound_over_loops(const Expr& index, const std::vector<const ForNode*>& loops) {
  Analyzer analyzer;
  std::unordered_set<const VarNode*> moving;
  for (const ForNode* f : loops) {
    analyzer.bind(f->loop_var, Range{f->min, f->extent});
    moving.insert(f->loop_var.get());
  }
  auto varies = [&](const Expr& term) {
    return uses_var_if(term, [&](const VarNode* v) { return moving.count(v) > 0; });
  };
  // Simplified with the loops' ranges first, so that terms of one loop leave the
  // fixed ones: (io*8 + ii) // 4 is io*2 + ii // 4.
  std::optional<OffsetBounds> s = offset_bounds(analyzer.simplify(index), varies, analyzer);
  if (!s || !s->rest.is_bounded()) return std::nullopt;
  DataType t = index.dtype();
  return IndexBounds{simplify(s->offset + make_const(t, s->rest.min)),
                     simplify(s->offset + make_const(t, s->rest.max))};
}

}  // namespace temper::schedule_detail
