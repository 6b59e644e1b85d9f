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
//
// A config is valid when its accumulators, the B vectors of one k step and the A
// broadcast fit the vector registers (16 below AVX-512, 32 with it). The default config
// is GemmTiling::for_target's tile with the other knobs at GemmTiling's defaults: exactly
// what ops::schedule_cpu_default applies.
#include "compiler/ops/cpu_schedules.h"
#include "schedule_space/cpu_templates.h"
#include "schedule_space/templates/register_budget.h"

namespace temper::schedule_space {
namespace {

using nlohmann::json;

const int kRowChoices[] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16};
const int kUnrollChoices[] = {1, 2, 4, 8};

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

Schedule apply_gemm(const Config& c, const ops::OpInstance& op, const ops::Workload&, const Target&) {
  return ops::schedule_gemm_op_cpu(op, tiling_of(c));
}

Config default_gemm(const ConfigSpace& space, const ops::OpInstance&, const ops::Workload& w, const Target& target) {
  ops::GemmTiling t = ops::GemmTiling::for_target(target, w.get_int("M"), w.get_int("N"));
  return space.from_json(
      {{"knobs",
        {{"mr", t.mr}, {"nr", t.nr}, {"unroll_k", t.k_unroll}, {"pack_b", t.pack_b}, {"parallel", t.parallel}}}});
}

Template gemm_template(const std::string& op) {
  return Template{op + ".cpu", define_gemm, apply_gemm, default_gemm};
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
