// Batch-norm folding: a graph pass that merges an inference BatchNormalization into the
// Conv before it. BN computes (x - mean) / sqrt(var + eps) * scale + B per output channel,
// an affine map of the conv's output, so with s = scale / sqrt(var + eps) the conv with
// weights W[m, ...] * s[m] and bias (b[m] - mean[m]) * s[m] + B[m] computes the same
// values; the folded weights and bias are new constants computed here on the host.
//
// A BatchNormalization folds when its X is the output of a Conv that nothing else reads
// and that is no graph output, the conv's weights and bias (if any) are constants, and
// BN's scale, B, mean and var are constants of the same floating dtype. The conv then
// writes BN's output (its name and its consumers stay), and the BN node goes.
//
// Expects a verified graph with inferred types; leaves one (remove_dead has run, so ids
// change).
#pragma once

#include <vector>

#include "compiler/graph/graph.h"

namespace temper::graph {

// An inference BatchNormalization as the per-channel affine map y = x * scale + shift:
// scale = gamma / sqrt(var + eps), shift = B - mean * scale. Its inputs 1-4 must be
// constants. The blocked layout (pass_nchwc_layout.h) runs a BN no conv absorbed this way.
struct BatchNormAffine {
  std::vector<double> scale, shift;
};
BatchNormAffine batch_norm_affine(const Graph& graph, const Node& bn);

// Returns how many BatchNormalization nodes were folded.
int fold_batch_norm(Graph& graph);

}  // namespace temper::graph
