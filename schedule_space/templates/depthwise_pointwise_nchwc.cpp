// The depthwise_pointwise_nchwc template: MobileNet's depthwise conv and the 1x1 conv after
// it as one kernel. The parallel loop runs over the 1x1 conv's output rows; each iteration
// first computes the one row of the depthwise conv's activation that its row reads (every
// channel block, in a row buffer that stays in L1/L2), then the 1x1 conv's register tiles
// over that row, as conv2d_nchwc.cpp tiles it. The depthwise map, which the two kernels
// would write out whole and read back (MobileNetV2: 9 MB per inference), never leaves the
// cache, and each thread's 1x1 rows read what the same thread just computed.
//
//   tile_kb     1x1 conv: output-channel blocks of its register tile (a divisor of K/b;
//               the tile is conv2d_nchwc's, blocked_conv_tile.h)
//   tile_q      1x1 conv: output columns of its register tile (a divisor of Q)
//   unroll_ci   1x1 conv: the loop over the lanes of an input block unrolled or not
//   dw_tile_q   depthwise: output columns of its register tile (a divisor of Q, at most 16)
//   pad         the depthwise conv's padding inlined into its loads ("inline": the taps
//               in the padding skipped, see guard_padded_taps.h) or computed per row for
//               the input rows one row of the depthwise conv reads ("tile")
//
// The depthwise row's tile applies the bias and activation to its accumulators before it
// stores them (the write-back inlined into the activation), so the row is written once.
// Valid configs keep either register tile within the vector registers. The default follows
// the separate templates' rules for the two halves: the depthwise template's widest column
// tile up to 14 and its padding inline; conv2d_nchwc's pointwise tile of one channel block
// by up to 14 columns, an input block's lanes unrolled on maps of 7 columns or fewer.
#include "compiler/ops/shape.h"
#include "schedule_space/cpu_templates.h"
#include "schedule_space/templates/blocked_conv_tile.h"
#include "schedule_space/templates/data_stage.h"
#include "schedule_space/templates/register_budget.h"

namespace temper::schedule_space {
namespace {

constexpr const char* kOp = "depthwise_pointwise_nchwc";
constexpr int kMaxVectorsK = 4;
constexpr int64_t kMaxColumns = 28;
constexpr int64_t kPointwiseDefaultColumns = 14;
constexpr int64_t kMaxDepthwiseColumns = 16;
constexpr int64_t kDefaultDepthwiseColumns = 14;

struct Shapes {
  int64_t out_blocks, block, P, Q;  // the 1x1 conv's output [N, out_blocks, P, Q, block]
};

Shapes shapes(const ops::OpInstance& op) {
  ops::Shape out = ops::static_shape(op.outputs[0], kOp);
  return {out[1], out[4], out[2], out[3]};
}

// The depthwise tile's accumulators plus its weight and input vectors.
int64_t depthwise_registers(int64_t columns) {
  return columns + 2;
}

void define_depthwise_pointwise(ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w,
                                const Target& target) {
  Shapes s = shapes(op);
  int lanes = vector_lanes(target);
  space.define_knob("tile_kb", divisor_knob_values(s.out_blocks, std::max<int64_t>(1, kMaxVectorsK * lanes / s.block)));
  space.define_knob("tile_q", divisor_knob_values(s.Q, kMaxColumns));
  space.define_knob("unroll_ci", {false, true});
  space.define_knob("dw_tile_q", divisor_knob_values(s.Q, kMaxDepthwiseColumns));
  space.define_knob("pad", {"inline", "tile"});
  add_register_tile_constraint(space, "tile_q", "tile_kb", s.block, target);
  int registers = vector_registers(target);
  space.add_constraint(str("the depthwise tile's accumulators, a weight and an input vector fit the ", registers,
                           " vector registers"),
                       [registers](const Config& c) { return depthwise_registers(c.knob_int("dw_tile_q")) <= registers; });
}

// The loops compute_at gave `block`, by iteration variable: after the `outer` loops it sits
// under, one per spatial variable whose extent is not 1, then one per reduction variable
// (the last `reductions` of `extents`).
std::vector<LoopRV> loops_by_axis(Schedule& s, BlockRV block, size_t outer, const std::vector<int64_t>& extents,
                                  size_t reductions) {
  std::vector<LoopRV> loops = s.get_loops(block);
  std::vector<LoopRV> by_axis(extents.size());
  size_t next = outer;
  for (size_t i = 0; i < extents.size(); ++i) {
    if (extents[i] == 1 && i < extents.size() - reductions) continue;
    TEMPER_CHECK(next < loops.size() && loop_extent(s, loops[next]) == extents[i], kOp,
                 ": the depthwise row's loops are not the ones expected");
    by_axis[i] = loops[next++];
  }
  return by_axis;
}

Schedule apply_depthwise_pointwise(const Config& c, const ops::OpInstance& op, const ops::Workload& w,
                                   const Target& target) {
  Shapes sh = shapes(op);
  Schedule s(op.func);
  // The 1x1 conv, its rows parallel, every channel-block tile of a row in its iteration.
  LoopRV rows = tile_blocked_conv(s, kOp, c.knob_int("tile_kb"), c.knob_int("tile_q"), BlockedConvOuter::RowsOnly,
                                  false, c["unroll_ci"].get<bool>());

  // The depthwise row each row of the 1x1 conv reads, computed at the start of its iteration.
  std::string dw_name = str(kOp, "_dw");
  BlockRV act = s.get_block(str(kOp, "_dw_act"));
  BlockRV dw = s.get_block(dw_name);
  BlockRV dw_back = s.cache_write(dw, 0, "local");
  s.compute_at(act, rows);
  s.compute_at(dw_back, rows);
  s.compute_at(dw, rows);
  int64_t in_blocks = ops::static_shape(op.inputs[0], kOp)[1];
  int64_t R = w.get_int("R"), S = w.get_int("S");
  // n, c, p, q, ci, ry, rx; n and p are one each under a row.
  std::vector<LoopRV> d = loops_by_axis(s, dw, 1, {1, in_blocks, 1, sh.Q, sh.block, R, S}, 2);
  LoopRV dc = d[1], dq = d[3], dci = d[4], dry = d[5], drx = d[6];
  int64_t dw_tile_q = c.knob_int("dw_tile_q");
  std::vector<LoopRV> dqs = sh.Q > 1 ? s.split(dq, {std::nullopt, dw_tile_q}) : std::vector<LoopRV>{};
  std::vector<LoopRV> dorder;
  for (LoopRV l : {dc, dqs.empty() ? LoopRV{} : dqs[0], dry, drx, dqs.empty() ? LoopRV{} : dqs[1], dci}) {
    if (l.id >= 0) dorder.push_back(l);
  }
  s.reorder(dorder);
  LoopRV tile_loop = !dqs.empty() ? dqs[0] : in_blocks > 1 ? dc : rows;
  s.reverse_compute_at(dw_back, tile_loop);
  s.compute_inline(dw_back);
  s.reverse_compute_at(act, tile_loop);
  BlockRV dw_init = s.decompose_reduction(dw, dry);
  if (!dqs.empty() && loop_extent(s, dqs[1]) > 1) s.unroll(dqs[1]);
  if (S > 1) s.unroll(drx);
  if (sh.block > 1) {
    s.vectorize(dci);
    for (BlockRV b : {dw_init, act}) s.vectorize(s.get_loops(b).back());
  }
  if (has_padding(w)) place_padding(s, str(dw_name, "_pad"), c.knob_string("pad"), rows, vector_lanes(target));
  return s;
}

Config default_depthwise_pointwise(const ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w,
                                   const Target& target) {
  Shapes s = shapes(op);
  int64_t dw_tile_q = 1;
  for (int64_t d : divisors_up_to(s.Q, kDefaultDepthwiseColumns)) {
    if (depthwise_registers(d) <= vector_registers(target)) dw_tile_q = d;
  }
  return space.from_json({{"knobs",
                           {{"tile_kb", 1},
                            {"tile_q", largest_fitting_rows(s.Q, kPointwiseDefaultColumns, s.block, target)},
                            {"unroll_ci", s.Q <= 7},
                            {"dw_tile_q", dw_tile_q},
                            {"pad", "inline"}}}});
}

}  // namespace

const Template& depthwise_pointwise_nchwc_template() {
  static const Template t{"depthwise_pointwise_nchwc.cpu", define_depthwise_pointwise, apply_depthwise_pointwise,
                          default_depthwise_pointwise};
  return t;
}

}  // namespace temper::schedule_space
