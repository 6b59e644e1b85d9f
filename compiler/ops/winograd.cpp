#include "compiler/ops/winograd.h"

#include "compiler/ops/nchwc.h"
#include "compiler/ops/shape.h"

namespace temper::ops {

namespace {

WinogradMatrices make_f2() {
  WinogradMatrices w;
  w.m = 2;
  w.alpha = 4;
  w.Bt = {1, 0, -1, 0,  //
          0, 1, 1, 0,   //
          0, -1, 1, 0,  //
          0, 1, 0, -1};
  w.G = {1, 0, 0,         //
         0.5, 0.5, 0.5,   //
         0.5, -0.5, 0.5,  //
         0, 0, 1};
  w.At = {1, 1, 1, 0,  //
          0, 1, -1, -1};
  return w;
}

// The interpolation points 0, 1, -1, 2, -2 and infinity.
WinogradMatrices make_f4() {
  WinogradMatrices w;
  w.m = 4;
  w.alpha = 6;
  w.Bt = {4, 0, -5, 0, 1, 0,    //
          0, -4, -4, 1, 1, 0,   //
          0, 4, -4, -1, 1, 0,   //
          0, -2, -1, 2, 1, 0,   //
          0, 2, -1, -2, 1, 0,   //
          0, 4, 0, -5, 0, 1};
  w.G = {1.0 / 4, 0, 0,                     //
         -1.0 / 6, -1.0 / 6, -1.0 / 6,      //
         -1.0 / 6, 1.0 / 6, -1.0 / 6,       //
         1.0 / 24, 1.0 / 12, 1.0 / 6,       //
         1.0 / 24, -1.0 / 12, 1.0 / 6,      //
         0, 0, 1};
  w.At = {1, 1, 1, 1, 1, 0,   //
          0, 1, -1, 2, -2, 0,  //
          0, 1, 1, 4, 4, 0,    //
          0, 1, -1, 8, -8, 1};
  return w;
}

// A transform matrix's rows as their nonzero terms, each row padded to the longest with
// terms of coefficient 0 (reading the row's first index, so that the read stays in the
// patch): the only terms of coefficient 0, which the reduction's condition leaves out.
struct SparseRows {
  int width = 0;
  std::vector<std::vector<int64_t>> index;
  std::vector<std::vector<double>> coef;
};

SparseRows sparse_rows(const std::vector<double>& matrix, int rows, int cols) {
  SparseRows s;
  s.index.resize(rows);
  s.coef.resize(rows);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      double v = matrix[r * cols + c];
      if (v == 0) continue;
      s.index[r].push_back(c);
      s.coef[r].push_back(v);
    }
    s.width = std::max<int>(s.width, static_cast<int>(s.index[r].size()));
  }
  for (int r = 0; r < rows; ++r) {
    while (static_cast<int>(s.index[r].size()) < s.width) {
      s.index[r].push_back(s.index[r][0]);
      s.coef[r].push_back(0);
    }
  }
  return s;
}

// table[row][term] as a select chain over key = row * width + term, a literal once the
// loops binding row and term are unrolled.
template <typename T>
Expr lookup(const std::vector<std::vector<T>>& table, const Expr& row, const Expr& term, DataType dtype) {
  int width = static_cast<int>(table[0].size());
  std::vector<T> flat;
  for (const std::vector<T>& r : table) flat.insert(flat.end(), r.begin(), r.end());
  Expr key = times(row, width) + term;
  Expr result = make_const(dtype, static_cast<double>(flat.back()));
  for (int i = static_cast<int>(flat.size()) - 2; i >= 0; --i) {
    if (flat[i] == flat.back()) continue;  // the chain's default answers this key
    result = select(key == index_const(i), make_const(dtype, static_cast<double>(flat[i])), result);
  }
  return result;
}

}  // namespace

const WinogradMatrices& winograd_matrices(int64_t m) {
  static const WinogradMatrices f2 = make_f2(), f4 = make_f4();
  if (m == 2) return f2;
  if (m == 4) return f4;
  throw UserError(str("Winograd tile ", m, " is not one Temper has: F(2x2, 3x3) (tile 2) or F(4x4, 3x3) (tile 4)"));
}

te::Tensor conv2d_winograd_nchwc(const te::Tensor& input, const te::Tensor& weight, const Padding2d& padding,
                                 int64_t m, const std::string& name) {
  const std::string op = "conv2d_winograd_nchwc";
  const WinogradMatrices& mat = winograd_matrices(m);
  const int64_t a = mat.alpha;
  check_rank(input, 5, op, "the input ([N, C/cb, H, W, cb])");
  check_rank(weight, 6, op, "the transformed weight ([a, a, K/kb, C/cb, cb, kb])");
  check_same_dtype(input, weight, op);
  Shape x = static_shape(input, op);
  Shape w = static_shape(weight, op);
  int64_t N = x[0], Cb = x[1], H = x[2], W = x[3], cb = x[4];
  if (w[0] != a || w[1] != a || w[3] != Cb || w[4] != cb) {
    throw UserError(str(op, ": the transformed weight ", shape_str(w), " does not read the input ", shape_str(x),
                        " with tile ", m, " (it must be [", a, ", ", a, ", K/kb, ", Cb, ", ", cb, ", kb])"));
  }
  if (padding.top < 0 || padding.left < 0 || padding.bottom < 0 || padding.right < 0) {
    throw UserError(str(op, ": negative padding"));
  }
  int64_t Kb = w[2], kb = w[5];
  int64_t P = H + padding.top + padding.bottom - 2, Q = W + padding.left + padding.right - 2;
  if (P <= 0 || Q <= 0) {
    throw UserError(str(op, ": the 3x3 kernel is larger than the padded input ", H + padding.top + padding.bottom, "x",
                        W + padding.left + padding.right));
  }
  int64_t TH = winograd_tiles(P, m), TW = winograd_tiles(Q, m), T = N * TH * TW;

  // Padded out to whole tiles: the last tiles' patches read zeros past the image.
  Padding2d whole = padding;
  whole.bottom = TH * m + 2 - H - padding.top;
  whole.right = TW * m + 2 - W - padding.left;
  te::Tensor padded = pad_spatial(input, Layout::NCHW, whole, 0.0, name + "_pad");

  DataType dt = input.dtype();
  SparseRows bt = sparse_rows(mat.Bt, static_cast<int>(a), static_cast<int>(a));
  SparseRows at = sparse_rows(mat.At, static_cast<int>(m), static_cast<int>(a));

  // V[e, f, t, co, ci] = sum over Bt's terms of row e and of row f: Bt d B.
  IterVar ku = te::reduce_axis({0, index_const(bt.width)}, "ku");
  IterVar kv = te::reduce_axis({0, index_const(bt.width)}, "kv");
  te::Tensor v = te::compute(
      shape_exprs({a, a, T, Cb, cb}, op),
      [&](const std::vector<Var>& i) {
        const Var &e = i[0], &f = i[1], &t = i[2], &co = i[3], &ci = i[4];
        Expr n = floordiv(t, index_const(TH * TW));
        Expr ty = floormod(floordiv(t, index_const(TW)), index_const(TH));
        Expr tx = floormod(t, index_const(TW));
        Expr row = times(ty, m) + lookup(bt.index, e, ku, DataType::int32());
        Expr col = times(tx, m) + lookup(bt.index, f, kv, DataType::int32());
        Expr coef = lookup(bt.coef, e, ku, dt) * lookup(bt.coef, f, kv, dt);
        return te::sum(coef * padded(n, co, row, col, ci), {ku, kv}, coef != make_const(dt, 0.0));
      },
      name + "_input");

  // M[e, f, t, ko, ki] = sum over c of V[e, f, t, c] U[e, f, ko, c, ki]: a GEMM per (e, f).
  IterVar rco = te::reduce_axis({0, index_const(Cb)}, "rco");
  IterVar rci = te::reduce_axis({0, index_const(cb)}, "rci");
  te::Tensor gemm = te::compute(
      shape_exprs({a, a, T, Kb, kb}, op),
      [&](Var e, Var f, Var t, Var ko, Var ki) {
        return te::sum(v(e, f, t, rco, rci) * weight(e, f, ko, rco, rci, ki), {rco, rci});
      },
      name + "_gemm");

  // Y[n, ko, p, q, ki] = sum over At's terms of rows p % m and q % m: At M A.
  IterVar lu = te::reduce_axis({0, index_const(at.width)}, "lu");
  IterVar lv = te::reduce_axis({0, index_const(at.width)}, "lv");
  return te::compute(
      shape_exprs({N, Kb, P, Q, kb}, op),
      [&](Var n, Var ko, Var p, Var q, Var ki) {
        Expr i = floormod(p, index_const(m)), j = floormod(q, index_const(m));
        Expr t = (times(n, TH) + floordiv(p, index_const(m))) * index_const(TW) + floordiv(q, index_const(m));
        Expr e = lookup(at.index, i, lu, DataType::int32());
        Expr f = lookup(at.index, j, lv, DataType::int32());
        Expr coef = lookup(at.coef, i, lu, dt) * lookup(at.coef, j, lv, dt);
        return te::sum(coef * gemm(e, f, t, ko, ki), {lu, lv}, coef != make_const(dt, 0.0));
      },
      name);
}

NDArray pack_winograd_weight_nchwc(const NDArray& weight, int64_t m, int64_t block) {
  const WinogradMatrices& mat = winograd_matrices(m);
  const Shape& s = weight.shape();
  if (weight.dtype() != DataType::float32()) {
    throw UserError(str("the conv weight is ", weight.dtype(), "; the Winograd transform takes float32"));
  }
  if (s.size() != 4 || s[2] != 3 || s[3] != 3) {
    throw UserError(str("the conv weight ", shape_str(s), " is not [K, C, 3, 3]: Winograd takes 3x3 filters"));
  }
  int64_t K = s[0], C = s[1], a = mat.alpha;
  int64_t Kb = channel_blocks(K, block), Cb = channel_blocks(C, block);
  NDArray out = NDArray::zeros({a, a, Kb, Cb, block, block}, DataType::float32());
  const float* src = weight.data_as<float>();
  float* dst = out.data_as<float>();
  for (int64_t k = 0; k < K; ++k) {
    for (int64_t c = 0; c < C; ++c) {
      const float* g = src + (k * C + c) * 9;
      double gg[6][3];  // G g, [a, 3]
      for (int64_t e = 0; e < a; ++e) {
        for (int col = 0; col < 3; ++col) {
          double acc = 0;
          for (int r = 0; r < 3; ++r) acc += mat.G[e * 3 + r] * g[r * 3 + col];
          gg[e][col] = acc;
        }
      }
      for (int64_t e = 0; e < a; ++e) {
        for (int64_t f = 0; f < a; ++f) {
          double u = 0;  // (G g Gt)[e, f]
          for (int col = 0; col < 3; ++col) u += gg[e][col] * mat.G[f * 3 + col];
          int64_t at = ((((e * a + f) * Kb + k / block) * Cb + c / block) * block + c % block) * block + k % block;
          dst[at] = static_cast<float>(u);
        }
      }
    }
  }
  return out;
}

}  // namespace temper::ops
