// Moving blocks: compute_at, reverse_compute_at, compute_inline.
//
// compute_at and reverse_compute_at size the moved block's new loops by interval
// arithmetic: the accesses of the blocks on the other side, with their bindings
// substituted, are bounded while the loops inside the target loop move and everything
// outside it stays fixed (bound_over_loops). The extents must come out constant.
#include <set>

#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/ir/substitute.h"
#include "compiler/lower/analyzer.h"
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/schedule_ir.h"

namespace temper {

using namespace schedule_detail;

namespace {

// The topmost statement that belongs to the block alone: its BlockRealize and the loops
// above it whose whole body is the statement below.
Stmt own_root(const BlockSite& site) {
  size_t i = site.path.size() - 1;
  while (i > 0) {
    auto* f = site.path[i - 1].as<ForNode>();
    if (!f || !f->body.same_as(site.path[i])) break;
    --i;
  }
  return site.path[i];
}

bool is_under(const StmtPath& site, const Stmt& loop) {
  for (size_t i = 0; i + 1 < site.path.size(); ++i) {
    if (site.path[i].same_as(loop)) return true;
  }
  return false;
}

// The loops among path[from], ..., path[to - 1].
std::vector<const ForNode*> loops_in(const std::vector<Stmt>& path, size_t from, size_t to) {
  std::vector<const ForNode*> loops;
  for (size_t i = from; i < to && i < path.size(); ++i) {
    if (auto* f = path[i].as<ForNode>()) loops.push_back(f);
  }
  return loops;
}

size_t index_in_path(const StmtPath& site, const Stmt& s) {
  for (size_t i = 0; i < site.path.size(); ++i) {
    if (site.path[i].same_as(s)) return i;
  }
  TEMPER_CHECK(false, "statement not on the path");
  return 0;
}

std::string names_of(const std::vector<BlockSite>& blocks) {
  std::string s;
  for (const BlockSite& b : blocks) s += (s.empty() ? "" : ", ") + b.block()->name;
  return s;
}

// The region of buf that the blocks access (loads or stores) in one iteration of the
// target loop, as an interval per dimension in terms of the loops outside it.
std::vector<IndexBounds> region_under(const char* primitive, const std::vector<BlockSite>& blocks,
                                      const LoopSite& target, const Buffer& buf, bool loads) {
  std::vector<std::optional<IndexBounds>> dims(buf.ndim());
  bool first = true;
  for (const BlockSite& site : blocks) {
    const BlockNode* b = site.block();
    VarMap bindings;
    for (size_t i = 0; i < b->iter_vars.size(); ++i)
      bindings[b->iter_vars[i].var.get()] = site.realize()->iter_values[i];
    size_t target_index = index_in_path(site, target.stmt());
    std::vector<const ForNode*> inner = loops_in(site.path, target_index + 1, site.path.size());
    // A shared buffer is filled by all threads of a block together: its region covers
    // every thread's accesses, so the thread loops around the target count as inner.
    if (buf->scope == "shared") {
      for (const ForNode* f : loops_in(site.path, 0, target_index + 1)) {
        if (f->for_kind == ForKind::ThreadBinding && f->thread_tag.rfind("threadIdx", 0) == 0) inner.push_back(f);
      }
    }
    std::vector<std::vector<Expr>> accesses = loads ? load_indices(b->body, buf) : store_indices(b->body, buf);
    if (b->init.defined()) {
      auto more = loads ? load_indices(b->init, buf) : store_indices(b->init, buf);
      accesses.insert(accesses.end(), more.begin(), more.end());
    }
    for (const std::vector<Expr>& indices : accesses) {
      for (size_t d = 0; d < indices.size(); ++d) {
        Expr index = substitute(indices[d], bindings);
        std::optional<IndexBounds> r = bound_over_loops(index, inner);
        if (!r) {
          throw ScheduleError(str(primitive, ": cannot bound index ", index, " of ", buf->name, " in block ", b->name,
                                  " over the loops inside ", target.loop()->loop_var.name()));
        }
        if (first) {
          dims[d] = r;
          continue;
        }
        auto lo = constant_difference(r->min, dims[d]->min);
        auto hi = constant_difference(r->max, dims[d]->max);
        if (!lo || !hi) {
          throw ScheduleError(str(primitive, ": the accesses of ", buf->name, " under loop ",
                                  target.loop()->loop_var.name(), " in dimension ", d, " (", dims[d]->min, " and ",
                                  r->min, ") are not a constant distance apart; cannot size one region for them"));
        }
        if (*lo < 0) dims[d]->min = r->min;
        if (*hi > 0) dims[d]->max = r->max;
      }
      first = false;
    }
  }
  TEMPER_CHECK(!first, "no access of ", buf->name, " found in the blocks");
  std::vector<IndexBounds> out;
  for (auto& d : dims) out.push_back(*d);
  return out;
}

// The loops, bindings and predicate that run `block` over `region` for the variables
// in var_dim (variable k covers region[var_dim[k]]); the other variables cover their
// whole domain. outer: the loops around the new nest, to decide whether the region
// can leave the block's domain (then a predicate cuts it off).
struct NewNest {
  std::vector<LoopSpec> loops;
  std::vector<Expr> values;
  Expr predicate;
};

NewNest nest_over_region(const char* primitive, const BlockNode* block, const std::vector<int>& var_dim,
                         const std::vector<IndexBounds>& region, const std::vector<const ForNode*>& outer,
                         const std::string& loop_name, const Buffer& buf) {
  Analyzer outer_ranges;
  for (const ForNode* f : outer) outer_ranges.bind(f->loop_var, Range{f->min, f->extent});
  NewNest nest;
  nest.predicate = make_bool(true);
  int axis = 0;
  auto new_loop = [&](const Expr& extent, DataType t) {
    Var ax("ax" + std::to_string(axis++), t);
    nest.loops.push_back(LoopSpec{ax, extent});
    return ax;
  };
  for (size_t k = 0; k < block->iter_vars.size(); ++k) {
    const IterVar& iv = block->iter_vars[k];
    DataType t = iv.var.dtype();
    if (var_dim[k] < 0) {
      Var ax = new_loop(iv.dom.extent, t);
      nest.values.push_back(simplify(iv.dom.min + ax));
      continue;
    }
    const IndexBounds& r = region[var_dim[k]];
    auto span = constant_difference(r.max, r.min);
    if (!span) {
      throw ScheduleError(str(primitive, ": the region of ", buf->name, " in dimension ", var_dim[k], " under loop ",
                              loop_name, " runs from ", r.min, " to ", r.max,
                              ", which is not a constant extent; choose a loop whose inner loops have constant "
                              "extents"));
    }
    Expr value = r.min;
    if (*span > 0) value = simplify(r.min + new_loop(make_const(t, *span + 1), t));
    nest.values.push_back(value);
    // Cut off points outside the block's domain (a consumer under a split with a tail).
    Expr dom_end = simplify(iv.dom.min + iv.dom.extent);
    if (!outer_ranges.can_prove(r.min >= iv.dom.min)) nest.predicate = simplify(nest.predicate && value >= iv.dom.min);
    if (!outer_ranges.can_prove(r.max < dom_end)) nest.predicate = simplify(nest.predicate && value < dom_end);
  }
  return nest;
}

// Inserts s into the body of the target loop: before the first child that holds one of
// `anchors` (or after the last one), or beside the whole body when it is one statement.
Stmt insert_in_loop(const Stmt& body, const VarNode* loop_var, const Stmt& s, const std::set<std::string>& anchors,
                    bool after) {
  LoopSite target = *find_loop(body, loop_var);
  Stmt anchor = target.loop()->body;
  if (auto* sq = anchor.as<SeqStmtNode>()) {
    for (const Stmt& c : sq->seq) {
      bool holds = false;
      for (const BlockSite& b : collect_blocks(c)) holds = holds || anchors.count(b.block()->name);
      if (!holds) continue;
      anchor = c;
      if (!after) break;
    }
  }
  return insert_beside(body, anchor, s, after);
}

// body with `block` (whose own statement is `own`) moved into the target loop: a new
// nest runs it over the region of buf that `others` access in one iteration of the loop
// (their loads for compute_at, placed before the first of them; their stores for
// reverse_compute_at, placed after the last). var_dim as for nest_over_region.
Stmt move_into_loop(const char* primitive, const Stmt& body, const BlockNode* block, const Stmt& own,
                    const std::vector<int>& var_dim, const std::vector<BlockSite>& others, const LoopSite& target,
                    const Buffer& buf, bool reverse) {
  std::vector<IndexBounds> region = region_under(primitive, others, target, buf, /*loads=*/!reverse);
  std::vector<const ForNode*> outer = loops_in(target.path, 0, target.path.size());
  NewNest nest = nest_over_region(primitive, block, var_dim, region, outer, target.loop()->loop_var.name(), buf);
  Stmt moved = make_loop_nest(nest.loops, realize(nest.values, nest.predicate, *block));
  std::set<std::string> anchors;
  for (const BlockSite& o : others) anchors.insert(o.block()->name);
  Stmt without = replace_stmt(body, own, Stmt());
  return insert_in_loop(without, target.loop()->loop_var.get(), moved, anchors, /*after=*/reverse);
}

}  // namespace

void Schedule::compute_at(BlockRV block_rv, LoopRV loop_rv) {
  BlockSite producer = find(block_rv, "compute_at");
  LoopSite target = find(loop_rv, "compute_at");
  const BlockNode* pb = producer.block();
  const std::string& loop_name = target.loop()->loop_var.name();
  if (pb->writes.size() != 1) {
    throw ScheduleError(str("compute_at: block ", pb->name, " writes ", pb->writes.size(),
                            " buffers; only a block with one output can be computed at a loop"));
  }
  const Buffer& buf = pb->writes[0].buffer;
  Stmt own = own_root(producer);
  if (contains(own, target.stmt())) {
    throw ScheduleError(str("compute_at: loop ", loop_name, " is a loop of block ", pb->name,
                            " itself; choose a loop of a consumer of ", pb->name));
  }
  std::vector<BlockSite> consumers;
  for (const BlockSite& b : collect_blocks(func_.body)) {
    if (b.block()->name == pb->name) continue;
    if (writes_buffer(b.block(), buf)) {
      throw ScheduleError(str("compute_at: buffer ", buf->name, " is written by block ", b.block()->name,
                              " as well as by ", pb->name,
                              "; compute_at needs a block that is the only writer of "
                              "its output (apply decompose_reduction after compute_at)"));
    }
    if (reads_buffer(b.block(), buf)) consumers.push_back(b);
  }
  if (consumers.empty()) {
    throw ScheduleError(str("compute_at: no block reads buffer ", buf->name, " that block ", pb->name,
                            " writes; there is no consumer to compute it at"));
  }
  std::vector<BlockSite> under;
  for (const BlockSite& c : consumers) {
    if (is_under(c, target.stmt())) under.push_back(c);
  }
  if (under.empty()) {
    throw ScheduleError(str("compute_at: loop ", loop_name, " is not an ancestor of any consumer of block ", pb->name,
                            " (its consumers: ", names_of(consumers), "); choose a loop that encloses a consumer"));
  }
  for (const BlockSite& c : consumers) {
    if (!is_under(c, target.stmt())) {
      throw ScheduleError(str("compute_at: block ", c.block()->name, " reads ", buf->name, " but is not under loop ",
                              loop_name, "; every consumer of ", pb->name,
                              " must be inside the loop it is computed at"));
    }
  }

  // The producer's spatial variables are the indices it writes.
  std::vector<int> var_dim(pb->iter_vars.size(), -1);
  const BufferRegion& w = pb->writes[0];
  for (size_t d = 0; d < w.region.size(); ++d) {
    bool matched = false;
    for (size_t k = 0; k < pb->iter_vars.size(); ++k) {
      if (pb->iter_vars[k].kind == IterKind::Spatial && w.region[d].min.same_as(pb->iter_vars[k].var) &&
          is_one(w.region[d].extent) && var_dim[k] < 0) {
        var_dim[k] = static_cast<int>(d);
        matched = true;
        break;
      }
    }
    if (!matched) {
      throw ScheduleError(str("compute_at: block ", pb->name, " writes ", buf->name, " at ", w.region[d].min,
                              " in dimension ", d,
                              ", not at one of its spatial iteration variables; only blocks "
                              "that write one element per spatial point can be moved"));
    }
  }
  for (size_t k = 0; k < pb->iter_vars.size(); ++k) {
    if (pb->iter_vars[k].kind == IterKind::Spatial && var_dim[k] < 0) {
      throw ScheduleError(str("compute_at: spatial variable ", pb->iter_vars[k].var.name(), " of block ", pb->name,
                              " does not index its output ", buf->name));
    }
  }

  func_.body = move_into_loop("compute_at", func_.body, pb, own, var_dim, under, target, buf, /*reverse=*/false);
  record(InstKind::ComputeAt, {ref(block_rv), ref(loop_rv)}, nlohmann::json::array(), {});
}

void Schedule::reverse_compute_at(BlockRV block_rv, LoopRV loop_rv) {
  BlockSite consumer = find(block_rv, "reverse_compute_at");
  LoopSite target = find(loop_rv, "reverse_compute_at");
  const BlockNode* cb = consumer.block();
  const std::string& loop_name = target.loop()->loop_var.name();
  Stmt own = own_root(consumer);
  if (contains(own, target.stmt())) {
    throw ScheduleError(str("reverse_compute_at: loop ", loop_name, " is a loop of block ", cb->name,
                            " itself; choose a loop of a producer of ", cb->name));
  }
  std::vector<BlockSite> all = collect_blocks(func_.body);
  int consumer_index = -1;
  int first_under = -1;
  int last_under = -1;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].block()->name == cb->name) consumer_index = static_cast<int>(i);
    if (all[i].block()->name != cb->name && is_under(all[i], target.stmt())) {
      if (first_under < 0) first_under = static_cast<int>(i);
      last_under = static_cast<int>(i);
    }
  }
  Buffer buf;
  std::vector<BlockSite> producers;
  for (const BufferRegion& r : cb->reads) {
    std::vector<BlockSite> writers;
    std::vector<BlockSite> writers_under;
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i].block()->name == cb->name || !writes_buffer(all[i].block(), r.buffer)) continue;
      writers.push_back(all[i]);
      if (is_under(all[i], target.stmt())) {
        writers_under.push_back(all[i]);
      } else if (first_under >= 0 && static_cast<int>(i) > first_under) {
        throw ScheduleError(str("reverse_compute_at: block ", all[i].block()->name, " writes ", r.buffer->name,
                                ", which ", cb->name, " reads, after loop ", loop_name, "; moving ", cb->name,
                                " into the loop would read it too early"));
      }
    }
    if (writers_under.empty()) continue;
    if (buf.defined() && !buf.same_as(r.buffer)) {
      throw ScheduleError(str("reverse_compute_at: block ", cb->name, " reads two buffers produced under loop ",
                              loop_name, " (", buf->name, " and ", r.buffer->name, "); it can follow only one"));
    }
    if (writers_under.size() != writers.size()) {
      throw ScheduleError(str("reverse_compute_at: buffer ", r.buffer->name, " is also written outside loop ",
                              loop_name, " (writers: ", names_of(writers), ")"));
    }
    buf = r.buffer;
    producers = writers_under;
  }
  if (!buf.defined()) {
    throw ScheduleError(str("reverse_compute_at: loop ", loop_name, " is not an ancestor of any producer of block ",
                            cb->name, "; choose a loop that encloses the block that writes what ", cb->name, " reads"));
  }
  // Under a reduction loop of its producer the consumer would read partial results. A
  // reduction bound to GPU threads is the exception: its cross-thread reduction gives
  // every thread the whole result.
  std::vector<const ForNode*> around = target.loops();
  around.push_back(target.loop());
  for (const BlockSite& p : producers) {
    const BlockNode* pb = p.block();
    const std::vector<Expr>& values = p.realize()->iter_values;
    for (size_t k = 0; k < pb->iter_vars.size() && k < values.size(); ++k) {
      if (pb->iter_vars[k].kind != IterKind::Reduce) continue;
      for (const ForNode* loop : around) {
        if (loop->for_kind == ForKind::ThreadBinding || !uses_var(values[k], loop->loop_var)) continue;
        throw ScheduleError(str("reverse_compute_at: loop ", loop->loop_var.name(), " is a reduction loop of block ",
                                pb->name, "; under it ", cb->name, " would read partial results (choose a loop ",
                                "outside the reduction loops of ", pb->name, ")"));
      }
    }
  }
  if (consumer_index < last_under) {
    throw ScheduleError(str("reverse_compute_at: block ", cb->name, " comes before the producers under loop ",
                            loop_name, "; it can only move into a loop that runs before it"));
  }
  for (int i = last_under + 1; i < consumer_index; ++i) {
    for (const BufferRegion& w : cb->writes) {
      if (reads_buffer(all[i].block(), w.buffer)) {
        throw ScheduleError(str("reverse_compute_at: block ", all[i].block()->name, " reads ", w.buffer->name,
                                " between loop ", loop_name, " and block ", cb->name,
                                "; moving the writer into the loop would change what it reads"));
      }
    }
  }

  // The consumer's variables that index buf (all its reads of buf at one index tuple).
  std::vector<std::vector<Expr>> reads = load_indices(cb->body, buf);
  if (cb->init.defined()) {
    auto more = load_indices(cb->init, buf);
    reads.insert(reads.end(), more.begin(), more.end());
  }
  TEMPER_CHECK(!reads.empty(), "block ", cb->name, " lists ", buf->name, " among its reads but never loads it");
  std::vector<int> var_dim(cb->iter_vars.size(), -1);
  for (size_t d = 0; d < reads[0].size(); ++d) {
    for (const std::vector<Expr>& other : reads) {
      if (!structural_equal(other[d], reads[0][d], /*map_vars=*/false)) {
        throw ScheduleError(str("reverse_compute_at: block ", cb->name, " reads ", buf->name,
                                " at more than one index in dimension ", d, " (", reads[0][d], " and ", other[d],
                                "); it must read one element per point"));
      }
    }
    bool matched = false;
    for (size_t k = 0; k < cb->iter_vars.size(); ++k) {
      if (cb->iter_vars[k].kind == IterKind::Spatial && reads[0][d].same_as(cb->iter_vars[k].var) && var_dim[k] < 0) {
        var_dim[k] = static_cast<int>(d);
        matched = true;
      }
    }
    if (!matched) {
      throw ScheduleError(str("reverse_compute_at: block ", cb->name, " reads ", buf->name, " at ", reads[0][d],
                              " in dimension ", d, ", which is not one of its spatial iteration variables"));
    }
  }

  func_.body =
      move_into_loop("reverse_compute_at", func_.body, cb, own, var_dim, producers, target, buf, /*reverse=*/true);
  record(InstKind::ReverseComputeAt, {ref(block_rv), ref(loop_rv)}, nlohmann::json::array(), {});
}

namespace {

// Replaces each load of buf by value with vars[d] bound to the load's index d.
class LoadInliner : public IRMutator {
 public:
  using IRMutator::visit;
  LoadInliner(const Buffer& buf, std::vector<const VarNode*> vars, Expr value)
      : buf_(buf), vars_(std::move(vars)), value_(std::move(value)) {}

 protected:
  Expr visit(const BufferLoadNode* op, const Expr& self) override {
    Expr e = IRMutator::visit(op, self);
    auto* load = e.as<BufferLoadNode>();
    if (!load->buffer.same_as(buf_)) return e;
    VarMap map;
    for (size_t d = 0; d < vars_.size(); ++d) map[vars_[d]] = load->indices[d];
    return substitute(value_, map);
  }

 private:
  const Buffer& buf_;
  std::vector<const VarNode*> vars_;
  Expr value_;
};

}  // namespace

void Schedule::compute_inline(BlockRV block_rv) {
  BlockSite producer = find(block_rv, "compute_inline");
  const BlockNode* pb = producer.block();
  bool reduction = pb->init.defined();
  for (const IterVar& iv : pb->iter_vars) reduction = reduction || iv.kind == IterKind::Reduce;
  if (reduction) {
    throw ScheduleError(str("compute_inline: block ", pb->name,
                            " is a reduction; only elementwise (injective) blocks can be inlined (compute_at it "
                            "instead)"));
  }
  auto* st = pb->body.as<BufferStoreNode>();
  if (!st || pb->writes.size() != 1) {
    throw ScheduleError(str("compute_inline: the body of block ", pb->name,
                            " is not a single store; only a block computing one element can be inlined"));
  }
  const Buffer& buf = st->buffer;
  if (is_param(func_, buf)) {
    throw ScheduleError(str("compute_inline: block ", pb->name, " writes ", buf->name, ", an output of function ",
                            func_.name, "; a block that writes a function output cannot be inlined"));
  }
  std::vector<const VarNode*> vars;
  for (const Expr& index : st->indices) {
    auto* v = index.as<VarNode>();
    bool is_iter = false;
    for (const IterVar& iv : pb->iter_vars) is_iter = is_iter || (v && iv.var.get() == v);
    for (const VarNode* seen : vars) is_iter = is_iter && seen != v;
    if (!is_iter) {
      throw ScheduleError(str("compute_inline: block ", pb->name, " stores ", buf->name, " at index ", index,
                              ", not at one of its own iteration variables; it cannot be inlined"));
    }
    vars.push_back(v);
  }
  if (vars.size() != pb->iter_vars.size()) {
    throw ScheduleError(str("compute_inline: not every iteration variable of block ", pb->name, " indexes ", buf->name,
                            "; it cannot be inlined"));
  }

  Stmt body = replace_stmt(func_.body, own_root(producer), Stmt());
  LoadInliner inliner(buf, vars, st->value);
  for (const BlockSite& c : collect_blocks(body)) {
    const BlockNode* cb = c.block();
    if (writes_buffer(cb, buf)) {
      throw ScheduleError(str("compute_inline: block ", cb->name, " also writes ", buf->name,
                              "; only the sole "
                              "writer of a buffer can be inlined"));
    }
    if (!reads_buffer(cb, buf)) continue;
    BlockNode nb = *cb;
    nb.body = inliner.mutate(cb->body);
    nb.init = inliner.mutate(cb->init);
    nb.reads.clear();
    for (const BufferRegion& r : cb->reads) {
      if (!r.buffer.same_as(buf)) nb.reads.push_back(r);
    }
    for (const BufferRegion& r : load_regions(nb.body)) {
      if (!reads_buffer(&nb, r.buffer)) nb.reads.push_back(r);
    }
    const BlockRealizeNode* br = c.realize();
    body = replace_stmt(body, c.stmt(), realize(br->iter_values, br->predicate, nb));
  }
  if (!uses_buffer(body, buf)) body = remove_allocation(body, buf);
  func_.body = body;
  record(InstKind::ComputeInline, {ref(block_rv)}, nlohmann::json::array(), {});
}

}  // namespace temper
