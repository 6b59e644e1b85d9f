// The blocked layout chosen for the graph, not per op (onnxruntime's NCHWc transformer,
// TVM's AlterOpLayout): convolutions and what runs between them keep their activations in
// NCHW[b]c (ops/nchwc.h), and conversions happen only where a value must be plain.
//
//   Conv (2-D, float32, constant weight; groups 1, depthwise with one filter per
//   channel, or groups lined up with the blocks: ops::nchwc_block_groups, at most 4
//   groups per block)             -> NchwcConv / NchwcDepthwiseConv, weight and bias
//                                    packed here, once; a 3x3 stride-1 conv on a map of
//                                    enough tiles -> NchwcWinogradConv (ops/winograd.h),
//                                    its weight transformed here. A conv over fewer channels than a
//                                    block whose input is plain (a stem over an RGB image)
//                                    reads it as it is (in_block 1): no conversion.
//   Relu, Clip, Sigmoid, Tanh, Gelu, Erf, Identity, the hard and leaky activations, Elu,
//   Selu, Celu, Mish, Softsign, Neg, Abs on a blocked value
//                                 -> the same op on the blocked array
//   Add, Sub, Mul of two 4-D values of one channel count, one of them blocked, the other
//   dimensions equal or broadcast (a squeeze-excite scale [N, C, 1, 1] times its map), or
//   of a blocked value and a scalar
//                                 -> the same op on blocked arrays
//   MaxPool, AveragePool (2-D), GlobalAveragePool on a blocked value
//                                 -> NchwcMaxPool, NchwcAveragePool, NchwcGlobalAveragePool
//   Concat over the channels of 4-D values, one of them blocked, each of whole blocks
//                                 -> Concat over the block axis of the blocked arrays
//   BatchNormalization (constant parameters; one no conv absorbed) on a blocked value
//                                 -> Mul and Add by its per-channel scale and shift, blocked
//   anything else, and the graph's outputs
//                                 -> read the plain value: a ReorderFromNchwc where only
//                                    the blocked one exists (once per value)
//
// The blocked ops keep the tail lanes of a block (channels past C) harmless: the packed
// weights are 0 there, so whatever an activation makes of the 0 that a conv or a
// conversion writes never reaches a real channel. Ops that could make it Inf or NaN (Div,
// Pow, Sqrt, Log) are not among the blocked ones.
//
// Plain values keep their names (graph outputs, values read by plain ops); a blocked one
// is named "<value>_nchwc".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/target/target.h"

namespace temper::graph {

struct LayoutReport {
  int64_t block = 0;        // 0: the graph was left in NCHW
  int blocked_convs = 0;    // convs now in the blocked layout
  // One entry per conversion the graph now runs: "into NCHW16c for 'conv1'" or
  // "out of NCHW16c for 'Flatten_12' (Flatten)", "... for output 'logits'".
  std::vector<std::string> conversions;
};

// How a build lays out the activations of its convs: in a blocked layout, or NCHW
// throughout -- each conv then packs and unpacks around itself (the conv2d template's
// NCHWc config) -- or blocked with every conv direct, no Winograd kernel (BlockedDirect:
// for a comparison, or where Winograd's rounding, about 1e-5 of the outputs' magnitude, is
// too much). The block of a blocked layout is fixed by the user (`--layout nchw8c`) or left
// open (block 0): the target's vector of lanes without a log, the block whose tuned tasks
// the log estimates fastest with one (search/layout_from_log.h).
// `--layout nchwc|nchw8c|nchw16c|nchwc-direct|nchw8c-direct|nchw16c-direct|nchw` on the CLI.
struct LayoutChoice {
  enum Kind { Blocked, BlockedDirect, Nchw };
  Kind kind = Blocked;
  int64_t block = 0;  // the blocked kinds' lanes per block; 0: open (nchwc_block_for)

  LayoutChoice(Kind kind = Blocked, int64_t block = 0) : kind(kind), block(block) {}  // NOLINT: a Kind is a choice
  bool blocked() const { return kind != Nchw; }
  // The CLI's name: "nchwc", "nchw8c-direct", "nchw".
  std::string to_string() const;
  // The activations' layout, as plans and reports name it: "NCHW16c", "NCHW" (block 0).
  std::string activations() const;
};

// The blocks a user may fix, in float32 lanes: one AVX2 vector, one AVX-512 vector.
constexpr int64_t kNchwcBlocks[] = {8, 16};

// "nchwc", "nchw16c", "nchw8c-direct", ...; UserError naming the accepted values otherwise.
LayoutChoice parse_layout_choice(const std::string& text);

// The block a build for target uses when it has no log to choose by: the block the layout
// fixes, else one vector of float32 lanes on a CPU (16 with AVX-512, 8 with AVX2), so that
// every conv of the graph agrees on it; 0 (stay NCHW) for GPU targets, CPUs without vectors
// and LayoutChoice::Nchw. UserError for a fixed block of more than two of target's vectors.
int64_t nchwc_block_for(const Target& target, LayoutChoice layout = LayoutChoice::Blocked);

// The blocks tuning compares and a build with a log chooses among, the default
// (nchwc_block_for) first: the fixed block, or with the block open on a CPU of 8 or 16
// lanes both 8 and 16 (on Zen 4, whose AVX-512 units are 256 bits wide, and on AVX2 CPUs,
// where a block of 16 is two vectors, either may win; a channel count of 24 fills blocks
// of 8 only); {0} where the graph stays NCHW.
std::vector<int64_t> nchwc_block_candidates(const Target& target, LayoutChoice layout = LayoutChoice::Blocked);

// Rewrites graph (verified, types inferred) into the blocked layout with `block` lanes;
// leaves it as it is when no conv qualifies. Expects optimize_graph's earlier passes to
// have run (a BatchNormalization after a conv is then its bias). winograd: 3x3 stride-1
// convs that qualify take Winograd's kernel.
LayoutReport convert_to_nchwc(Graph& graph, int64_t block, bool winograd = true);

}  // namespace temper::graph
