// Cache stages: cache_read and cache_write copy a buffer through a new full-size buffer
// in another storage scope. The copy block is a plain nest over the whole buffer, placed
// at the top level next to the loop nest of the block it serves; compute_at or
// reverse_compute_at then moves it where the data is used.
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

// A block named `name` that copies every element of `from` into `to`, in its own nest.
Stmt copy_nest(const std::string& name, const Buffer& from, const Buffer& to) {
  BlockNode block;
  block.name = name;
  std::vector<LoopSpec> loops;
  std::vector<Expr> values;
  std::vector<Expr> indices;
  for (int d = 0; d < from.ndim(); ++d) {
    DataType t = from->shape[d].dtype();
    Var v("v" + std::to_string(d), t);
    Var ax("ax" + std::to_string(d), t);
    block.iter_vars.push_back(IterVar{v, Range{make_const(t, int64_t{0}), from->shape[d]}, IterKind::Spatial});
    loops.push_back(LoopSpec{ax, from->shape[d]});
    values.push_back(ax);
    indices.push_back(v);
  }
  block.body = store(to, load(from, indices), indices);
  block.reads = load_regions(block.body);
  block.writes = store_regions(block.body);
  return make_loop_nest(loops, realize(values, make_bool(true), block));
}

// The cache buffer and the copy block share one name, unique among the blocks.
Buffer cache_buffer(const Stmt& body, const Buffer& buf, const std::string& scope) {
  std::string name = unique_block_name(body, buf->name + "_" + scope);
  return buf.with_name(name).with_scope(scope);
}

// body with the block at `site` accessing `cache` instead of `buf`, the copy between them
// beside the block's top-level nest (before it for a read cache, after it for a write
// cache), and the cache allocated.
Stmt add_cache_stage(const Stmt& body, const BlockSite& site, const Buffer& buf, const Buffer& cache, bool is_write) {
  const BlockNode* b = site.block();
  BlockNode nb = *b;
  nb.body = replace_buffer(b->body, buf, cache);
  nb.init = replace_buffer(b->init, buf, cache);
  nb.reads = replace_buffer(b->reads, buf, cache);
  nb.writes = replace_buffer(b->writes, buf, cache);
  const BlockRealizeNode* br = site.realize();
  Stmt new_realize = realize(br->iter_values, br->predicate, nb);
  Stmt out = replace_stmt(body, site.stmt(), new_realize);
  Stmt copy = is_write ? copy_nest(cache->name, cache, buf) : copy_nest(cache->name, buf, cache);
  out = insert_beside(out, top_level_stmt(out, new_realize), copy, /*after=*/is_write);
  return add_allocation(out, cache);
}

}  // namespace

BlockRV Schedule::cache_read(BlockRV block_rv, int read_buffer_index, const std::string& scope) {
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
  Buffer cache = cache_buffer(func_.body, buf, scope);
  func_.body = add_cache_stage(func_.body, site, buf, cache, /*is_write=*/false);
  BlockRV out = new_block_rv(cache->name);
  record(InstKind::CacheRead, {ref(block_rv)}, nlohmann::json::array({read_buffer_index, scope}), {ref(out)});
  return out;
}

BlockRV Schedule::cache_write(BlockRV block_rv, int write_buffer_index, const std::string& scope) {
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
  Buffer cache = cache_buffer(func_.body, buf, scope);
  func_.body = add_cache_stage(func_.body, site, buf, cache, /*is_write=*/true);
  BlockRV out = new_block_rv(cache->name);
  record(InstKind::CacheWrite, {ref(block_rv)}, nlohmann::json::array({write_buffer_index, scope}), {ref(out)});
  return out;
}

}  // namespace temper
