// Cache stages: cache_read and cache_write copy a buffer through a new full-size buffer
// in another storage scope, its dimensions optionally permuted (a layout rewrite). The copy block is a plain nest over the whole buffer, placed
// at the top level next to the loop nest of the block it serves; compute_at or
// reverse_compute_at then moves it where the data is used.
#include <algorithm>
#include <set>

#include "compiler/ir/functor.h"
#include "compiler/ir/printer.h"
#include "compiler/schedule/schedule.h"
#include "compiler/schedule/schedule_ir.h"

namespace temper {

using namespace schedule_detail;

namespace {

void check_scope(const char* primitive, const std::string& scope) {
  static const std::set<std::string> kScopes = {"global", "local", "shared"};
  if (!kScopes.count(scope)) {
    throw ScheduleError(str(primitive, ": unknown storage scope '", scope, "'; use global, local or shared"));
  }
}

// The identity order of a buffer's dimensions when layout is empty; else layout,
// checked to be a permutation of them.
std::vector<int> checked_layout(const char* primitive, const Buffer& buf, const std::vector<int>& layout) {
  std::vector<int> order(buf.ndim());
  for (int d = 0; d < buf.ndim(); ++d) order[d] = d;
  if (layout.empty()) return order;
  std::vector<int> sorted = layout;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != order) {
    throw ScheduleError(str(primitive, ": layout ", nlohmann::json(layout).dump(), " is not a permutation of the ",
                            buf.ndim(), " dimensions of ", buf->name, " (dimension d of the cache is dimension ",
                            "layout[d] of the buffer)"));
  }
  return layout;
}

template <typename T>
std::vector<T> permuted(const std::vector<T>& v, const std::vector<int>& layout) {
  std::vector<T> out;
  for (int d : layout) out.push_back(v[d]);
  return out;
}

// Replaces every access of `from` by the same access of `to`, whose dimensions are
// from's in `layout` order.
class PermutedBufferReplacer : public IRMutator {
 public:
  using IRMutator::visit;
  PermutedBufferReplacer(const Buffer& from, const Buffer& to, const std::vector<int>& layout)
      : from_(from), to_(to), layout_(layout) {}

  std::vector<BufferRegion> regions(const std::vector<BufferRegion>& in) const {
    std::vector<BufferRegion> out = in;
    for (BufferRegion& r : out) {
      if (!r.buffer.same_as(from_)) continue;
      r.buffer = to_;
      r.region = permuted(r.region, layout_);
    }
    return out;
  }

 protected:
  Expr visit(const BufferLoadNode* op, const Expr& self) override {
    Expr e = IRMutator::visit(op, self);
    auto* l = static_cast<const BufferLoadNode*>(e.get());
    return l->buffer.same_as(from_) ? load(to_, permuted(l->indices, layout_)) : e;
  }
  Stmt visit(const BufferStoreNode* op, const Stmt& self) override {
    Stmt st = IRMutator::visit(op, self);
    auto* s = static_cast<const BufferStoreNode*>(st.get());
    return s->buffer.same_as(from_) ? store(to_, s->value, permuted(s->indices, layout_)) : st;
  }

 private:
  const Buffer& from_;
  const Buffer& to_;
  const std::vector<int>& layout_;
};

// A block named `name` that copies every element between buf and its cache (into the
// cache for a read cache, out of it for a write cache), in a nest over buf's dimensions.
Stmt copy_nest(const std::string& name, const Buffer& buf, const Buffer& cache, const std::vector<int>& layout,
               bool is_write) {
  BlockNode block;
  block.name = name;
  std::vector<LoopSpec> loops;
  std::vector<Expr> values;
  std::vector<Expr> indices;
  for (int d = 0; d < buf.ndim(); ++d) {
    DataType t = buf->shape[d].dtype();
    Var v("v" + std::to_string(d), t);
    Var ax("ax" + std::to_string(d), t);
    block.iter_vars.push_back(IterVar{v, Range{make_const(t, int64_t{0}), buf->shape[d]}, IterKind::Spatial});
    loops.push_back(LoopSpec{ax, buf->shape[d]});
    values.push_back(ax);
    indices.push_back(v);
  }
  std::vector<Expr> cache_indices = permuted(indices, layout);
  block.body = is_write ? store(buf, load(cache, cache_indices), indices)
                        : store(cache, load(buf, indices), cache_indices);
  block.reads = load_regions(block.body);
  block.writes = store_regions(block.body);
  return make_loop_nest(loops, realize(values, make_bool(true), block));
}

// The cache buffer and the copy block share one name, unique among the blocks.
Buffer cache_buffer(const Stmt& body, const Buffer& buf, const std::string& scope, const std::vector<int>& layout) {
  std::string name = unique_block_name(body, buf->name + "_" + scope);
  return buf.with_name(name).with_scope(scope).with_shape(permuted(buf->shape, layout));
}

// body with the block at `site` accessing `cache` instead of `buf`, the copy between them
// beside the block's top-level nest (before it for a read cache, after it for a write
// cache), and the cache allocated.
Stmt add_cache_stage(const Stmt& body, const BlockSite& site, const Buffer& buf, const Buffer& cache,
                     const std::vector<int>& layout, bool is_write) {
  const BlockNode* b = site.block();
  PermutedBufferReplacer replacer(buf, cache, layout);
  BlockNode nb = *b;
  nb.body = replacer.mutate(b->body);
  if (b->init.defined()) nb.init = replacer.mutate(b->init);
  nb.reads = replacer.regions(b->reads);
  nb.writes = replacer.regions(b->writes);
  const BlockRealizeNode* br = site.realize();
  Stmt new_realize = realize(br->iter_values, br->predicate, nb);
  Stmt out = replace_stmt(body, site.stmt(), new_realize);
  Stmt copy = copy_nest(cache->name, buf, cache, layout, is_write);
  out = insert_beside(out, top_level_stmt(out, new_realize), copy, /*after=*/is_write);
  return add_allocation(out, cache);
}

// The trace's attributes of a cache stage: the layout only where it is not the identity.
nlohmann::json cache_attrs(int index, const std::string& scope, const std::vector<int>& layout) {
  nlohmann::json attrs = nlohmann::json::array({index, scope});
  if (!std::is_sorted(layout.begin(), layout.end())) attrs.push_back(layout);
  return attrs;
}

}  // namespace

BlockRV Schedule::cache_read(BlockRV block_rv, int read_buffer_index, const std::string& scope,
                             const std::vector<int>& layout) {
  BlockSite site = find(block_rv, "cache_read");
  const BlockNode* b = site.block();
  if (read_buffer_index < 0 || read_buffer_index >= static_cast<int>(b->reads.size())) {
    throw ScheduleError(str("cache_read: block ", b->name, " reads ", b->reads.size(), " buffers; read index ",
                            read_buffer_index, " is out of range"));
  }
  check_scope("cache_read", scope);
  const Buffer& buf = b->reads[read_buffer_index].buffer;
  if (writes_buffer(b, buf)) {
    throw ScheduleError(str("cache_read: block ", b->name, " also writes ", buf->name,
                            "; use cache_write for a buffer that a block updates"));
  }
  Stmt top = top_level_stmt(func_.body, site.stmt());
  for (const BlockSite& other : collect_blocks(top)) {
    if (writes_buffer(other.block(), buf)) {
      throw ScheduleError(str("cache_read: buffer ", buf->name, " is written by block ", other.block()->name,
                              " in the same loop nest as block ", b->name,
                              "; apply cache_read before compute_at/reverse_compute_at"));
    }
  }
  std::vector<int> order = checked_layout("cache_read", buf, layout);
  Buffer cache = cache_buffer(func_.body, buf, scope, order);
  func_.body = add_cache_stage(func_.body, site, buf, cache, order, /*is_write=*/false);
  BlockRV out = new_block_rv(cache->name);
  record(InstKind::CacheRead, {ref(block_rv)}, cache_attrs(read_buffer_index, scope, order), {ref(out)});
  return out;
}

BlockRV Schedule::cache_write(BlockRV block_rv, int write_buffer_index, const std::string& scope,
                              const std::vector<int>& layout) {
  BlockSite site = find(block_rv, "cache_write");
  const BlockNode* b = site.block();
  if (write_buffer_index < 0 || write_buffer_index >= static_cast<int>(b->writes.size())) {
    throw ScheduleError(str("cache_write: block ", b->name, " writes ", b->writes.size(), " buffers; write index ",
                            write_buffer_index, " is out of range"));
  }
  check_scope("cache_write", scope);
  const Buffer& buf = b->writes[write_buffer_index].buffer;
  for (const BlockSite& other : collect_blocks(func_.body)) {
    if (other.block()->name != b->name && writes_buffer(other.block(), buf)) {
      throw ScheduleError(str("cache_write: buffer ", buf->name, " is also written by block ", other.block()->name,
                              "; cache_write needs the only writer of a buffer (apply it before "
                              "decompose_reduction)"));
    }
  }
  Stmt top = top_level_stmt(func_.body, site.stmt());
  for (const BlockSite& other : collect_blocks(top)) {
    if (other.block()->name != b->name && reads_buffer(other.block(), buf)) {
      throw ScheduleError(str("cache_write: block ", other.block()->name, " reads ", buf->name,
                              " in the same loop nest as block ", b->name,
                              "; apply cache_write before compute_at/reverse_compute_at"));
    }
  }
  std::vector<int> order = checked_layout("cache_write", buf, layout);
  Buffer cache = cache_buffer(func_.body, buf, scope, order);
  func_.body = add_cache_stage(func_.body, site, buf, cache, order, /*is_write=*/true);
  BlockRV out = new_block_rv(cache->name);
  record(InstKind::CacheWrite, {ref(block_rv)}, cache_attrs(write_buffer_index, scope, order), {ref(out)});
  return out;
}

}  // namespace temper
