#include "schedule_space/random_annotation.h"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/ir/functor.h"
#include "compiler/lower/unroll_loops.h"
#include "compiler/ops/block_info.h"

namespace temper::schedule_space {
namespace {

// Hands out the decisions of the draws, in order: the given one where it is a valid
// index among n choices, else none (the schedule draws).
class DecisionFeed {
 public:
  DecisionFeed(const Decisions& decisions, size_t first) : decisions_(decisions), next_(first) {}
  std::optional<int> index(size_t n) {
    size_t k = next_++;
    if (k >= decisions_.size() || !decisions_[k] || decisions_[k]->size() != 1) return std::nullopt;
    int64_t i = decisions_[k]->at(0);
    return i >= 0 && i < static_cast<int64_t>(n) ? std::optional<int>(static_cast<int>(i)) : std::nullopt;
  }

 private:
  const Decisions& decisions_;
  size_t next_;
};

int64_t extent_of(const Schedule& s, LoopRV l) {
  const int64_t* e = as_const_int(s.loop(l)->extent);
  return e ? *e : -1;
}

// A loop nest at the root of the function: its blocks (program order) and, per block,
// its loops and which of them bind a reduction axis.
struct Nest {
  const ForNode* root = nullptr;
  std::vector<ops::BlockInfo> blocks;
  std::vector<std::vector<LoopRV>> loops;
};

std::vector<Nest> root_nests(Schedule& s) {
  std::vector<Nest> nests;
  for (const ops::BlockInfo& b : ops::collect_blocks(s.func())) {
    std::vector<LoopRV> loops = s.get_loops(s.get_block(b.name));
    if (loops.empty()) continue;
    const ForNode* root = s.loop(loops[0]);
    if (nests.empty() || nests.back().root != root) nests.push_back({root, {}, {}});
    nests.back().blocks.push_back(b);
    nests.back().loops.push_back(loops);
  }
  return nests;
}

// The leading loops of a nest that every block shares, each spatial for every block,
// serial, and each (but the last) the whole body of the one above it. keep_innermost: a
// nest of one block keeps its innermost loop out (for vectorization).
std::vector<LoopRV> parallel_prefix(const Schedule& s, const Nest& nest, bool keep_innermost) {
  std::vector<LoopRV> prefix;
  const std::vector<LoopRV>& first = nest.loops[0];
  for (size_t i = 0; i < first.size(); ++i) {
    const ForNode* loop = s.loop(first[i]);
    bool shared_spatial = loop->for_kind == ForKind::Serial;
    for (size_t b = 0; b < nest.blocks.size() && shared_spatial; ++b) {
      shared_spatial = i < nest.loops[b].size() && s.loop(nest.loops[b][i]) == loop && !nest.blocks[b].loop_is_reduce[i];
    }
    if (!shared_spatial) break;
    prefix.push_back(first[i]);
    if (i + 1 < first.size() && loop->body.as<ForNode>() != s.loop(first[i + 1])) break;
  }
  // A nest of one block keeps its innermost loop for vectorization.
  if (keep_innermost && nest.blocks.size() == 1 && prefix.size() == first.size() && prefix.size() > 1) {
    prefix.pop_back();
  }
  return prefix;
}

void sample_compute_locations(Schedule& s, const std::set<std::string>& tiled, DecisionFeed& feed,
                              std::vector<DecisionKind>& kinds) {
  std::vector<ops::BlockInfo> blocks = ops::collect_blocks(s.func());
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    // Read afresh: an earlier draw may have inlined one of its consumers into another.
    const ops::BlockInfo b = ops::block_info(s, it->name);
    if (tiled.count(b.name) || b.writes_param || b.consumers.empty()) continue;
    BlockRV block = s.get_block(b.name);
    std::vector<LoopRV> own = s.get_loops(block);
    // Alone in its nest: its outermost loop holds no other block.
    bool alone = true;
    for (const ops::BlockInfo& other : ops::collect_blocks(s.func())) {
      if (other.name == b.name) continue;
      std::vector<LoopRV> l = s.get_loops(s.get_block(other.name));
      alone = alone && (own.empty() || l.empty() || s.loop(l[0]) != s.loop(own[0]));
    }
    if (!alone) continue;
    // Candidate loops: the first consumer's loops that enclose every consumer, outside
    // the reduction loops of each.
    ops::BlockInfo first = ops::block_info(s, b.consumers[0]);
    std::vector<LoopRV> host = s.get_loops(s.get_block(first.name));
    size_t usable = 0;
    for (; usable < host.size(); ++usable) {
      bool ok = !first.loop_is_reduce[usable];
      for (size_t c = 1; c < b.consumers.size() && ok; ++c) {
        ops::BlockInfo other = ops::block_info(s, b.consumers[c]);
        std::vector<LoopRV> l = s.get_loops(s.get_block(other.name));
        ok = usable < l.size() && s.loop(l[usable]) == s.loop(host[usable]) && !other.loop_is_reduce[usable];
      }
      if (!ok) break;
    }
    std::vector<int64_t> choices = {-1};  // -1: the root, -2: inline, k >= 0: under host[k]
    if (!b.is_reduction) choices.push_back(-2);
    for (size_t k = 0; k < usable; ++k) choices.push_back(static_cast<int64_t>(k));
    if (choices.size() == 1) continue;
    ExprRV pick = s.sample_categorical(choices, std::vector<double>(choices.size(), 1.0), feed.index(choices.size()));
    kinds.push_back(DecisionKind::ComputeLocation);
    int64_t where = s.get(pick);
    ops::try_step([&] {
      if (where == -2) s.compute_inline(block);
      if (where >= 0) s.compute_at(block, host[where]);
    });
  }
}

void sample_parallel(Schedule& s, const SketchContext& ctx, DecisionFeed& feed, std::vector<DecisionKind>& kinds) {
  for (const Nest& nest : root_nests(s)) {
    std::vector<LoopRV> prefix = parallel_prefix(s, nest, true);
    // Counts of fused loops to choose from: from the fewest that give every core work.
    std::vector<int64_t> counts;
    int64_t product = 1;
    for (size_t k = 0; k < prefix.size(); ++k) {
      int64_t e = extent_of(s, prefix[k]);
      if (e < 0) break;
      product *= e;
      if (product >= ctx.num_cores || k + 1 == prefix.size()) counts.push_back(static_cast<int64_t>(k + 1));
    }
    if (counts.empty() || product < 2) continue;
    ExprRV pick = s.sample_categorical(counts, std::vector<double>(counts.size(), 1.0), feed.index(counts.size()));
    kinds.push_back(DecisionKind::Parallel);
    std::vector<LoopRV> fused(prefix.begin(), prefix.begin() + s.get(pick));
    ops::try_step([&] { s.parallel(fused.size() == 1 ? fused[0] : s.fuse(fused)); });
  }
}

// True when every access of the block realized by `realize` moves along its last
// dimension only, or not at all, as `loop` advances: vectorized, it loads and stores
// whole vectors or broadcasts, not gathers and scatters (the copy of a layout rewrite
// reads along one dimension and writes along another).
bool unit_stride_along(const BlockRealizeNode* realize, const Var& loop) {
  auto uses = [](const Expr& e, const std::set<const VarNode*>& vars) {
    bool found = false;
    post_order_visit(e, [&](const Node* n) {
      found |= n->kind == NodeKind::Var && vars.count(static_cast<const VarNode*>(n));
    });
    return found;
  };
  auto* block = static_cast<const BlockNode*>(realize->block.get());
  std::set<const VarNode*> moving;
  for (size_t k = 0; k < block->iter_vars.size() && k < realize->iter_values.size(); ++k) {
    if (uses(realize->iter_values[k], {loop.get()})) moving.insert(block->iter_vars[k].var.get());
  }
  bool unit = true;
  auto check = [&](const std::vector<Expr>& indices) {
    for (size_t d = 0; d + 1 < indices.size(); ++d) unit = unit && !uses(indices[d], moving);
  };
  post_order_visit(block->body, [&](const Node* n) {
    if (n->kind == NodeKind::BufferLoad) check(static_cast<const BufferLoadNode*>(n)->indices);
    if (n->kind == NodeKind::BufferStore) check(static_cast<const BufferStoreNode*>(n)->indices);
  });
  return unit;
}

void vectorize_innermost(Schedule& s) {
  for (const ops::BlockInfo& b : ops::collect_blocks(s.func())) {
    std::vector<LoopRV> loops = s.get_loops(s.get_block(b.name));
    if (loops.empty() || b.loop_is_reduce.back()) continue;
    const ForNode* loop = s.loop(loops.back());
    int64_t e = extent_of(s, loops.back());
    const BlockRealizeNode* only_this_block = loop->body.as<BlockRealizeNode>();
    if (loop->for_kind != ForKind::Serial || !only_this_block || e < 2 ||
        !unit_stride_along(only_this_block, loop->loop_var)) {
      continue;
    }
    // A longer row (a wide panel's copy) is vectorized 64 elements at a time.
    if (e <= 64) {
      ops::try_step([&] { s.vectorize(loops.back()); });
    } else if (e % 64 == 0) {
      ops::try_step([&] { s.vectorize(s.split(loops.back(), {std::nullopt, 64})[1]); });
    }
  }
}

void sample_unroll(Schedule& s, DecisionFeed& feed, std::vector<DecisionKind>& kinds) {
  const std::vector<int64_t>& steps = auto_unroll_steps();
  for (const Nest& nest : root_nests(s)) {
    ExprRV pick = s.sample_categorical(steps, std::vector<double>(steps.size(), 1.0), feed.index(steps.size()));
    kinds.push_back(DecisionKind::Unroll);
    s.annotate(nest.loops[0][0], kAutoUnrollMaxStep, pick);
  }
}

// GPU: a nest no rule bound to threads gets its leading spatial loops fused and split
// into blockIdx.x x threadIdx.x, the threads drawn.
void sample_thread_binding(Schedule& s, const SketchContext& ctx, DecisionFeed& feed,
                           std::vector<DecisionKind>& kinds) {
  for (const Nest& nest : root_nests(s)) {
    bool bound = false;
    for (const std::vector<LoopRV>& loops : nest.loops) {
      for (LoopRV l : loops) bound |= s.loop(l)->for_kind == ForKind::ThreadBinding;
    }
    if (bound) continue;
    std::vector<LoopRV> prefix = parallel_prefix(s, nest, false);
    if (prefix.empty()) continue;
    int64_t product = 1;
    for (LoopRV l : prefix) product *= std::max<int64_t>(extent_of(s, l), 1);
    std::vector<int64_t> threads;
    for (int64_t t = 32; t <= ctx.max_threads_per_block; t *= 2) {
      if (t == 32 || t <= product) threads.push_back(t);
    }
    ExprRV pick = s.sample_categorical(threads, std::vector<double>(threads.size(), 1.0), feed.index(threads.size()));
    kinds.push_back(DecisionKind::ThreadExtent);
    ops::try_step([&] {
      LoopRV fused = prefix.size() == 1 ? prefix[0] : s.fuse(prefix);
      std::vector<LoopRV> parts = s.split(fused, {std::nullopt, pick});
      s.bind(parts[0], "blockIdx.x");
      s.bind(parts[1], "threadIdx.x");
    });
  }
}

// GPU: a shared-memory copy's own loops (below the loops it shares with its consumer)
// fused and spread over the threadIdx.x of the nest, so that the block's threads fetch
// the tile together.
void cooperative_fetch(Schedule& s) {
  for (const ops::BlockInfo& b : ops::collect_blocks(s.func())) {
    if (!b.output.defined() || b.output->scope != "shared" || b.consumers.empty()) continue;
    std::vector<LoopRV> loops = s.get_loops(s.get_block(b.name));
    std::vector<LoopRV> host = s.get_loops(s.get_block(b.consumers[0]));
    size_t shared = 0;
    while (shared < loops.size() && shared < host.size() && s.loop(loops[shared]) == s.loop(host[shared])) ++shared;
    int64_t threads = 0;
    for (size_t k = 0; k < shared; ++k) {
      if (s.loop(loops[k])->thread_tag == "threadIdx.x") threads = extent_of(s, loops[k]);
    }
    if (shared == loops.size() || threads < 1) continue;
    std::vector<LoopRV> own(loops.begin() + static_cast<std::ptrdiff_t>(shared), loops.end());
    ops::try_step([&] {
      LoopRV fused = own.size() == 1 ? own[0] : s.fuse(own);
      std::vector<LoopRV> parts = s.split(fused, {std::nullopt, threads});
      s.bind(parts[1], "threadIdx.x");
    });
  }
}

// Each reduction's init moves out of its reduction loops, into copies of the spatial
// loops inside the outermost reduction loop: the accumulation loop then has no branch,
// and a register tile can stay in registers across it. Not a reduction spread over
// threads: its lowering starts each thread's partial itself and needs the init in place.
void decompose_reductions(Schedule& s) {
  for (const ops::BlockInfo& b : ops::collect_blocks(s.func())) {
    if (!b.is_reduction) continue;
    auto first_reduce = std::find(b.loop_is_reduce.begin(), b.loop_is_reduce.end(), true);
    if (first_reduce == b.loop_is_reduce.end()) continue;
    BlockRV block = s.get_block(b.name);
    std::vector<LoopRV> loops = s.get_loops(block);
    bool across_threads = false;
    for (size_t i = 0; i < loops.size(); ++i) {
      across_threads |= b.loop_is_reduce[i] && s.loop(loops[i])->for_kind == ForKind::ThreadBinding;
    }
    if (across_threads) continue;
    LoopRV at = loops[first_reduce - b.loop_is_reduce.begin()];
    ops::try_step([&] { s.decompose_reduction(block, at); });
  }
}

}  // namespace

std::vector<DecisionKind> annotate_randomly(Schedule& s, const std::set<std::string>& tiled, const SketchContext& ctx,
                                            const Decisions& decisions, size_t first) {
  DecisionFeed feed(decisions, first);
  std::vector<DecisionKind> kinds;
  sample_compute_locations(s, tiled, feed, kinds);
  if (ctx.target.is_gpu()) {
    cooperative_fetch(s);
    sample_thread_binding(s, ctx, feed, kinds);
  } else {
    sample_parallel(s, ctx, feed, kinds);
    vectorize_innermost(s);
  }
  sample_unroll(s, feed, kinds);
  decompose_reductions(s);
  return kinds;
}

}  // namespace temper::schedule_space
