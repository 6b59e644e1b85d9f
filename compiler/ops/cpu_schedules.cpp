#include "compiler/ops/cpu_schedules.h"

#include <algorithm>
#include <optional>
#include <set>
#include <thread>

#include "compiler/ir/functor.h"
#include "compiler/ops/block_info.h"

namespace temper::ops {
namespace {

int num_threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

int64_t loop_extent(const Schedule& s, LoopRV l) {
  const int64_t* c = as_const_int(s.loop(l)->extent);
  return c ? *c : -1;
}

// The largest of 16, 8, 4 that divides extent, or 0.
int vector_width_for(int64_t extent) {
  for (int w : {16, 8, 4}) {
    if (extent % w == 0) return w;
  }
  return 0;
}

// Fuses the leading spatial loops until there are a few chunks per thread, and makes the
// result parallel.
void parallelize_outer(Schedule& s, BlockRV block) {
  BlockInfo info = block_info(s, s.block_name(block));
  std::vector<LoopRV> loops = s.get_loops(block);
  std::vector<LoopRV> lead;
  int64_t chunks = 1;
  for (size_t l = 0; l < loops.size() && !info.loop_is_reduce[l] && chunks < 4 * num_threads(); ++l) {
    if (l + 1 == loops.size()) break;  // keep the innermost loop for vectorization
    int64_t e = loop_extent(s, loops[l]);
    if (e < 0) break;
    lead.push_back(loops[l]);
    chunks *= e;
  }
  if (lead.empty()) return;
  LoopRV outer = lead[0];
  if (lead.size() > 1 && !try_step([&] { outer = s.fuse(lead); })) outer = lead[0];
  try_step([&] { s.parallel(outer); });
}

// Blocks in reverse program order: consumers before their producers.
std::vector<BlockInfo> blocks_outputs_first(const Schedule& s) {
  std::vector<BlockInfo> blocks = collect_blocks(s.func());
  std::reverse(blocks.begin(), blocks.end());
  return blocks;
}

void inline_padding(Schedule& s) {
  for (const BlockInfo& b : blocks_outputs_first(s)) {
    bool is_pad = b.name.size() >= 3 && b.name.compare(b.name.size() - 3, 3, "pad") == 0;
    if (is_pad && !b.is_reduction && !b.writes_param) try_step([&] { s.compute_inline(s.get_block(b.name)); });
  }
}

void apply_tiled(Schedule& s) {
  for (const BlockInfo& b : blocks_outputs_first(s)) {
    BlockRV block = s.get_block(b.name);
    vectorize_innermost_spatial(s, block);
    parallelize_outer(s, block);
  }
}

// The GEMM block of a matmul-family op: the reduction writing the product, and the
// elementwise epilogue after it, if any.
bool find_gemm(const Schedule& s, const OpInstance& op, std::string& gemm, std::string& epilogue) {
  if (op.name != "matmul" && op.name != "batch_matmul" && op.name != "dense") return false;
  for (const BlockInfo& b : collect_blocks(s.func())) {
    if (b.is_reduction) gemm = b.name;
  }
  for (const BlockInfo& b : collect_blocks(s.func())) {
    if (b.name != gemm && !b.is_reduction) epilogue = b.name;
  }
  return !gemm.empty();
}

// Softmax, layer norm and the like: every reduction runs along the output's rows (its
// innermost axis). One parallel loop over the rows computes each row's statistics and then
// the row, in L1 and local buffers of one row, instead of one parallel loop and one pass
// over memory per stage; each reduction is vectorized by rfactor (one partial result per
// lane, then their reduction). Returns false, leaving s as it was, for any other program.
bool schedule_row_reductions(Schedule& s) {
  std::vector<BlockInfo> blocks = collect_blocks(s.func());
  if (blocks.empty() || !blocks.back().writes_param || blocks.back().is_reduction) return false;
  int outputs = 0, reductions = 0;
  for (const BlockInfo& b : blocks) {
    outputs += b.writes_param;
    reductions += b.is_reduction;
  }
  if (outputs != 1 || reductions == 0) return false;
  Schedule t = s;
  BlockRV out = t.get_block(blocks.back().name);
  std::vector<LoopRV> loops = t.get_loops(out);
  if (loops.size() < 2) return false;
  int64_t row_length = loop_extent(t, loops.back());
  int width = vector_width_for(row_length);
  int64_t rows = 1;
  for (size_t l = 0; l + 1 < loops.size(); ++l) rows *= loop_extent(t, loops[l]);
  if (width == 0 || rows < 2 * num_threads()) return false;
  for (const BlockInfo& b : blocks) {
    if (!b.is_reduction) continue;
    std::vector<LoopRV> rl = t.get_loops(t.get_block(b.name));
    int reduce_loops = static_cast<int>(std::count(b.loop_is_reduce.begin(), b.loop_is_reduce.end(), true));
    if (reduce_loops != 1 || !b.loop_is_reduce.back() || loop_extent(t, rl.back()) != row_length) return false;
  }
  try {
    std::vector<BlockRV> partials;
    for (const BlockInfo& b : blocks) {
      if (!b.is_reduction) continue;
      std::vector<LoopRV> parts = t.split(t.get_loops(t.get_block(b.name)).back(), {std::nullopt, width});
      BlockRV rf = t.rfactor(parts[1], 0);
      std::vector<LoopRV> rl = t.get_loops(rf);
      t.reorder({rl[rl.size() - 1], rl[rl.size() - 2]});  // the lanes innermost
      partials.push_back(rf);
    }
    loops = t.get_loops(out);
    LoopRV row = loops.size() > 2 ? t.fuse(std::vector<LoopRV>(loops.begin(), loops.end() - 1)) : loops[0];
    t.parallel(row);
    for (const BlockInfo& b : blocks_outputs_first(t)) {
      if (!b.writes_param) t.compute_at(t.get_block(b.name), row);
    }
    std::set<std::string> vectorized;
    for (BlockRV rf : partials) {
      std::vector<LoopRV> rl = t.get_loops(rf);
      BlockRV init = t.decompose_reduction(rf, rl[rl.size() - 2]);
      t.vectorize(t.get_loops(init).back());
      t.vectorize(t.get_loops(rf).back());
      vectorized.insert({t.block_name(rf), t.block_name(init)});
    }
    for (const BlockInfo& b : collect_blocks(t.func())) {
      if (!b.is_reduction && !vectorized.count(b.name)) vectorize_innermost_spatial(t, t.get_block(b.name));
    }
  } catch (const ScheduleError&) {
    return false;
  }
  s = t;
  return true;
}

}  // namespace

void vectorize_innermost_spatial(Schedule& s, BlockRV block) {
  BlockInfo info = block_info(s, s.block_name(block));
  std::vector<LoopRV> loops = s.get_loops(block);
  int inner = -1;
  for (int l = static_cast<int>(loops.size()) - 1; l >= 0; --l) {
    if (!info.loop_is_reduce[l]) {
      inner = l;
      break;
    }
  }
  if (inner < 0) return;
  int width = vector_width_for(loop_extent(s, loops[inner]));
  if (width == 0) return;
  if (inner != static_cast<int>(loops.size()) - 1) {
    std::vector<LoopRV> order(loops.begin() + inner + 1, loops.end());
    order.push_back(loops[inner]);
    if (!try_step([&] { s.reorder(order); })) return;
  }
  LoopRV v = loops[inner];
  if (loop_extent(s, v) > width) {
    std::vector<LoopRV> parts;
    if (!try_step([&] { parts = s.split(v, {std::nullopt, width}); })) return;
    v = parts[1];
  }
  try_step([&] { s.vectorize(v); });
}

void schedule_gemm_cpu(Schedule& s, BlockRV gemm, int b_read_index, const BlockRV* epilogue, const GemmTiling& t,
                       const BlockRV* b_packing) {
  std::optional<BlockRV> packed_b;
  if (b_packing && t.pack_b) packed_b = *b_packing;
  if (!b_packing && t.pack_b) packed_b = s.cache_read(gemm, b_read_index, "global");
  // Not packed per panel, the op's own packing stage runs whole before the GEMM.
  if (b_packing && !t.pack_b) {
    vectorize_innermost_spatial(s, *b_packing);
    parallelize_outer(s, *b_packing);
  }
  BlockRV out = epilogue ? *epilogue : s.cache_write(gemm, 0, "local");
  std::vector<LoopRV> loops = s.get_loops(gemm);
  size_t n = loops.size();
  if (n < 3) throw ScheduleError(str("schedule_gemm_cpu: block ", s.block_name(gemm), " has fewer than 3 loops"));
  std::vector<LoopRV> outer(loops.begin(), loops.end() - 3);
  std::vector<LoopRV> i = s.split(loops[n - 3], {std::nullopt, t.mr});
  std::vector<LoopRV> j = s.split(loops[n - 2], {std::nullopt, t.nr});
  std::vector<LoopRV> k = {loops[n - 1]};
  // A reduction loop takes no tail (decompose_reduction refuses its predicate).
  if (t.k_unroll > 1) k = s.split(k[0], {std::nullopt, t.k_unroll}, /*allow_tail=*/false);
  std::vector<LoopRV> order = outer;
  order.insert(order.end(), {j[0], i[0]});
  order.insert(order.end(), k.begin(), k.end());
  order.insert(order.end(), {i[1], j[1]});
  s.reorder(order);
  // Parallel over the B panels (and batches): each thread packs its own panels.
  std::vector<LoopRV> par = outer;
  par.push_back(j[0]);
  LoopRV panel = par.size() > 1 ? s.fuse(par) : par[0];
  if (t.parallel) s.parallel(panel);
  // B's K x NR panel is packed contiguously once per panel, then read by every row tile.
  if (packed_b) s.compute_at(*packed_b, panel);
  // The MR x NR tile accumulates in registers and is written back after the k loop.
  s.reverse_compute_at(out, i[0]);
  BlockRV init = s.decompose_reduction(gemm, k[0]);
  if (k.size() > 1) s.unroll(k[1]);
  s.unroll(i[1]);
  s.vectorize(j[1]);
  if (packed_b) vectorize_innermost_spatial(s, *packed_b);
  for (BlockRV b : {out, init}) vectorize_innermost_spatial(s, b);
}

constexpr int64_t kRowsReadingPanelsInPlace = 128;

GemmTiling GemmTiling::for_target(const Target& target, int64_t m, int64_t n) {
  int bits = target.vector_bits();
  int lanes = bits / 32;
  GemmTiling t;
  t.mr = bits == 512 ? 8 : 6;
  t.nr = 2 * lanes;
  if (m < t.mr) t.mr = static_cast<int>(m);
  // Fewer columns when N is not a multiple of the tile but is of a smaller one -- while the
  // narrower tile keeps enough accumulators: its mr x nr/lanes accumulators are the only
  // independent FMA chains, and with fewer than about four each step waits on the FMA's
  // latency, which costs more than a tail (dense 1x1000x1280, Zen 4, 2 threads, warm:
  // 0.047 ms with one vector's width and one chain, 0.033 ms with two and a tail).
  constexpr int kFewestChains = 4;
  while (t.nr > lanes && n % t.nr != 0 && (t.mr * (t.nr / lanes - 1) >= kFewestChains || n < t.nr)) t.nr -= lanes;
  if (n < t.nr) t.nr = static_cast<int>(n);
  // Up to 128 rows read each panel in place: copying it first is one more pass over B,
  // which a model reads cold (dense 1x1000x1280, Zen 4, 2 threads: 0.78 ms with the
  // copies, 0.42 without; BERT's 128-row MatMuls: tuning chose no copy on every shape,
  // and the default's copies cost 1.4x in the model). Longer panels, read by more row
  // tiles, pay for the copy (1024^3).
  if (m <= kRowsReadingPanelsInPlace) t.pack_b = false;
  return t;
}

Schedule schedule_cpu_default(const OpInstance& op) {
  return schedule_cpu_default(op, Target::parse("llvm -mcpu=native"));
}

Schedule schedule_gemm_op_cpu(const OpInstance& op, const GemmTiling& t) {
  Schedule s(op.func);
  std::string gemm, epilogue;
  if (!find_gemm(s, op, gemm, epilogue)) {
    throw UserError(str("schedule_gemm_op_cpu: op '", op.name, "' is not matmul, batch_matmul or dense"));
  }
  BlockRV ep = epilogue.empty() ? BlockRV{} : s.get_block(epilogue);
  // reads: the accumulator, A, then B.
  schedule_gemm_cpu(s, s.get_block(gemm), 2, epilogue.empty() ? nullptr : &ep, t);
  return s;
}

Schedule schedule_cpu_default(const OpInstance& op, const Target& target) {
  Schedule s(op.func);
  std::string gemm, epilogue;
  if (find_gemm(s, op, gemm, epilogue)) {
    std::vector<LoopRV> loops = s.get_loops(s.get_block(gemm));
    size_t n = loops.size();
    return schedule_gemm_op_cpu(
        op, GemmTiling::for_target(target, loop_extent(s, loops[n - 3]), loop_extent(s, loops[n - 2])));
  }
  if (schedule_row_reductions(s)) return s;
  inline_padding(s);
  apply_tiled(s);
  return s;
}

Schedule schedule_cpu_tiled(const OpInstance& op) {
  Schedule s(op.func);
  apply_tiled(s);
  return s;
}

Schedule schedule_cpu_staged(const OpInstance& op) {
  Schedule s(op.func);
  for (const BlockInfo& b : blocks_outputs_first(s)) {
    BlockRV block = s.get_block(b.name);
    if (b.writes_param && b.is_reduction) {
      // Accumulate in a local buffer, written back once per outermost iteration.
      BlockRV copy;
      if (try_step([&] { copy = s.cache_write(block, 0, "local"); })) {
        std::vector<LoopRV> loops = s.get_loops(block);
        if (!loops.empty()) try_step([&] { s.reverse_compute_at(copy, loops[0]); });
      }
    } else if (!b.writes_param && b.consumers.size() == 1) {
      // A producer computed inside its consumer's outermost loop.
      std::vector<LoopRV> loops = s.get_loops(s.get_block(b.consumers[0]));
      if (!loops.empty()) try_step([&] { s.compute_at(block, loops[0]); });
    }
  }
  return s;
}

}  // namespace temper::ops
