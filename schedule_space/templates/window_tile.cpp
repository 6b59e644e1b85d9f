#include "schedule_space/templates/window_tile.h"

#include "schedule_space/templates/data_stage.h"
#include "schedule_space/templates/register_budget.h"

namespace temper::schedule_space {
namespace {

constexpr int64_t kMaxRows = 4;
constexpr int kMaxVectorsQ = 2;

}  // namespace

void define_window_tile(ConfigSpace& space, int64_t P, int64_t Q, const Target& target) {
  int lanes = vector_lanes(target);
  space.define_knob("tile_p", divisor_knob_values(P, kMaxRows));
  space.define_knob("tile_q", divisor_knob_values(Q, kMaxVectorsQ * lanes));
  space.define_knob("pad", {"tile", "root", "inline"});
  space.define_knob("unroll_window", {false, true});
  int registers = vector_registers(target);
  space.add_constraint(
      str("the tile's accumulators, an input vector and a broadcast fit the ", registers, " vector registers"),
      [lanes, registers](const Config& c) {
        return registers_used(c.knob_int("tile_p"), c.knob_int("tile_q"), lanes) <= registers;
      });
}

Config default_window_tile(const ConfigSpace& space, int64_t P, int64_t Q, int64_t column_stride,
                           const Target& target) {
  int lanes = vector_lanes(target);
  std::vector<int64_t> cols = divisors_up_to(Q, kMaxVectorsQ * lanes);
  int64_t tile_q = cols.back();
  for (int64_t d : cols) {
    if (d % lanes == 0) tile_q = d;  // whole vectors when Q allows them
  }
  // Strided columns make every input vector a gather: scalar tiles measured 4x faster.
  if (column_stride > 1) tile_q = 1;
  int64_t tile_p = 1;
  for (int64_t d : divisors_up_to(P, kMaxRows)) {
    if (registers_used(d, tile_q, lanes) <= vector_registers(target)) tile_p = d;
  }
  return space.from_json(
      {{"knobs", {{"tile_p", tile_p}, {"tile_q", tile_q}, {"pad", "tile"}, {"unroll_window", false}}}});
}

Schedule apply_window_tile(const Config& c, const PrimFunc& func, const WindowBlocks& blocks, const Target& target) {
  int lanes = vector_lanes(target);
  Schedule s(func);
  BlockRV reduce = s.get_block(blocks.reduce);
  BlockRV copy = s.cache_write(reduce, 0, "local");
  BlockRV consumer = copy;
  if (!blocks.epilogue.empty()) {
    // The epilogue reads the accumulator directly; the copy to the intermediate goes.
    s.compute_inline(copy);
    consumer = s.get_block(blocks.epilogue);
  }
  std::vector<LoopRV> loops = s.get_loops(reduce);  // n, c, p, q, ry, rx
  std::vector<LoopRV> p = s.split(loops[2], {std::nullopt, c.knob_int("tile_p")});
  std::vector<LoopRV> q = s.split(loops[3], {std::nullopt, c.knob_int("tile_q")});
  s.reorder({loops[0], loops[1], p[0], q[0], loops[4], loops[5], p[1], q[1]});
  LoopRV tiles = s.fuse({loops[0], loops[1], p[0]});
  s.parallel(tiles);
  s.reverse_compute_at(consumer, q[0]);
  BlockRV init = s.decompose_reduction(reduce, loops[4]);
  if (loop_extent(s, q[1]) > 1) s.vectorize(q[1]);
  if (loop_extent(s, p[1]) > 1) s.unroll(p[1]);
  if (c["unroll_window"].get<bool>() && loop_extent(s, loops[5]) > 1) s.unroll(loops[5]);
  // With one column the tile's innermost loop is not a column loop: nothing to vectorize.
  if (c.knob_int("tile_q") > 1) {
    for (BlockRV b : {init, consumer}) s.vectorize(s.get_loops(b).back());
  }
  if (!blocks.pad.empty()) place_padding(s, blocks.pad, c.knob_string("pad"), tiles, lanes);
  return s;
}

}  // namespace temper::schedule_space
