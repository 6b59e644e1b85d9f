// The GEMM-family templates (matmul, batch_matmul, dense): the expert GEMM of
// ops::schedule_gemm_cpu -- B packed into NR-wide panels, an MR x NR register tile with k
// inside it, dense's bias and activation fused into the tile -- with its choices as knobs:
//
//   mr        rows of the register tile (1..16, at most M)
//   nr        columns of the register tile: 1, 2 or 4 vectors of the target's 32-bit
//             lanes, at most N; N itself when N is narrower than one vector
//   unroll_k  the k loop split by this (1, 2, 4 or 8 dividing K) and the inner part
//             unrolled (1: k whole)
//   pack_b    B's K x NR panel copied contiguously per panel, or read in place
//   parallel  the panels run on all threads, or on one
//   b_layout  where B is stored [.., N, K] (dense's weight, transpose_b=1): "KN", a
//             re-expression of the op whose stage "<B>_pack" transposes B into [.., K, N]
//             -- per panel under pack_b, in place of the panel copy, so the tile's vector
//             loop over N reads it contiguously; "panels" (dense only), the same with B
//             packed into [N/nr, K, nr], each panel contiguous, so that a single row tile
//             streams it (dense 1x1000x1280, weights cold: the "KN" B is read with a
//             stride of N floats, a page per row); or "NK", op.func itself, whose panel
//             copy keeps B's layout and the vector loop reads it with stride K. Where B
//             is a constant, the prepacked hook transposes it once instead: its GEMM
//             reads the [.., K, N] B like matmul's, panels copied under pack_b (at
//             dense 128x768x768, one thread: 2.8 ms with the copy, 2.9 without, 3.0
//             transposing per call); and for matmul's 2-D [K, N] B, "KN" (as stored)
//             or "panels" ([N/nr, K, nr], packed once where B is a model's weight:
//             onnxruntime's packed B; at 128x768x768, weights cold, within the noise of
//             "KN", 0.80 against 0.82 ms for the best of each)
//
// A config is valid when its accumulators, the B vectors of one k step and the A
// broadcast fit the vector registers (16 below AVX-512, 32 with it). The default config
// is GemmTiling::for_target's tile with the other knobs at GemmTiling's defaults --
// exactly what ops::schedule_cpu_default applies -- except for B's layout: dense's weight
// and matmul's [K, N] B in "panels", packed once, read without per-panel copies (the
// reasons and figures at default_gemm); matmul's B stored [N, K] transposed ("KN") when
// more than one row tile reads each panel (M > mr): 1.4x faster than "NK" at 8x1000x512
// and 3.5x at 128x768x768 (AVX2, one thread), while a panel read once costs more to
// transpose per call than to read strided (M <= 4: 8-15% slower).
#include "compiler/ops/cpu_schedules.h"
#include "compiler/ops/matmul.h"
#include "compiler/ops/shape.h"
#include "schedule_space/cpu_templates.h"
#include "schedule_space/templates/data_stage.h"
#include "schedule_space/templates/register_budget.h"

namespace temper::schedule_space {
namespace {

using nlohmann::json;

const int kRowChoices[] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16};
const int kUnrollChoices[] = {1, 2, 4, 8};

// B stored [.., N, K]: dense's weight, and B under transpose_b.
bool b_is_stored_transposed(const ops::Workload& w) {
  return w.op == "dense" || w.get_bool("transpose_b");
}

// Whether the config reads B repacked by a stage "<B>_pack" (pack_b): transposed, or in
// panels.
bool repacks_b(const Config& c, const ops::Workload& w) {
  if (b_is_stored_transposed(w)) return c.knob_string("b_layout") != "NK";
  return w.op == "matmul" && c.knob_string("b_layout") == "panels";
}

// The columns of one panel of B under b_layout=panels (the tile's nr); 0 for the other
// layouts.
int64_t panel_of(const Config& c) {
  return c.knob_string("b_layout") == "panels" ? c.knob_int("nr") : 0;
}

// The last two indices swapped.
std::vector<Expr> swap_last_two(std::vector<Expr> v) {
  std::swap(v[v.size() - 2], v[v.size() - 1]);
  return v;
}

// B repacked by a stage "<B>_pack": B stored [.., N, K] transposed into [.., K, N] (panel
// 0), or a 2-D B (stored [N, K] when transposed, else [K, N]) into [ceil(N/panel), K, panel]
// panels, zero past N.
te::Tensor pack_b(const te::Tensor& b, int64_t panel, bool transposed) {
  if (panel == 0) {
    return te::compute(
        swap_last_two(b.shape()), [&](const std::vector<Var>& v) { return b(swap_last_two(ops::as_exprs(v))); },
        b.name() + "_pack");
  }
  ops::Shape shape = ops::static_shape(b, "gemm");
  int64_t N = transposed ? shape[0] : shape[1], K = transposed ? shape[1] : shape[0];
  auto read = [&](const Expr& n, const Expr& k) { return transposed ? b(n, k) : b(k, n); };
  return te::compute(
      ops::shape_exprs({(N + panel - 1) / panel, K, panel}, "gemm"),
      [&](Var p, Var k, Var j) {
        Expr n = ops::times(p, panel) + j;
        if (N % panel == 0) return read(n, k);
        return select(n < ops::index_const(N), read(min(n, ops::index_const(N - 1)), k), make_const(b.dtype(), 0.0));
      },
      b.name() + "_pack");
}

// The op's output computed from B packed by pack_b, which the op's own definition reads
// through "<B>_view" (B's stored shape, inlined by the schedules).
te::Tensor gemm_of_packed_b(const ops::OpInstance& op, const ops::Workload& w, const te::Tensor& packed,
                            int64_t panel) {
  const te::Tensor& b = op.inputs[1];
  bool transposed = b_is_stored_transposed(w);
  te::Tensor view = te::compute(
      b.shape(),
      [&](const std::vector<Var>& v) {
        if (panel == 0) return packed(swap_last_two(ops::as_exprs(v)));
        const Var& n = transposed ? v[0] : v[1];
        const Var& k = transposed ? v[1] : v[0];
        return packed(floordiv(n, ops::index_const(panel)), k, floormod(n, ops::index_const(panel)));
      },
      b.name() + "_view");
  const te::Tensor& a = op.inputs[0];
  const std::string& name = op.outputs[0].name();
  if (w.op == "dense") {
    return ops::dense(a, view, op.inputs.size() > 2 ? op.inputs[2] : te::Tensor(), ops::dense_activation(w), name);
  }
  if (w.op == "matmul") return ops::matmul(a, view, w.get_bool("transpose_a"), transposed, name);
  return ops::batch_matmul(a, view, w.get_bool("transpose_a"), transposed, name);
}

// The op re-expressed with B packed on every call: the same parameters, shapes and name as
// op.func.
PrimFunc packed_b_func(const ops::OpInstance& op, const ops::Workload& w, int64_t panel) {
  std::vector<te::Tensor> args = op.inputs;
  args.push_back(gemm_of_packed_b(op, w, pack_b(op.inputs[1], panel, b_is_stored_transposed(w)), panel));
  return te::create_prim_func(args, op.func.name);
}

// packed_b_func with B's parameter replaced by the packed B.
PrimFunc prepacked_b_func(const ops::OpInstance& op, const ops::Workload& w, int64_t panel) {
  const te::Tensor& b = op.inputs[1];
  std::vector<te::Tensor> args = op.inputs;
  args[1] = te::placeholder(pack_b(b, panel, b_is_stored_transposed(w)).shape(), b.dtype(), b.name() + "_packed");
  args.push_back(gemm_of_packed_b(op, w, args[1], panel));
  return te::create_prim_func(args, op.func.name);
}

// (B, packed B): the packing packed_b_func does on every call, alone.
PrimFunc b_pack_func(const ops::OpInstance& op, const ops::Workload& w, int64_t panel) {
  const te::Tensor& b = op.inputs[1];
  return te::create_prim_func({b, pack_b(b, panel, b_is_stored_transposed(w))}, op.func.name + "_" + b.name() + "_pack");
}

// The reduction stage of out: out itself, or the stage its epilogue reads.
te::Tensor product_of(const te::Tensor& out) {
  if (out.op()->tag == "reduction") return out;
  for (const te::Tensor& t : out.op()->inputs) {
    if (t.op()->tag == "reduction") return t;
  }
  TEMPER_CHECK(false, "gemm template: ", out.name(), " has no reduction stage");
  return out;
}

void define_gemm(ConfigSpace& space, const ops::OpInstance&, const ops::Workload& w, const Target& target) {
  int64_t m = w.get_int("M");
  int64_t n = w.get_int("N");
  int64_t k = w.get_int("K");
  int lanes = vector_lanes(target);

  std::vector<json> rows;
  for (int mr : kRowChoices) {
    if (mr <= m) rows.emplace_back(mr);
  }
  space.define_knob("mr", rows);

  // Widths of 1, 2 or 4 vectors: LLVM splits a 3-vector value poorly (a 24-wide tile
  // ran at a tenth of the 16-wide one). Widths that leave a tail in N are kept, as the
  // default keeps them.
  std::vector<json> widths;
  for (int vectors : {1, 2, 4}) {
    if (vectors * lanes <= n) widths.emplace_back(vectors * lanes);
  }
  if (n < lanes) widths.emplace_back(n);
  space.define_knob("nr", widths);

  std::vector<json> unrolls;
  // decompose_reduction takes no tail in a reduction loop: only factors of K.
  for (int u : kUnrollChoices) {
    if (k % u == 0) unrolls.emplace_back(u);
  }
  space.define_knob("unroll_k", unrolls);
  space.define_knob("pack_b", {true, false});
  space.define_knob("parallel", {true, false});
  // Panels only for a 2-D B, which a model holds constant: dense's weight, and matmul's B
  // (a MatMul's weight, packed once at build time; an activation B is packed per call).
  if (b_is_stored_transposed(w)) {
    if (w.op == "dense") {
      space.define_knob("b_layout", {"KN", "NK", "panels"});
    } else {
      space.define_knob("b_layout", {"KN", "NK"});
    }
  } else if (w.op == "matmul") {
    space.define_knob("b_layout", {"KN", "panels"});
  }

  int registers = vector_registers(target);
  space.add_constraint(
      str("the mr x nr accumulators, the B vectors and the A broadcast fit the ", registers, " vector registers"),
      [lanes, registers](const Config& c) {
        return registers_used(c.knob_int("mr"), c.knob_int("nr"), lanes) <= registers;
      });
}

ops::GemmTiling tiling_of(const Config& c) {
  ops::GemmTiling t;
  t.mr = static_cast<int>(c.knob_int("mr"));
  t.nr = static_cast<int>(c.knob_int("nr"));
  t.k_unroll = static_cast<int>(c.knob_int("unroll_k"));
  t.pack_b = c["pack_b"].get<bool>();
  t.parallel = c["parallel"].get<bool>();
  return t;
}

// Schedules a function of packed_b_func's or prepacked_b_func's: B's view inlined, the
// expert GEMM with the stage "<B>_pack" (when there is one) in place of the panel copy.
void schedule_packed_b(Schedule& s, const Config& c, const ops::OpInstance& op, bool has_pack_stage) {
  const std::string& b = op.inputs[1].name();
  s.compute_inline(s.get_block(b + "_view"));
  std::optional<BlockRV> packing;
  if (has_pack_stage) packing = s.get_block(b + "_pack");
  std::string gemm = product_of(op.outputs[0]).name();
  std::string out = op.outputs[0].name();
  BlockRV epilogue = gemm == out ? BlockRV{} : s.get_block(out);
  // reads: the accumulator, A, then the repacked B.
  ops::schedule_gemm_cpu(s, s.get_block(gemm), 2, gemm == out ? nullptr : &epilogue, tiling_of(c),
                         packing ? &*packing : nullptr);
}

Schedule apply_gemm(const Config& c, const ops::OpInstance& op, const ops::Workload& w, const Target&) {
  if (!repacks_b(c, w)) return ops::schedule_gemm_op_cpu(op, tiling_of(c));
  Schedule s(packed_b_func(op, w, panel_of(c)));
  schedule_packed_b(s, c, op, /*has_pack_stage=*/true);
  return s;
}

std::optional<PrepackedSchedule> prepacked_gemm(const Config& c, const ops::OpInstance& op, const ops::Workload& w,
                                                const Target& target) {
  if (!repacks_b(c, w)) return std::nullopt;
  Schedule pack(b_pack_func(op, w, panel_of(c)));
  schedule_data_stage(pack, op.inputs[1].name() + "_pack", vector_lanes(target));
  Schedule compute(prepacked_b_func(op, w, panel_of(c)));
  schedule_packed_b(compute, c, op, /*has_pack_stage=*/false);
  return PrepackedSchedule{1, std::move(pack), std::move(compute)};
}

Config default_gemm(const ConfigSpace& space, const ops::OpInstance&, const ops::Workload& w, const Target& target) {
  ops::GemmTiling t = ops::GemmTiling::for_target(target, w.get_int("M"), w.get_int("N"));
  bool one_row_tile = w.get_int("M") <= t.mr;
  json knobs = {{"mr", t.mr}, {"nr", t.nr}, {"unroll_k", t.k_unroll}, {"pack_b", t.pack_b}, {"parallel", t.parallel}};
  // A 2-D B that a model holds constant -- dense's weight, a MatMul's [K, N] -- is packed
  // once at build time (the prepacked hook) into [N/nr, K, nr] panels that every row tile
  // streams contiguously, with no copy per panel. Read in place, each k step of a panel is
  // a row N floats further: at BERT's FFN (128x3072x768, AVX2 Zen 3, 2 threads) 8.5 ms as
  // [K, N] against 4.7 ms as panels, 1.1-1.3x faster at 128x768x768 and 32x768x768, and
  // no slower at 1024^3 and 512^3. Another B stored [N, K] is transposed per call, which
  // pays only when several row tiles read each panel.
  if (w.op == "dense" || (w.op == "matmul" && !b_is_stored_transposed(w))) {
    knobs["b_layout"] = "panels";
    knobs["pack_b"] = false;
  } else if (b_is_stored_transposed(w)) {
    knobs["b_layout"] = one_row_tile ? "NK" : "KN";
  }
  return space.from_json({{"knobs", knobs}});
}

Template gemm_template(const std::string& op) {
  return Template{op + ".cpu", define_gemm, apply_gemm, default_gemm, prepacked_gemm};
}

}  // namespace

const Template& matmul_template() {
  static const Template t = gemm_template("matmul");
  return t;
}

const Template& batch_matmul_template() {
  static const Template t = gemm_template("batch_matmul");
  return t;
}

const Template& dense_template() {
  static const Template t = gemm_template("dense");
  return t;
}

}  // namespace temper::schedule_space
