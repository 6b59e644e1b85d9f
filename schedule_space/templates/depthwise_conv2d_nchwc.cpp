// The depthwise_conv2d_nchwc template: each channel block's output plane cut into tiles of
// tile_p rows x tile_q columns, one vector (the block's lanes) per output pixel, that
// accumulate in registers while the kernel window's loops run outside the tile. Each step
// loads the window position's weight vector once and one contiguous input vector per tile
// pixel -- a strided window reads whole vectors too, where the plain layout needs gathers.
// (n, row tile, channel block) are fused and parallel, rows outermost, as in the convs'
// default (conv2d_nchwc.cpp): each thread then reads the rows of the activation it wrote
// in the kernel before, where a channel-block split reads half of them from the other
// core's cache (MobileNetV2 defaults with the convs' rows-first default, Zen 4, 2
// threads: 0.89-1.02x, about 0.95x pooled, the latency of both split by channel blocks,
// four runs of 12-30 interleaved pairs; alone, either order runs within noise).
//
//   tile_p         output rows of the tile: a divisor of P, at most 4
//   tile_q         output columns of the tile: a divisor of Q, at most 16
//   pad            the padding stage computed per tile row ("tile"), as a parallel stage
//                  of its own ("root"), or inlined into the window's loads ("inline")
//   unroll_window  the kernel-column loop unrolled (neighbouring columns then share
//                  their input loads) or not
//
// Valid configs keep the accumulators, a weight and an input vector in the registers. The
// default is what tuning chose on nearly every MobileNetV2 layer (Zen 4, 2 threads): one
// row of the widest column tile up to 14 that divides Q, the padding inlined into the
// window's loads (lowering makes its condition, the pixel's and not the lane's, a guard per
// window row and drops the taps of padded columns: guard_padded_taps.h), the window
// unrolled.
#include "compiler/ops/shape.h"
#include "schedule_space/cpu_templates.h"
#include "schedule_space/templates/data_stage.h"
#include "schedule_space/templates/register_budget.h"

namespace temper::schedule_space {
namespace {

constexpr const char* kOp = "depthwise_conv2d_nchwc";
constexpr int64_t kMaxRows = 4;
constexpr int64_t kMaxColumns = 16;
constexpr int64_t kDefaultMaxColumns = 14;

ops::Shape output_shape(const ops::OpInstance& op) {
  return ops::static_shape(op.outputs[0], kOp);  // [N, Cb, P, Q, b]
}

// Accumulators plus the weight vector and one input vector.
int64_t registers_needed(int64_t rows, int64_t cols) {
  return rows * cols + 2;
}

void define_depthwise_nchwc(ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w,
                            const Target& target) {
  ops::Shape out = output_shape(op);
  space.define_knob("tile_p", divisor_knob_values(out[2], kMaxRows));
  space.define_knob("tile_q", divisor_knob_values(out[3], kMaxColumns));
  space.define_knob("pad", {"tile", "root", "inline"});
  space.define_knob("unroll_window", {true, false});
  int registers = vector_registers(target);
  space.add_constraint(str("the tile's accumulators, a weight and an input vector fit the ", registers,
                           " vector registers"),
                       [registers](const Config& c) {
                         return registers_needed(c.knob_int("tile_p"), c.knob_int("tile_q")) <= registers;
                       });
}

Schedule apply_depthwise_nchwc(const Config& c, const ops::OpInstance& op, const ops::Workload& w,
                               const Target& target) {
  Schedule s(op.func);
  BlockRV conv = s.get_block(kOp);
  BlockRV write_back = s.cache_write(conv, 0, "local");
  std::vector<LoopRV> loops = s.get_loops(conv);  // n, c, p, q, ci, ry, rx
  std::vector<LoopRV> p = s.split(loops[2], {std::nullopt, c.knob_int("tile_p")});
  std::vector<LoopRV> q = s.split(loops[3], {std::nullopt, c.knob_int("tile_q")});
  LoopRV ci = loops[4], ry = loops[5], rx = loops[6];
  s.reorder({loops[0], p[0], loops[1], q[0], ry, rx, p[1], q[1], ci});
  LoopRV tiles = s.fuse({loops[0], p[0], loops[1]});
  s.parallel(tiles);
  s.reverse_compute_at(write_back, q[0]);
  BlockRV init = s.decompose_reduction(conv, ry);
  for (LoopRV l : {p[1], q[1]}) {
    if (loop_extent(s, l) > 1) s.unroll(l);
  }
  if (c["unroll_window"].get<bool>() && loop_extent(s, rx) > 1) s.unroll(rx);
  if (loop_extent(s, ci) > 1) {
    s.vectorize(ci);
    for (BlockRV b : {init, write_back}) s.vectorize(s.get_loops(b).back());
  }
  if (has_padding(w)) place_padding(s, str(kOp, "_pad"), c.knob_string("pad"), tiles, vector_lanes(target));
  return s;
}

Config default_depthwise_nchwc(const ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w,
                               const Target& target) {
  ops::Shape out = output_shape(op);
  int64_t tile_q = 1;
  for (int64_t d : divisors_up_to(out[3], kDefaultMaxColumns)) {
    if (registers_needed(1, d) <= vector_registers(target)) tile_q = d;
  }
  return space.from_json({{"knobs", {{"tile_p", 1}, {"tile_q", tile_q}, {"pad", "inline"}, {"unroll_window", true}}}});
}

}  // namespace

const Template& depthwise_conv2d_nchwc_template() {
  static const Template t{"depthwise_conv2d_nchwc.cpu", define_depthwise_nchwc, apply_depthwise_nchwc,
                          default_depthwise_nchwc};
  return t;
}

}  // namespace temper::schedule_space
