// The conv2d_nchwc template: a direct convolution over the blocked layout (ops/nchwc.h),
// the way oneDNN's and onnxruntime's NCHWc kernels run it. A register tile of tile_q
// output columns x tile_kb output-channel blocks accumulates while the reductions run
// outside it; each step multiplies one broadcast input value (channel rci of a column) by
// the tile_kb weight vectors of that input channel, which sit contiguously in the packed
// weight, as does the input's channel block. Input, weight and output stay blocked: a graph
// in the blocked layout (graph/pass_nchwc_layout.h) converts nothing between convs.
//
//   tile_kb      output-channel blocks of the tile (a divisor of K/out_block)
//   tile_q       output columns of the tile (a divisor of Q)
//   outer_order  the parallel loop over (channel-block tiles, output rows), in that order
//                ("k_p") or rows first ("p_k"; the default: where neighbouring kernels
//                both split by rows, as the depthwise template always does, each thread
//                reads in a model the rows of the activation it wrote in the kernel
//                before -- data another core wrote a moment ago streams in at about a
//                third of the rate of its own, 43 vs 130 GB/s on Zen 4; k_p where the
//                weight outweighs the input, see default_conv2d_nchwc)
//   unroll_rx    the kernel-column loop unrolled or not
//   unroll_ci    the loop over the lanes of an input block unrolled or not
//   pad          the padded input computed by a parallel stage of its own ("root"),
//                inside the parallel loop for the rows one iteration reads ("tile"), or
//                not at all ("inline": each tap reads the input where it lies inside it;
//                lowering turns the taps in the padding into guards, one per window row,
//                and drops the padded columns' taps from the unrolled tile -- see
//                guard_padded_taps.h -- so the border's multiply-adds with zeros are
//                skipped, as oneDNN's brgconv does)
//
// A config is valid when the accumulators, one step's weight vectors and a broadcast fit
// the vector registers. The default takes the conv2d template's measured choice: up to 7
// columns, and two blocks of channels where there are 32 vector registers (AVX-512);
// pointwise (1x1) convs and stems over the plain image have their own rules
// (default_conv2d_nchwc). The template serves group_conv2d_nchwc as well: its output
// blocks read the input blocks of their own group, so a tile of channel blocks shares its
// broadcast only within a group.
#include "compiler/ops/nchwc.h"
#include "compiler/ops/shape.h"
#include "compiler/ops/window.h"
#include "schedule_space/cpu_templates.h"
#include "schedule_space/templates/blocked_conv_tile.h"
#include "schedule_space/templates/data_stage.h"
#include "schedule_space/templates/register_budget.h"

namespace temper::schedule_space {
namespace {

constexpr const char* kOp = "conv2d_nchwc";
constexpr int kMaxVectorsK = 4;
constexpr int kMaxColumns = 28;
constexpr int64_t kDefaultMaxColumns = 7;
constexpr int64_t kPointwiseMaxColumns = 14;
constexpr int64_t kMinAccumulators = 8;
// The default reads the padding inline, skipping the taps in it, where the output map is
// at least this many rows and columns: ResNet-18's 512-channel 7x7 3x3 layer ran 1.22x
// faster alone (Zen 4, 2 threads; 18% of its taps fall in the padding) and 1.13x in the
// model, its strided and stem layers 0.91-0.98x oneDNN's brgconv (0.73-0.94x with a root
// stage), its 8x8 layers at 64x64 1.2x in the model. On a 4x4 or 2x2 map a tile does a few
// multiply-adds per weight it streams from memory, and the taps skipped on the border
// rows, half the rows or all, leave holes in that stream: 1.1x and up to 1.5x slower in
// the model (ResNet-18 at 64x64) though faster alone. There the root stage stays.
constexpr int64_t kMinInlinePadMap = 7;

struct BlockedShape {
  int64_t out_blocks, out_block, P, Q;
};

BlockedShape blocked_shape(const ops::OpInstance& op) {
  ops::Shape out = ops::static_shape(op.outputs[0], kOp);  // [N, Ko, P, Q, kb]
  return {out[1], out[4], out[2], out[3]};
}

void define_conv2d_nchwc(ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w, const Target& target) {
  int lanes = vector_lanes(target);
  BlockedShape b = blocked_shape(op);
  int64_t max_blocks = std::max<int64_t>(1, kMaxVectorsK * lanes / b.out_block);
  space.define_knob("tile_kb", divisor_knob_values(b.out_blocks, max_blocks));
  space.define_knob("tile_q", divisor_knob_values(b.Q, kMaxColumns));
  space.define_knob("outer_order", {"k_p", "p_k"});
  space.define_knob("unroll_rx", {false, true});
  space.define_knob("unroll_ci", {false, true});
  space.define_knob("pad", {"root", "tile", "inline"});
  add_register_tile_constraint(space, "tile_q", "tile_kb", b.out_block, target);
}

Schedule apply_conv2d_nchwc(const Config& c, const ops::OpInstance& op, const ops::Workload& w, const Target& target) {
  Schedule s(op.func);
  LoopRV tiles = tile_blocked_conv(
      s, kOp, c.knob_int("tile_kb"), c.knob_int("tile_q"),
      c.knob_string("outer_order") == "k_p" ? BlockedConvOuter::ChannelTilesFirst : BlockedConvOuter::RowsFirst,
      c["unroll_rx"].get<bool>(), c["unroll_ci"].get<bool>());
  if (has_padding(w)) place_padding(s, str(kOp, "_pad"), c.knob_string("pad"), tiles, vector_lanes(target));
  return s;
}

// The fewest channel blocks (a divisor of the output's blocks, registers permitting) that
// give a tile of tile_q columns 8 accumulators, enough to hide the FMA latency (2 pipes x 4
// cycles on Zen 4); else the most that fit.
int64_t blocks_hiding_latency(int64_t tile_q, const BlockedShape& b, const Target& target) {
  int lanes = vector_lanes(target);
  int64_t tile_kb = 1;
  for (int64_t d : divisors_up_to(b.out_blocks, kMaxVectorsK * lanes / b.out_block)) {
    if (registers_used(tile_q, d * b.out_block, lanes) > vector_registers(target)) break;
    tile_kb = d;
    if (tile_q * d >= kMinAccumulators) break;
  }
  return tile_kb;
}

Config default_conv2d_nchwc(const ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w,
                            const Target& target) {
  int lanes = vector_lanes(target);
  BlockedShape b = blocked_shape(op);
  int64_t tile_q = largest_divisor_up_to(b.Q, kDefaultMaxColumns);
  int64_t tile_kb = 1;
  bool wide_registers = vector_registers(target) >= 32;
  // Two vectors of channels per broadcast where 32 registers hold 7 x 2 accumulators: the
  // conv2d template's tuned choice on every ResNet-18 3x3 layer (Zen 4).
  if (wide_registers && b.out_blocks % 2 == 0 && 2 * b.out_block <= 2 * lanes) tile_kb = 2;
  // A stem over the plain image (in_block 1: a few channels) unrolls its window's
  // columns; a 7x7 one takes four blocks of channels by four columns, a smaller one pads
  // per tile: tuning's choices for the stems of ResNet-18 and -50 and of MobileNetV2
  // (2x the default's speed there).
  bool stem = w.get_int("in_block") == 1;
  int64_t groups = ops::nchwc_conv_groups(w);
  bool grouped = w.op == "group_conv2d_nchwc";
  std::string pad = "inline";  // see kMinInlinePadMap
  // Rows first (see the knob's comment above), but for a 1x1 conv whose weight outweighs
  // its input 8 times over (a classifier conv on a 3x3 map, MobileNetV2's 1x1 convs to 960
  // and 1280 channels on 7x7) channel-block tiles first: rows first, each thread reads the
  // whole weight once per row it owns; tiles first, half of it once (SqueezeNet's
  // classifier, 512 -> 1000 on 3x3, Zen 4: 0.82x the time). A 3x3 conv keeps rows first
  // (ResNet's 512 channels on 7x7 ran 1.15x slower tiles first).
  bool one_by_one = w.get_int("R") == 1 && w.get_int("S") == 1;
  int64_t weight_elements = w.get_int("K") * (w.get_int("C") / groups);
  int64_t input_elements = w.get_int("C") * w.get_int("H") * w.get_int("W");
  std::string outer_order = !stem && one_by_one && weight_elements >= 8 * input_elements ? "k_p" : "p_k";
  bool unroll_ci = false;
  if (grouped) {
    // Each block's reduction is short (one group's channels) and a tile spanning groups
    // shares no broadcast between its blocks: up to 14 columns, then blocks until the
    // accumulators hide the FMA latency. RegNet's 3x3 layers of groups of 8 (Zen 4):
    // 1.15-1.2x the conv2d_nchwc default's tile, about half the speed of oneDNN's
    // grouped blocked kernel.
    tile_q = largest_divisor_up_to(b.Q, kPointwiseMaxColumns);
    tile_kb = blocks_hiding_latency(tile_q, b, target);
  } else if (!stem && one_by_one && w.get_int("stride") == 1) {
    // Pointwise: one block of channels by up to 14 columns, and on 7x7 maps the input
    // block's lanes unrolled: tuning's choice on most 1x1 layers of MobileNetV2 and
    // ResNet-50 (Zen 4, weights cold: up to 1.9x the two-block default on 7x7 and 28x28;
    // the strided 1x1 projections kept the two-block tile). On maps of 4 columns or
    // fewer (a squeeze-excite conv on 1x1, a classifier on 3x3) one block leaves too few
    // accumulators: more blocks there.
    tile_kb = 1;
    tile_q = largest_divisor_up_to(b.Q, kPointwiseMaxColumns);
    unroll_ci = b.Q <= 7;
    if (tile_q <= 4) tile_kb = blocks_hiding_latency(tile_q, b, target);
  } else if (stem && w.get_int("R") * w.get_int("S") >= 25) {
    if (wide_registers && b.out_blocks % 4 == 0 && b.out_block == lanes) {
      tile_kb = 4;
      tile_q = largest_divisor_up_to(b.Q, 4);
    }
  } else if (stem) {
    pad = "tile";
  }
  if (pad == "inline" && std::min(b.P, b.Q) < kMinInlinePadMap) pad = "root";
  // A block of two vectors (16 lanes below AVX-512) holds fewer columns in 16 registers.
  tile_q = largest_fitting_rows(b.Q, tile_q, tile_kb * b.out_block, target);
  return space.from_json({{"knobs",
                           {{"tile_kb", tile_kb},
                            {"tile_q", tile_q},
                            {"outer_order", outer_order},
                            {"unroll_rx", stem},
                            {"unroll_ci", unroll_ci},
                            {"pad", pad}}}});
}

}  // namespace

const Template& conv2d_nchwc_template() {
  static const Template t{"conv2d_nchwc.cpu", define_conv2d_nchwc, apply_conv2d_nchwc, default_conv2d_nchwc};
  return t;
}

}  // namespace temper::schedule_space
