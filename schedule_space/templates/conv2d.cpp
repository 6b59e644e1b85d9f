// The conv2d template (NCHW, groups=1): a direct convolution whose output tile of
// output channels x output columns accumulates in registers while the reductions over
// input channels and the kernel window run outside it, like a GEMM micro-kernel.
//
//   layout       "NCHWc": a re-expression of the op -- the weight packed into
//                [K/kb, C, R, S, kb] blocks of kb output channels, the convolution written
//                into an [N, K/kb, P, Q, kb] buffer vectorized over kb (one weight vector
//                times one broadcast input value per output column), and an unpacking
//                stage back to NCHW. apply packs the weight on every call; the
//                prepacked hook splits the packing off into a function run once on a
//                constant weight. "NCHW": op.func itself, vectorized over the output
//                columns (one input vector times one broadcast weight per output
//                channel): nothing to pre-pack.
//   tile_k       the output channels of the tile (the block kb under NCHWc): a divisor of
//                K, at most four vectors
//   tile_q       the output columns of the tile: a divisor of Q, at most two vectors
//   outer_order  the parallel loop over (output-channel blocks, output rows), in that
//                order ("k_p") or rows first ("p_k")
//   unroll_rx    the kernel-column loop unrolled or not
//   pad          the padded input computed by a parallel stage of its own ("root"), or
//                inside the parallel loop, for the rows one (channel block, row) reads
//                ("tile": one parallel loop less, the padding redone per channel block)
//
// A config is valid when the tile's accumulators, the vector operand of one step and the
// broadcast fit the vector registers (16 below AVX-512, 32 with it). The default config
// is NCHWc with one vector of output channels and the widest column tile of at most 7
// that divides Q, which measured fastest on the ResNet-18 3x3 layers (AVX2); it takes two
// vectors of channels when Q has no divisor from 4 to 7, and always where there are 32
// vector registers (AVX-512). A 1x1 conv with 24 channels or fewer on either side
// defaults to NCHW (see is_narrow_pointwise).
#include "compiler/ops/conv.h"
#include "compiler/ops/shape.h"
#include "compiler/ops/window.h"
#include "schedule_space/cpu_templates.h"
#include "schedule_space/templates/data_stage.h"
#include "schedule_space/templates/register_budget.h"

namespace temper::schedule_space {
namespace {

constexpr int kMaxVectorsK = 4;
constexpr int kMaxVectorsQ = 2;
// The default tile's widest column count: 7 columns x 1 vector measured best on the
// ResNet-18 3x3 layers (AVX2, 2 threads); 8 and 14 columns ran 25-55% slower there.
constexpr int64_t kDefaultMaxColumns = 7;


using ops::pair_of;
using ops::window_of;

int64_t output_columns(const ops::OpInstance& op) {
  return ops::static_shape(op.outputs[0], "conv2d")[3];
}

bool is_nchwc(const Config& c) {
  return c.knob_string("layout") == "NCHWc";
}

void define_conv2d(ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w, const Target& target) {
  if (w.get_int("groups") != 1) {
    throw UserError(str("the conv2d template serves groups=1 only, not groups=", w.get_int("groups"),
                        " (depthwise_conv2d has its own template)"));
  }
  if (w.get("layout") != "NCHW") {
    throw UserError(str("the conv2d template serves layout=NCHW only, not layout=", w.get("layout")));
  }
  int lanes = vector_lanes(target);
  space.define_knob("layout", {"NCHWc", "NCHW"});
  space.define_knob("tile_k", divisor_knob_values(w.get_int("K"), kMaxVectorsK * lanes));
  space.define_knob("tile_q", divisor_knob_values(output_columns(op), kMaxVectorsQ * lanes));
  space.define_knob("outer_order", {"k_p", "p_k"});
  space.define_knob("unroll_rx", {false, true});
  space.define_knob("pad", {"root", "tile"});
  int registers = vector_registers(target);
  space.add_constraint(str("the tile's accumulators, one step's vector operand and a broadcast fit the ", registers,
                           " vector registers"),
                       [lanes, registers](const Config& c) {
                         int64_t k = c.knob_int("tile_k");
                         int64_t q = c.knob_int("tile_q");
                         int64_t used = is_nchwc(c) ? registers_used(q, k, lanes) : registers_used(k, q, lanes);
                         return used <= registers;
                       });
}

// The weight packed into [K/kb, C, R, S, kb] blocks of kb output channels.
te::Tensor pack_weight(const te::Tensor& weight, const ops::Workload& w, int64_t kb) {
  int64_t K = w.get_int("K"), C = w.get_int("C"), R = w.get_int("R"), S = w.get_int("S");
  using ops::index_const;
  return te::compute(
      {index_const(K / kb), index_const(C), index_const(R), index_const(S), index_const(kb)},
      [&](Var ko, Var c, Var r, Var s, Var ki) { return weight(ko * index_const(kb) + ki, c, r, s); }, "weight_pack");
}

// The convolution of op's input with the packed weight, computed in [N, K/kb, P, Q, kb]
// ("conv2d_nchwc") and unpacked into the op's NCHW output ("conv2d").
te::Tensor conv2d_of_packed(const ops::OpInstance& op, const ops::Workload& w, const te::Tensor& packed, int64_t kb) {
  const te::Tensor& input = op.inputs[0];
  ops::Shape out_shape = ops::static_shape(op.outputs[0], "conv2d");
  int64_t K = w.get_int("K"), C = w.get_int("C"), R = w.get_int("R"), S = w.get_int("S");
  ops::Window2d window = window_of(w);
  using ops::index_const;
  te::Tensor padded = ops::pad_spatial(input, ops::Layout::NCHW, window.padding, 0.0, "conv2d_pad");
  IterVar rc = te::reduce_axis({index_const(0), index_const(C)}, "rc");
  IterVar ry = te::reduce_axis({index_const(0), index_const(R)}, "ry");
  IterVar rx = te::reduce_axis({index_const(0), index_const(S)}, "rx");
  auto row = [&](const Expr& p) { return p * index_const(window.stride[0]) + ry * index_const(window.dilation[0]); };
  auto col = [&](const Expr& q) { return q * index_const(window.stride[1]) + rx * index_const(window.dilation[1]); };
  te::Tensor blocked = te::compute(
      {index_const(out_shape[0]), index_const(K / kb), index_const(out_shape[2]), index_const(out_shape[3]),
       index_const(kb)},
      [&](Var n, Var ko, Var p, Var q, Var ki) {
        return te::sum(padded(n, rc, row(p), col(q)) * packed(ko, rc, ry, rx, ki), {rc, ry, rx});
      },
      "conv2d_nchwc");
  return te::compute(
      op.outputs[0].shape(),
      [&](Var n, Var k, Var p, Var q) {
        return blocked(n, floordiv(k, index_const(kb)), p, q, floormod(k, index_const(kb)));
      },
      "conv2d");
}

// The op re-expressed with the weight packed by a stage "weight_pack" and the output
// unpacked: same parameters, same shapes, as op.func.
PrimFunc nchwc_func(const ops::OpInstance& op, const ops::Workload& w, int64_t kb) {
  te::Tensor packed = pack_weight(op.inputs[1], w, kb);
  return te::create_prim_func({op.inputs[0], op.inputs[1], conv2d_of_packed(op, w, packed, kb)}, op.func.name);
}

// nchwc_func with the weight parameter replaced by the packed weight.
PrimFunc nchwc_prepacked_func(const ops::OpInstance& op, const ops::Workload& w, int64_t kb) {
  const te::Tensor& weight = op.inputs[1];
  te::Tensor packed = te::placeholder(pack_weight(weight, w, kb).shape(), weight.dtype(), weight.name() + "_packed");
  return te::create_prim_func({op.inputs[0], packed, conv2d_of_packed(op, w, packed, kb)}, op.func.name);
}

// (weight, packed weight): the packing nchwc_func does on every call, alone.
PrimFunc weight_pack_func(const ops::OpInstance& op, const ops::Workload& w, int64_t kb) {
  const te::Tensor& weight = op.inputs[1];
  return te::create_prim_func({weight, pack_weight(weight, w, kb)}, op.func.name + "_weight_pack");
}

// Schedules every stage of op.func or of an NCHWc function but the weight's packing.
void schedule_conv2d(Schedule& s, const Config& c, const ops::Workload& w, const Target& target) {
  int lanes = vector_lanes(target);
  bool nchwc = is_nchwc(c);
  int64_t tile_k = c.knob_int("tile_k");
  int64_t tile_q = c.knob_int("tile_q");
  BlockRV conv = s.get_block(nchwc ? "conv2d_nchwc" : "conv2d");
  BlockRV write_back = s.cache_write(conv, 0, "local");
  std::vector<LoopRV> loops = s.get_loops(conv);
  LoopRV n = loops[0];
  LoopRV p = loops[2];
  LoopRV ko, ki;
  std::vector<LoopRV> reductions;
  if (nchwc) {  // n, ko, p, q, ki, rc, ry, rx
    ko = loops[1];
    ki = loops[4];
    reductions.assign(loops.begin() + 5, loops.end());
  } else {  // n, k, p, q, rc, ry, rx
    std::vector<LoopRV> k = s.split(loops[1], {std::nullopt, tile_k});
    ko = k[0];
    ki = k[1];
    reductions.assign(loops.begin() + 4, loops.end());
  }
  std::vector<LoopRV> q = s.split(loops[3], {std::nullopt, tile_q});
  std::vector<LoopRV> outer =
      c.knob_string("outer_order") == "k_p" ? std::vector<LoopRV>{n, ko, p} : std::vector<LoopRV>{n, p, ko};
  // The tile (qi x ki or ki x qi) innermost, its vector axis last; the reductions around it.
  std::vector<LoopRV> order = outer;
  order.push_back(q[0]);
  order.insert(order.end(), reductions.begin(), reductions.end());
  if (nchwc) {
    order.insert(order.end(), {q[1], ki});
  } else {
    order.insert(order.end(), {ki, q[1]});
  }
  s.reorder(order);
  LoopRV tiles = s.fuse(outer);
  s.parallel(tiles);
  s.reverse_compute_at(write_back, q[0]);
  BlockRV init = s.decompose_reduction(conv, reductions[0]);
  LoopRV vector_axis = nchwc ? ki : q[1];
  LoopRV unrolled_axis = nchwc ? q[1] : ki;
  if (loop_extent(s, unrolled_axis) > 1) s.unroll(unrolled_axis);
  if (c["unroll_rx"].get<bool>() && loop_extent(s, reductions[2]) > 1) s.unroll(reductions[2]);
  // The zeroing and the write-back of the tile are vectorized like the tile; a vector
  // axis of one leaves no vector loop in them.
  if (loop_extent(s, vector_axis) > 1) {
    s.vectorize(vector_axis);
    for (BlockRV b : {init, write_back}) s.vectorize(s.get_loops(b).back());
  }

  if (!window_of(w).padding.is_zero()) place_padding(s, "conv2d_pad", c.knob_string("pad"), tiles, lanes);
  if (nchwc) schedule_data_stage(s, "conv2d", lanes);
}

Schedule apply_conv2d(const Config& c, const ops::OpInstance& op, const ops::Workload& w, const Target& target) {
  if (!is_nchwc(c)) {
    Schedule s(op.func);
    schedule_conv2d(s, c, w, target);
    return s;
  }
  int64_t kb = c.knob_int("tile_k");
  Schedule s(nchwc_func(op, w, kb));
  schedule_conv2d(s, c, w, target);
  schedule_data_stage(s, "weight_pack", vector_lanes(target));
  return s;
}

std::optional<PrepackedSchedule> prepacked_conv2d(const Config& c, const ops::OpInstance& op, const ops::Workload& w,
                                                  const Target& target) {
  if (!is_nchwc(c)) return std::nullopt;
  int64_t kb = c.knob_int("tile_k");
  Schedule pack(weight_pack_func(op, w, kb));
  schedule_data_stage(pack, "weight_pack", vector_lanes(target));
  Schedule compute(nchwc_prepacked_func(op, w, kb));
  schedule_conv2d(compute, c, w, target);
  return PrepackedSchedule{1, std::move(pack), std::move(compute)};
}

// A pointwise conv with few input or output channels (MobileNetV2's 16->96, 24->144 and
// 96->24 1x1 layers) does little arithmetic per output element, so the NCHWc layout's
// extra pass over the output (written blocked, then unpacked) costs more than its
// weight-vector reuse gains: NCHW, vectorized over a row's columns, writes the output
// once. Tuning chose it on all four such MobileNetV2 layers (Zen 4, 2 threads: 1.6-6x
// faster than the NCHWc default); with 32 or more channels on both sides NCHWc won.
constexpr int64_t kMaxPointwiseChannelsForNchw = 24;
constexpr int64_t kMaxNchwTileK = 12;

bool is_narrow_pointwise(const ops::Workload& w) {
  bool pointwise = w.get_int("R") == 1 && w.get_int("S") == 1 && pair_of(w, "stride") == std::array<int64_t, 2>{1, 1};
  return pointwise && std::min(w.get_int("C"), w.get_int("K")) <= kMaxPointwiseChannelsForNchw;
}

Config default_conv2d(const ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w,
                      const Target& target) {
  int lanes = vector_lanes(target);
  int64_t K = w.get_int("K");
  int64_t Q = output_columns(op);
  if (is_narrow_pointwise(w)) {
    // A vector of columns (or the widest divisor of Q below one) by as many output
    // channels as divide K, up to 12.
    int64_t nchw_q = largest_divisor_up_to(Q, lanes);
    int64_t nchw_k = 1;
    for (int64_t d = 1; d <= std::min<int64_t>(K, kMaxNchwTileK); ++d) {
      if (K % d == 0 && registers_used(d, nchw_q, lanes) <= vector_registers(target)) nchw_k = d;
    }
    return space.from_json({{"knobs",
                             {{"layout", "NCHW"},
                              {"tile_k", nchw_k},
                              {"tile_q", nchw_q},
                              {"outer_order", "p_k"},
                              {"unroll_rx", false},
                              {"pad", "root"}}}});
  }
  int64_t tile_k = largest_divisor_up_to(K, lanes);
  int64_t tile_q = largest_divisor_up_to(Q, kDefaultMaxColumns);
  // 32 vector registers (AVX-512) hold two vectors of channels by the column tile: each
  // broadcast feeds two FMAs. Tuning chose it on every ResNet-18 3x3 layer there (2
  // threads, Zen 4: 0.15-0.25x faster than one vector).
  bool wide_registers = vector_registers(target) >= 32;
  if (wide_registers && K % (2 * lanes) == 0) tile_k = 2 * lanes;
  // Few columns: two vectors of channels keep more accumulators busy.
  int64_t narrow_q = largest_divisor_up_to(Q, 5);
  if (!wide_registers && tile_q < 4 && K % (2 * lanes) == 0 && 2 * narrow_q > tile_q) {
    tile_k = 2 * lanes;
    tile_q = narrow_q;
  }
  return space.from_json({{"knobs",
                           {{"layout", "NCHWc"},
                            {"tile_k", tile_k},
                            {"tile_q", tile_q},
                            {"outer_order", "k_p"},
                            {"unroll_rx", false},
                            {"pad", "root"}}}});
}

}  // namespace

const Template& conv2d_template() {
  static const Template t{"conv2d.cpu", define_conv2d, apply_conv2d, default_conv2d, prepacked_conv2d};
  return t;
}

}  // namespace temper::schedule_space
