// The conv2d_winograd_nchwc template (ops/winograd.h): each stage a parallel loop nest of
// its own, over the blocked layout's channel lanes as vectors.
//
//   input transform  per (tile, input-channel block): the a x a patch's Bt d B with every
//                    row, column and term unrolled, so its coefficients are literals and
//                    its reads fixed offsets; the a^2 results stay in a local buffer
//   GEMMs            the a^2 products V U as the conv2d_nchwc template's register tile:
//                    tile_t tiles x tile_kb output-channel blocks of accumulators, one
//                    broadcast of V times tile_kb vectors of U per input channel
//   output transform per (tile row, output-channel block): At M A of each tile, unrolled
//                    as the input's; a fused epilogue goes under this loop
//
//   tile_t       tiles of the GEMM's register tile (a divisor of the tiles)
//   tile_kb      output-channel blocks of the GEMM's register tile (a divisor of K/block)
//   outer_order  the GEMM's parallel loop over (channel-block tiles, tile rows) in that
//                order ("k_t", U's slice reused across tiles) or tiles first ("t_k")
//   unroll_ci    the GEMM's loop over an input block's lanes unrolled or not
//   pad          the padded input a parallel stage of its own ("root") or read through
//                bounds checks in the input transform ("inline")
#include "compiler/ops/shape.h"
#include "compiler/ops/winograd.h"
#include "schedule_space/cpu_templates.h"
#include "schedule_space/templates/data_stage.h"
#include "schedule_space/templates/register_budget.h"

namespace temper::schedule_space {
namespace {

constexpr const char* kOp = "conv2d_winograd_nchwc";
constexpr int kMaxVectorsK = 4;
constexpr int kMaxTiles = 28;
constexpr int64_t kDefaultMaxTiles = 8;

struct WinogradShape {
  int64_t tiles, out_blocks, block, m;
  bool padded;  // the input has a padding stage (the workload pads, or the tiles overhang)
};

WinogradShape winograd_shape(const ops::OpInstance& op, const ops::Workload& w) {
  ops::Shape v = ops::static_shape(op.inputs[1], kOp);  // [a, a, Kb, Cb, b, b]
  ops::Shape out = ops::static_shape(op.outputs[0], kOp);
  int64_t m = w.get_int("tile");
  ops::Padding2d pad = ops::padding_of(w);
  int64_t TH = ops::winograd_tiles(out[2], m), TW = ops::winograd_tiles(out[3], m);
  bool padded = pad.top > 0 || pad.left > 0 || TH * m + 2 > w.get_int("H") + pad.top ||
                TW * m + 2 > w.get_int("W") + pad.left;
  return {out[0] * TH * TW, v[2], v[5], m, padded};
}

void define_winograd(ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w, const Target& target) {
  int lanes = vector_lanes(target);
  WinogradShape b = winograd_shape(op, w);
  int64_t max_blocks = std::max<int64_t>(1, kMaxVectorsK * lanes / b.block);
  space.define_knob("tile_t", divisor_knob_values(b.tiles, kMaxTiles));
  space.define_knob("tile_kb", divisor_knob_values(b.out_blocks, max_blocks));
  space.define_knob("outer_order", {"k_t", "t_k"});
  space.define_knob("unroll_ci", {false, true});
  space.define_knob("pad", {"root", "inline"});
  add_register_tile_constraint(space, "tile_t", "tile_kb", b.block, target);
}

// A transform stage whose loops are ordered [parallel..., serial..., unrolled..., the two
// term reductions, the lanes]: the parallel ones fused, the write-back of its local
// buffer after the serial ones, everything but the lanes unrolled (rows, columns and
// terms: literal coefficients, fixed offsets) and the lanes vectorized. Returns the
// parallel loop.
LoopRV schedule_transform(Schedule& s, const std::string& name, size_t parallel_loops, size_t serial_loops) {
  BlockRV block = s.get_block(name);
  BlockRV write_back = s.cache_write(block, 0, "local");
  std::vector<LoopRV> loops = s.get_loops(block);
  LoopRV tiles = s.fuse(std::vector<LoopRV>(loops.begin(), loops.begin() + parallel_loops));
  s.parallel(tiles);
  loops = s.get_loops(block);  // [tiles, serial..., unrolled..., ru, rv, lanes]
  s.reverse_compute_at(write_back, loops[serial_loops]);
  BlockRV init = s.decompose_reduction(block, loops[loops.size() - 3]);
  for (size_t i = 1 + serial_loops; i + 1 < loops.size(); ++i) {
    if (loop_extent(s, loops[i]) > 1) s.unroll(loops[i]);
  }
  for (BlockRV b : {init, block, write_back}) {
    LoopRV lanes = s.get_loops(b).back();
    if (loop_extent(s, lanes) > 1) s.vectorize(lanes);
  }
  return tiles;
}

Schedule apply_winograd(const Config& c, const ops::OpInstance& op, const ops::Workload& w, const Target& target) {
  int lanes = vector_lanes(target);
  WinogradShape shape = winograd_shape(op, w);
  Schedule s(op.func);

  // Input transform: loops e, f, t, co, ci, ku, kv -> (t, co) parallel, then e, f, ku, kv
  // unrolled around the vector of lanes.
  {
    BlockRV in = s.get_block(str(kOp, "_input"));
    std::vector<LoopRV> l = s.get_loops(in);
    s.reorder({l[2], l[3], l[0], l[1], l[5], l[6], l[4]});
  }
  LoopRV input_tiles = schedule_transform(s, str(kOp, "_input"), 2, 0);

  // GEMMs: loops e, f, t, ko, ki, rco, rci.
  BlockRV gemm = s.get_block(str(kOp, "_gemm"));
  BlockRV gemm_back = s.cache_write(gemm, 0, "local");
  std::vector<LoopRV> g = s.get_loops(gemm);
  std::vector<LoopRV> t = s.split(g[2], {std::nullopt, c.knob_int("tile_t")});
  std::vector<LoopRV> ko = s.split(g[3], {std::nullopt, c.knob_int("tile_kb")});
  std::vector<LoopRV> outer = {g[0], g[1]};
  if (c.knob_string("outer_order") == "k_t") {
    outer.insert(outer.end(), {ko[0], t[0]});
  } else {
    outer.insert(outer.end(), {t[0], ko[0]});
  }
  std::vector<LoopRV> order = outer;
  order.insert(order.end(), {g[5], g[6], t[1], ko[1], g[4]});
  s.reorder(order);
  LoopRV gemm_tiles = s.fuse(outer);
  s.parallel(gemm_tiles);
  s.reverse_compute_at(gemm_back, gemm_tiles);
  BlockRV gemm_init = s.decompose_reduction(gemm, g[5]);
  for (LoopRV l : {t[1], ko[1]}) {
    if (loop_extent(s, l) > 1) s.unroll(l);
  }
  if (c["unroll_ci"].get<bool>() && loop_extent(s, g[6]) > 1) s.unroll(g[6]);
  if (loop_extent(s, g[4]) > 1) {
    s.vectorize(g[4]);
    for (BlockRV b : {gemm_init, gemm_back}) s.vectorize(s.get_loops(b).back());
  }

  // Output transform: loops n, ko, p, q, ki, lu, lv -> (n, ko, p / m) parallel, q / m
  // serial, then p % m, q % m, lu, lv unrolled around the vector of lanes.
  {
    BlockRV out = s.get_block(kOp);
    std::vector<LoopRV> l = s.get_loops(out);
    std::vector<LoopRV> p = s.split(l[2], {std::nullopt, shape.m});
    std::vector<LoopRV> q = s.split(l[3], {std::nullopt, shape.m});
    s.reorder({l[0], l[1], p[0], q[0], p[1], q[1], l[5], l[6], l[4]});
  }
  schedule_transform(s, kOp, 3, 1);

  if (shape.padded) place_padding(s, str(kOp, "_pad"), c.knob_string("pad"), input_tiles, lanes);
  return s;
}

Config default_winograd(const ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w,
                        const Target& target) {
  int lanes = vector_lanes(target);
  WinogradShape b = winograd_shape(op, w);
  int64_t tile_kb = 1;
  if (vector_registers(target) >= 32 && b.out_blocks % 2 == 0 && b.block <= lanes) tile_kb = 2;
  int64_t tile_t = largest_fitting_rows(b.tiles, kDefaultMaxTiles, tile_kb * b.block, target);
  return space.from_json({{"knobs",
                           {{"tile_t", tile_t},
                            {"tile_kb", tile_kb},
                            {"outer_order", "k_t"},
                            {"unroll_ci", false},
                            {"pad", "root"}}}});
}

}  // namespace

const Template& conv2d_winograd_nchwc_template() {
  static const Template t{"conv2d_winograd_nchwc.cpu", define_winograd, apply_winograd, default_winograd};
  return t;
}

}  // namespace temper::schedule_space
