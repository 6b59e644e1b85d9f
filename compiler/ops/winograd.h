// Winograd's minimal filtering F(m x m, 3 x 3) for a 3x3, stride-1 convolution in the
// blocked layout (nchwc.h), as Lavin & Gray describe it and as NNPACK and oneDNN's
// winograd kernels run it: the output is cut into m x m tiles; each tile's
// (m+2) x (m+2) input patch d becomes V = Bt d B, the weight g of every (k, c) pair
// becomes U = G g Gt (once, when the graph is built), and the tile's output is
// Y = At [sum over c of U (.) V] A. The sum over c is alpha^2 = (m+2)^2 independent
// GEMMs of tiles x C by C x K -- (m+2)^2 / m^2 multiplications per output pixel and
// channel pair instead of 9: 2.25x fewer for m = 4, 1.78x for m = 2.
//
//   conv2d_winograd_nchwc  input [N, Cb, H, W, cb] by a transformed weight
//                          [a, a, Kb, Cb, cb, kb] (a = m + 2) into [N, Kb, P, Q, kb].
//                          Stages: "<name>_pad" (the input padded out to whole tiles),
//                          "<name>_input" (V [a, a, T, Cb, cb], T = N x tiles, reducing
//                          over Bt's terms), "<name>_gemm" (M [a, a, T, Kb, kb], reducing
//                          over (rco, rci)) and "<name>" (the output, reducing over At's
//                          terms).
//
// The transforms' coefficients are select chains over (row, term) indices: a schedule
// that unrolls those loops leaves literal constants and fixed offsets, and one that does
// not still computes the right result. Every row is read as its own nonzero terms, not
// as a dense row of the matrix, so an unrolled transform does only the work it must.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ops/window.h"
#include "compiler/runtime/ndarray.h"
#include "compiler/te/te.h"

namespace temper::ops {

// The matrices of F(m x m, 3 x 3), row-major: Bt [a, a], G [a, 3], At [m, a].
struct WinogradMatrices {
  int m = 0, alpha = 0;
  std::vector<double> Bt, G, At;
};

// m = 2 or m = 4; anything else is a UserError naming the choices.
const WinogradMatrices& winograd_matrices(int64_t m);

// The tiles along an output extent.
inline int64_t winograd_tiles(int64_t extent, int64_t m) {
  return (extent + m - 1) / m;
}

te::Tensor conv2d_winograd_nchwc(const te::Tensor& input, const te::Tensor& weight, const Padding2d& padding,
                                 int64_t m, const std::string& name = "conv2d_winograd_nchwc");

// A conv weight [K, C, 3, 3] (OIHW) as U [a, a, ceil(K/b), ceil(C/b), b, b], zero where
// k >= K or c >= C.
NDArray pack_winograd_weight_nchwc(const NDArray& weight, int64_t m, int64_t block);

}  // namespace temper::ops
