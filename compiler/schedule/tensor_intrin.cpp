#include "compiler/schedule/tensor_intrin.h"

namespace temper {
namespace {

Expr as_int32(const Expr& e) {
  return e.dtype() == DataType::int32() ? e : cast(DataType::int32(), e);
}

// C[MR, NR] += A[MR, K] * B[K, NR] in fp32, all row-major with leading dimensions
// lda, ldb, ldc; implemented by `symbol` in compiler/runtime/ukernels.cpp.
TensorIntrin sgemm_intrin(const std::string& name, int64_t mr, int64_t nr, const std::string& symbol) {
  DataType f32 = DataType::float32();
  DataType i32 = DataType::int32();
  Var k_extent("K");
  Buffer a("A", f32, {Expr(static_cast<int>(mr)), k_extent});
  Buffer b("B", f32, {k_extent, Expr(static_cast<int>(nr))});
  Buffer c("C", f32, {Expr(static_cast<int>(mr)), Expr(static_cast<int>(nr))});
  IterVar vi{Var("vi"), Range{make_const(i32, int64_t{0}), make_const(i32, mr)}, IterKind::Spatial};
  IterVar vj{Var("vj"), Range{make_const(i32, int64_t{0}), make_const(i32, nr)}, IterKind::Spatial};
  IterVar vk{Var("vk"), Range{make_const(i32, int64_t{0}), k_extent}, IterKind::Reduce};
  TensorIntrin intrin;
  intrin.name = name;
  intrin.iter_vars = {vi, vj, vk};
  intrin.operands = {c, a, b};
  intrin.body =
      store(c, load(c, {vi.var, vj.var}) + load(a, {vi.var, vk.var}) * load(b, {vk.var, vj.var}), {vi.var, vj.var});
  intrin.implement = [symbol](const TensorIntrinMatch& m) {
    const Buffer& c_buf = m.buffers[0];
    const Buffer& a_buf = m.buffers[1];
    const Buffer& b_buf = m.buffers[2];
    std::vector<Expr> args = {address_of(c_buf, m.origins[0]), address_of(a_buf, m.origins[1]),
                              address_of(b_buf, m.origins[2]), as_int32(m.extents[2]),
                              as_int32(a_buf->shape[1]),       as_int32(b_buf->shape[1]),
                              as_int32(c_buf->shape[1])};
    return evaluate(call_extern(DataType::int32(), symbol, args));
  };
  return intrin;
}

}  // namespace

const std::vector<TensorIntrin>& tensor_intrins() {
  static const std::vector<TensorIntrin> kIntrins = {
      sgemm_intrin("sgemm_6x32", 6, 32, "temper_ukernel_sgemm_6x32"),
      sgemm_intrin("sgemm_6x16", 6, 16, "temper_ukernel_sgemm_6x16"),
  };
  return kIntrins;
}

const TensorIntrin* find_tensor_intrin(const std::string& name) {
  for (const TensorIntrin& t : tensor_intrins()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

Expr address_of(const Buffer& buf, std::vector<Expr> indices) {
  return call_intrinsic(DataType::handle(), "address_of", {load(buf, std::move(indices))});
}

}  // namespace temper
