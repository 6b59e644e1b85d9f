// The direct convolution GPU templates (conv2d with groups=1, depthwise_conv2d; NCHW):
// TVM's conv2d_nchw / depthwise_conv2d_nchw CUDA templates. Each thread block computes a
// tile of output channels x rows x columns of one image; each thread a register tile of
// it, accumulated in a "local" buffer; the block's threads stage the input and weight
// tiles its threads read into shared memory together. The padding is computed inline by
// that staging copy, never stored.
//
//   tile_f   the output channels split [block, vthread, thread, inner]; the block part
//            is fused with the batch and bound to blockIdx.z, the threads to threadIdx.z
//   tile_y   the output rows, the same way: blockIdx.y, vthread, threadIdx.y, inner
//   tile_x   the output columns: blockIdx.x, vthread, threadIdx.x, inner
//   tile_rc, tile_ry, tile_rx   (conv2d) the input channels and the kernel window split
//            [outer, inner]: per outer step, the block stages the input and weight
//            tiles of the inner parts and synchronises. depthwise_conv2d reduces over
//            the kernel window only: the block stages its whole window once.
//   auto_unroll_max_step   gpu_tiling.h
//
// Virtual threads run one after the other in the thread that owns them (as in
// gpu_gemm.cpp), each with its own staging. The fetch is not vectorized: the tiles'
// innermost extents are kernel-window widths and strided column ranges, rarely a
// multiple of a vector width.
//
// A config is valid when the target's limits hold (gpu_tiling.h), with the shared tiles
// estimated from the tile extents, stride and dilation; for depthwise_conv2d with a
// channel multiplier m, also when each virtual thread's channels are a multiple of m
// (only then does compute_at bound the input channels k / m that a tile reads). The
// default config: conv2d, 8 x 4 x 8 threads (channels x rows x columns), each computing
// 4 channels x 2 columns, the kernel window whole per step and the largest input-channel
// step up to 8 whose tiles fit the limits; depthwise_conv2d, up to 4 threads of channels
// (a multiple of m), 32 / that of rows and 8 of columns, each computing 2 columns.
// auto_unroll_max_step 512; every extent the largest divisor up to these.
#include "compiler/ops/shape.h"
#include "compiler/ops/window.h"
#include "schedule_space/gpu_templates.h"
#include "schedule_space/templates/data_stage.h"
#include "schedule_space/templates/gpu_tiling.h"

namespace temper::schedule_space {
namespace {

using nlohmann::json;

constexpr int kMaxFactor = 64;

using ops::pair_of;

// The workload's convolution parameters the templates use.
struct ConvShape {
  bool depthwise;
  int64_t C, K, P, Q, R, S;  // input channels, output channels, output rows and columns, window
  int64_t multiplier;        // depthwise: output channels per input channel
  std::array<int64_t, 2> stride, dilation;
  int64_t bytes;  // of one element
};

ConvShape conv_shape(const ops::OpInstance& op, const ops::Workload& w) {
  ops::Shape out = ops::static_shape(op.outputs[0], w.op);
  ConvShape s;
  s.depthwise = w.op == "depthwise_conv2d";
  s.C = w.get_int("C");
  s.K = out[1];
  s.P = out[2];
  s.Q = out[3];
  s.R = w.get_int("R");
  s.S = w.get_int("S");
  s.multiplier = s.depthwise ? w.get_int("multiplier") : 1;
  s.stride = pair_of(w, "stride");
  s.dilation = pair_of(w, "dilation");
  s.bytes = w.dtype().bytes();
  return s;
}

// The extents of one virtual thread's tiles under config c.
struct ConvTile {
  int64_t tf, ty, tx;  // threads
  int64_t fi, yi, xi;  // register tile
  int64_t rc, ry, rx;  // the reduction's inner parts: the extents staged per step
};

ConvTile tile_of(const Config& c, const ConvShape& s) {
  std::vector<int64_t> f = c.split("tile_f");
  std::vector<int64_t> y = c.split("tile_y");
  std::vector<int64_t> x = c.split("tile_x");
  if (s.depthwise) return ConvTile{f[2], y[2], x[2], f[3], y[3], x[3], 1, s.R, s.S};
  return ConvTile{
      f[2], y[2], x[2], f[3], y[3], x[3], c.split("tile_rc")[1], c.split("tile_ry")[1], c.split("tile_rx")[1]};
}

// Input rows or columns that `outputs` consecutive outputs read with `window` taps.
int64_t input_extent(int64_t outputs, int64_t window, int64_t stride, int64_t dilation) {
  return (outputs - 1) * stride + (window - 1) * dilation + 1;
}

// The bytes of the input and weight tiles staged per step (an upper bound where the
// tile's edge is cut by the image's).
int64_t shared_bytes(const ConvTile& t, const ConvShape& s) {
  int64_t channels = t.tf * t.fi;
  // depthwise: output channel k reads input channel k / multiplier.
  int64_t input_channels = s.depthwise ? (channels + s.multiplier - 1) / s.multiplier : t.rc;
  int64_t input = input_channels * input_extent(t.ty * t.yi, t.ry, s.stride[0], s.dilation[0]) *
                  input_extent(t.tx * t.xi, t.rx, s.stride[1], s.dilation[1]);
  int64_t weight = channels * t.rc * t.ry * t.rx;
  return (input + weight) * s.bytes;
}

void define_conv(ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w, const Target& target) {
  if (w.get("layout") != "NCHW") {
    throw UserError(str("the ", w.op, " GPU template serves layout=NCHW only, not layout=", w.get("layout")));
  }
  if (w.op == "conv2d" && w.get_int("groups") != 1) {
    throw UserError(str("the conv2d GPU template serves groups=1 only, not groups=", w.get_int("groups"),
                        " (depthwise_conv2d has its own template)"));
  }
  ConvShape s = conv_shape(op, w);
  SplitOptions four_way;
  four_way.num_outputs = 4;
  four_way.max_factor = kMaxFactor;
  space.define_split("tile_f", s.K, four_way);
  space.define_split("tile_y", s.P, four_way);
  space.define_split("tile_x", s.Q, four_way);
  if (!s.depthwise) {
    SplitOptions two_way;
    two_way.max_factor = kMaxFactor;
    space.define_split("tile_rc", s.C, two_way);
    space.define_split("tile_ry", s.R, two_way);
    space.define_split("tile_rx", s.S, two_way);
  }
  define_auto_unroll(space);
  if (s.depthwise && s.multiplier > 1) {
    // Then compute_at can bound the input channels a tile reads (k / multiplier): its
    // tiles start at a multiple of the multiplier.
    space.add_constraint(str("each virtual thread's channels (tile_f's threads x inner) are a multiple of the "
                             "multiplier ",
                             s.multiplier),
                         [s](const Config& c) {
                           ConvTile t = tile_of(c, s);
                           return t.tf * t.fi % s.multiplier == 0;
                         });
  }
  BlockUsage usage;
  usage.threads = [s](const Config& c) {
    ConvTile t = tile_of(c, s);
    return ThreadExtents{t.tx, t.ty, t.tf};
  };
  usage.shared_bytes = [s](const Config& c) { return shared_bytes(tile_of(c, s), s); };
  usage.local_bytes = [s](const Config& c) {
    ConvTile t = tile_of(c, s);
    return t.fi * t.yi * t.xi * s.bytes;
  };
  add_limit_constraints(space, target, usage);
}

Schedule apply_conv(const Config& c, const ops::OpInstance& op, const ops::Workload& w, const Target&) {
  bool depthwise = w.op == "depthwise_conv2d";
  Schedule s(op.func);
  BlockRV conv = s.get_block(w.op);
  // reads: the accumulator, the (padded) input, the weight.
  BlockRV input_shared = s.cache_read(conv, 1, "shared");
  BlockRV weight_shared = s.cache_read(conv, 2, "shared");
  if (has_padding(w)) s.compute_inline(s.get_block(w.op + "_pad"));
  BlockRV write_back = s.cache_write(conv, 0, "local");

  std::vector<LoopRV> loops = s.get_loops(conv);  // n, k, p, q, then (rc,) ry, rx
  auto split4 = [&](LoopRV loop, const std::string& knob) {
    std::vector<int64_t> f = c.split(knob);
    return s.split(loop, {std::nullopt, f[1], f[2], f[3]});
  };
  std::vector<LoopRV> f = split4(loops[1], "tile_f");
  std::vector<LoopRV> y = split4(loops[2], "tile_y");
  std::vector<LoopRV> x = split4(loops[3], "tile_x");
  std::vector<LoopRV> outer_reductions, inner_reductions;
  if (depthwise) {
    inner_reductions = {loops[4], loops[5]};
  } else {
    const char* knobs[] = {"tile_rc", "tile_ry", "tile_rx"};
    for (int r = 0; r < 3; ++r) {
      std::vector<LoopRV> parts = s.split(loops[4 + r], {std::nullopt, c.split(knobs[r])[1]});
      outer_reductions.push_back(parts[0]);
      inner_reductions.push_back(parts[1]);
    }
  }
  std::vector<LoopRV> order = {loops[0], f[0], y[0], x[0], f[1], y[1], x[1], f[2], y[2], x[2]};
  order.insert(order.end(), outer_reductions.begin(), outer_reductions.end());
  order.insert(order.end(), inner_reductions.begin(), inner_reductions.end());
  order.insert(order.end(), {f[3], y[3], x[3]});
  s.reorder(order);
  LoopRV images = s.fuse({loops[0], f[0]});
  s.bind(images, "blockIdx.z");
  s.bind(y[0], "blockIdx.y");
  s.bind(x[0], "blockIdx.x");
  for (LoopRV v : {f[1], y[1], x[1]}) s.bind(v, "vthread");
  s.bind(f[2], "threadIdx.z");
  s.bind(y[2], "threadIdx.y");
  s.bind(x[2], "threadIdx.x");

  s.reverse_compute_at(write_back, x[2]);
  s.decompose_reduction(conv, depthwise ? inner_reductions[0] : outer_reductions[0]);
  // conv2d stages per step of the outer reductions; depthwise once, inside the threads.
  LoopRV attach = depthwise ? x[2] : outer_reductions.back();
  size_t depth = depthwise ? 9 : 12;  // the fused images, 8 tile loops (and 3 outer reductions)
  ConvTile t = tile_of(c, conv_shape(op, w));
  for (BlockRV stage : {input_shared, weight_shared}) {
    s.compute_at(stage, attach);
    cooperative_fetch(s, stage, depth, {t.tx, t.ty, t.tf}, 1);
  }
  apply_auto_unroll(s, images, c);
  return s;
}

Config default_conv(const ConfigSpace& space, const ops::OpInstance& op, const ops::Workload& w, const Target&) {
  ConvShape s = conv_shape(op, w);
  json knobs = {{kAutoUnrollKnob, 512}};
  if (s.depthwise) {
    // Up to 4 threads of channels, a multiple of the multiplier.
    int64_t threads = s.multiplier * largest_divisor_up_to(s.C, std::max<int64_t>(1, 4 / s.multiplier));
    knobs["tile_f"] = {s.K / threads, 1, threads, 1};
    knobs["tile_y"] = default_four_way(s.P, 1, std::max<int64_t>(1, 32 / threads));
    knobs["tile_x"] = default_four_way(s.Q, 2, 8);
    return space.from_json({{"knobs", knobs}});
  }
  knobs["tile_f"] = default_four_way(s.K, 4, 8);
  knobs["tile_y"] = default_four_way(s.P, 1, 4);
  knobs["tile_x"] = default_four_way(s.Q, 2, 8);
  knobs["tile_rx"] = {1, s.S};
  // The largest input-channel step whose tiles fit; then the window's rows one at a time.
  for (int64_t ry : {s.R, int64_t{1}}) {
    knobs["tile_ry"] = {s.R / ry, ry};
    for (int64_t rc = 8; rc >= 1; --rc) {
      if (s.C % rc != 0) continue;
      knobs["tile_rc"] = {s.C / rc, rc};
      Config c = space.from_json({{"knobs", knobs}});
      if (space.is_valid(c)) return c;
    }
  }
  return space.from_json({{"knobs", knobs}});
}

Template gpu_conv_template(const std::string& op) {
  return Template{op + ".gpu", define_conv, apply_conv, default_conv};
}

}  // namespace

const Template& gpu_conv2d_template() {
  static const Template t = gpu_conv_template("conv2d");
  return t;
}

const Template& gpu_depthwise_conv2d_template() {
  static const Template t = gpu_conv_template("depthwise_conv2d");
  return t;
}

}  // namespace temper::schedule_space
