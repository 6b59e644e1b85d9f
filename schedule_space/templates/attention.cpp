// The attention template (ops/attention.h): one parallel loop over blocks of tile_i query
// rows of one head, under which every stage runs for those rows alone, into buffers of
// the block's size (the rows' scores and probabilities, tile_i x T, stay in L1/L2 instead
// of going out to memory as [B, S, T] arrays and coming back):
//
//   scores   a register tile of tile_i rows x tile_j vectors of keys, accumulated over the
//            head dimension: each step broadcasts tile_i query values and loads tile_j
//            vectors of the transposed keys
//   max, sum the row reductions vectorized by rfactor (one partial result per lane)
//   exp      vectorized over the keys
//   product  a register tile of tile_i rows x tile_e vectors of V's columns, accumulated
//            over the keys: each step broadcasts tile_i probabilities and loads tile_e
//            vectors of a row of V
//   out      the product over the row's sum, vectorized
//
//   tile_i   query rows per iteration of the parallel loop (a divisor of S, at most 16)
//   tile_j   vectors of keys in the scores' register tile (1, 2 or 4, dividing T's vectors)
//   tile_e   vectors of V's columns in the product's register tile (likewise for E)
//
// A config is valid when both register tiles, with their loaded vectors and a broadcast,
// fit the vector registers. The default takes 4 rows (or the largest divisor of S up to
// 4) and the widest tiles that fit: a balance between the parallel loop's iterations
// (B x S / tile_i, enough for every thread) and the reuse of each loaded vector.
#include "compiler/ops/shape.h"
#include "schedule_space/cpu_templates.h"
#include "schedule_space/templates/data_stage.h"
#include "schedule_space/templates/register_budget.h"

namespace temper::schedule_space {
namespace {

constexpr const char* kOp = "attention";
constexpr int64_t kMaxRows = 16;
constexpr int64_t kDefaultRows = 4;

struct AttentionShape {
  int64_t S, T, E;
};

AttentionShape attention_shape(const ops::Workload& w) {
  return {w.get_int("S"), w.get_int("T"), w.get_int("E")};
}

// The vector width a loop of `extent` is cut by: the target's lanes, else the widest of 8
// and 4 that divides it, else 1 (scalar).
int64_t width_for(int64_t extent, const Target& target) {
  for (int64_t w : {static_cast<int64_t>(vector_lanes(target)), int64_t{8}, int64_t{4}}) {
    if (w <= vector_lanes(target) && extent % w == 0) return w;
  }
  return 1;
}

// The vector counts up to 4 that divide extent / width.
std::vector<nlohmann::json> vector_tile_values(int64_t extent, int64_t width) {
  std::vector<nlohmann::json> values;
  for (int64_t v : {1, 2, 4}) {
    if ((extent / width) % v == 0) values.push_back(v);
  }
  return values;
}

void define_attention(ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w, const Target& target) {
  AttentionShape a = attention_shape(w);
  space.define_knob("tile_i", divisor_knob_values(a.S, kMaxRows));
  space.define_knob("tile_j", vector_tile_values(a.T, width_for(a.T, target)));
  space.define_knob("tile_e", vector_tile_values(a.E, width_for(a.E, target)));
  int registers = vector_registers(target);
  space.add_constraint(
      str("both register tiles, their loaded vectors and a broadcast fit the ", registers, " vector registers"),
      [registers](const Config& c) {
        int64_t rows = c.knob_int("tile_i");
        auto used = [&](int64_t vectors) { return rows * vectors + vectors + 1; };
        return used(c.knob_int("tile_j")) <= registers && used(c.knob_int("tile_e")) <= registers;
      });
}

// A register tile over `block`'s last three loops (rows, columns, reduction) under the
// parallel loop: the columns cut into vectors of `width` lanes, `vectors` of them per tile;
// the reduction outside the tile, which is unrolled over its rows and vectors.
void schedule_register_tile(Schedule& s, BlockRV block, size_t outer_loops, int64_t vectors, int64_t width) {
  // The outer loops, ii, column, reduction; compute_at leaves ii out when the block has one row.
  std::vector<LoopRV> loops = s.get_loops(block);
  LoopRV column = loops[loops.size() - 2], reduction = loops.back();
  std::vector<LoopRV> c = s.split(column, {std::nullopt, vectors, width});
  std::vector<LoopRV> tile = {c[1]};
  if (loops.size() == outer_loops + 3) tile.insert(tile.begin(), loops[outer_loops]);
  std::vector<LoopRV> order = {c[0], reduction};
  order.insert(order.end(), tile.begin(), tile.end());
  order.push_back(c[2]);
  s.reorder(order);
  BlockRV init = s.decompose_reduction(block, reduction);
  for (LoopRV l : tile) {
    if (loop_extent(s, l) > 1) s.unroll(l);
  }
  if (width > 1) {
    s.vectorize(c[2]);
    s.vectorize(s.get_loops(init).back());
  }
}

// A row reduction (rows, ii, j) split into `width` partial results, one per lane, that the
// loop over the row's vectors accumulates (the block's rfactor), then reduces.
BlockRV rfactor_row_reduction(Schedule& s, BlockRV block, int64_t width) {
  std::vector<LoopRV> parts = s.split(s.get_loops(block).back(), {std::nullopt, width});
  // The lanes last in the partial results' buffer [B, S, width]: contiguous vectors.
  BlockRV rf = s.rfactor(parts[1], 2);
  std::vector<LoopRV> loops = s.get_loops(rf);
  s.reorder({loops[loops.size() - 1], loops[loops.size() - 2]});  // the lanes innermost
  return rf;
}

void vectorize_last(Schedule& s, BlockRV block, int64_t width) {
  if (width <= 1) return;
  LoopRV last = s.get_loops(block).back();
  if (loop_extent(s, last) > width) last = s.split(last, {std::nullopt, width})[1];
  s.vectorize(last);
}

// Every stage but out computed under `rows`, for the rows one iteration of it writes;
// producers after their consumers, so each one's readers are under `rows` already.
void at_rows_then(Schedule& s, BlockRV scores, BlockRV row_max, BlockRV exp, BlockRV row_sum, BlockRV product,
                  const std::vector<BlockRV>& partials, LoopRV rows) {
  std::vector<BlockRV> at_rows = {product, row_sum};
  if (!partials.empty()) at_rows.push_back(partials[1]);
  at_rows.push_back(exp);
  at_rows.push_back(row_max);
  if (!partials.empty()) at_rows.push_back(partials[0]);
  at_rows.push_back(scores);
  for (BlockRV b : at_rows) s.compute_at(b, rows);
}

Schedule apply_attention(const Config& c, const ops::OpInstance& op, const ops::Workload& w, const Target& target) {
  AttentionShape a = attention_shape(w);
  int64_t wt = width_for(a.T, target), we = width_for(a.E, target);
  Schedule s(op.func);
  std::string name = kOp;
  BlockRV out = s.get_block(name);
  BlockRV scores = s.get_block(name + "_scores");
  BlockRV row_max = s.get_block(name + "_max");
  BlockRV exp = s.get_block(name + "_exp");
  BlockRV row_sum = s.get_block(name + "_sum");
  BlockRV product = s.get_block(name + "_product");
  std::vector<BlockRV> partials;
  if (wt > 1) {
    for (BlockRV r : {row_max, row_sum}) partials.push_back(rfactor_row_reduction(s, r, wt));
  }

  // The blocks of rows: with the heads' layout (ops/attention.h), one head per iteration of
  // the parallel loop, its keys copied transposed ([D, T]: each key vector contiguous for
  // the scores' tile) once, then its blocks of rows in turn; else (head, block of rows)
  // fused and parallel.
  LoopRV rows;
  size_t outer_loops = 1;
  if (w.get_int("heads") > 0) {
    std::vector<LoopRV> loops = s.get_loops(out);  // n, i, h, e
    s.reorder({loops[0], loops[2], loops[1]});
    LoopRV head = s.fuse({loops[0], loops[2]});
    s.parallel(head);
    rows = s.split(loops[1], {std::nullopt, c.knob_int("tile_i")})[0];
    outer_loops = 2;
    // scores reads its accumulator, q, then k [N, T, H, D]; the copy is [N, H, D, T].
    BlockRV keys = s.cache_read(scores, 2, "local", {0, 2, 3, 1});
    at_rows_then(s, scores, row_max, exp, row_sum, product, partials, rows);
    s.compute_at(keys, head);
    vectorize_last(s, keys, width_for(a.T, target));
  } else {
    std::vector<LoopRV> loops = s.get_loops(out);  // b, i, e
    std::vector<LoopRV> i = s.split(loops[1], {std::nullopt, c.knob_int("tile_i")});
    rows = s.fuse({loops[0], i[0]});
    s.parallel(rows);
    at_rows_then(s, scores, row_max, exp, row_sum, product, partials, rows);
  }

  schedule_register_tile(s, scores, outer_loops, c.knob_int("tile_j"), wt);
  schedule_register_tile(s, product, outer_loops, c.knob_int("tile_e"), we);
  for (BlockRV rf : partials) {
    std::vector<LoopRV> rl = s.get_loops(rf);
    BlockRV init = s.decompose_reduction(rf, rl[rl.size() - 2]);
    s.vectorize(s.get_loops(init).back());
    s.vectorize(s.get_loops(rf).back());
  }
  vectorize_last(s, exp, wt);
  vectorize_last(s, out, we);
  return s;
}

Config default_attention(const ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w,
                         const Target& target) {
  AttentionShape a = attention_shape(w);
  int64_t rows = largest_divisor_up_to(a.S, kDefaultRows);
  int registers = vector_registers(target);
  auto widest = [&](int64_t extent) {
    int64_t best = 1;
    for (const nlohmann::json& v : vector_tile_values(extent, width_for(extent, target))) {
      int64_t n = v.get<int64_t>();
      if (rows * n + n + 1 <= registers) best = n;
    }
    return best;
  };
  return space.from_json({{"knobs", {{"tile_i", rows}, {"tile_j", widest(a.T)}, {"tile_e", widest(a.E)}}}});
}

}  // namespace

const Template& attention_template() {
  static const Template t{"attention.cpu", define_attention, apply_attention, default_attention};
  return t;
}

}  // namespace temper::schedule_space
