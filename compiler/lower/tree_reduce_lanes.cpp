#include "compiler/lower/tree_reduce_lanes.h"

#include <optional>

#include "compiler/ir/functor.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/ir/substitute.h"
#include "compiler/lower/ir_util.h"

namespace temper {
namespace {

// The loop's parts, when it has the form tree_reduce_lanes.h describes.
struct LaneReduction {
  NodeKind op;
  Buffer acc;
  Expr acc_index;
  Stmt init;  // null when the loop has none
  Buffer part;
  Expr part_base;
};

bool is_reduce_kind(NodeKind k) {
  return k == NodeKind::Add || k == NodeKind::Max || k == NodeKind::Min;
}

Expr combine(NodeKind op, Expr a, Expr b) {
  return make_binary(op, std::move(a), std::move(b));
}

// part_base when e is part[base + v] (or part[v + base], part[v]), with base free of v.
std::optional<Expr> lane_offset(const Expr& index, const Var& v) {
  if (index.same_as(v)) return make_const(index.dtype(), int64_t{0});
  if (auto* add = index.as<AddNode>()) {
    if (add->b.same_as(v) && !uses_var(add->a, v)) return add->a;
    if (add->a.same_as(v) && !uses_var(add->b, v)) return add->b;
  }
  return std::nullopt;
}

std::optional<LaneReduction> match(const ForNode* loop) {
  const int64_t* extent = as_const_int(loop->extent);
  if (loop->for_kind != ForKind::Serial || !is_zero(loop->min) || !extent || *extent < 4 || *extent > 64 ||
      (*extent & (*extent - 1)) != 0) {
    return std::nullopt;
  }
  const Var& v = loop->loop_var;
  std::vector<Stmt> body = {loop->body};
  if (auto* sq = loop->body.as<SeqStmtNode>()) body = sq->seq;
  if (body.empty() || body.size() > 2) return std::nullopt;
  Stmt init;
  if (body.size() == 2) {
    auto* guard = body[0].as<IfThenElseNode>();
    if (!guard || guard->else_case.defined()) return std::nullopt;
    auto* eq = guard->condition.as<EQNode>();
    if (!eq || !eq->a.same_as(v) || !is_zero(eq->b)) return std::nullopt;
    init = guard->then_case;
    if (uses_var(init, v)) return std::nullopt;
  }
  auto* update = body.back().as<BufferStoreNode>();
  if (!update || update->indices.size() != 1 || !update->value.dtype().is_scalar()) return std::nullopt;
  // Indices that read no buffer: the tree reads them once, where the loop read them per step.
  const Expr& acc_index = update->indices[0];
  if (uses_var(acc_index, v) || reads_buffer(acc_index) || !is_reduce_kind(update->value->kind)) {
    return std::nullopt;
  }
  if (init.defined()) {
    auto* init_store = init.as<BufferStoreNode>();
    if (!init_store || !init_store->buffer.same_as(update->buffer)) return std::nullopt;
  }
  auto [a, b] = binary_operands(update->value);
  auto is_acc = [&](const Expr& e) {
    auto* l = e.as<BufferLoadNode>();
    return l && l->buffer.same_as(update->buffer) && l->indices.size() == 1 &&
           structural_equal(l->indices[0], acc_index, /*map_vars=*/false);
  };
  if (!a.defined()) return std::nullopt;
  if (!is_acc(a)) std::swap(a, b);
  if (!is_acc(a)) return std::nullopt;
  auto* element = b.as<BufferLoadNode>();
  if (!element || element->indices.size() != 1 || element->buffer.same_as(update->buffer)) return std::nullopt;
  std::optional<Expr> base = lane_offset(element->indices[0], v);
  if (!base || reads_buffer(*base)) return std::nullopt;
  return LaneReduction{update->value->kind, update->buffer, acc_index, init, element->buffer, *base};
}

Stmt tree(const LaneReduction& r, int64_t lanes) {
  DataType t = r.acc->dtype;
  int half = static_cast<int>(lanes / 2);
  Buffer partial(r.part->name + "_tree", t, {make_const(DataType::int32(), int64_t{half})}, "local");
  auto slice = [&](const Buffer& b, Expr base, int64_t offset, int n) {
    Expr start = base + make_const(base.dtype(), offset);
    return n == 1 ? load(b, {start}) : load(b, {ramp(start, make_const(base.dtype(), int64_t{1}), n)});
  };
  Expr zero = make_const(DataType::int32(), int64_t{0});
  auto at = [&](int n) { return n == 1 ? zero : ramp(zero, make_const(DataType::int32(), int64_t{1}), n); };
  std::vector<Stmt> steps;
  steps.push_back(store(
      partial, combine(r.op, slice(r.part, r.part_base, 0, half), slice(r.part, r.part_base, half, half)), {at(half)}));
  for (int n = half / 2; n >= 1; n /= 2) {
    steps.push_back(store(partial, combine(r.op, slice(partial, zero, 0, n), slice(partial, zero, n, n)), {at(n)}));
  }
  steps.push_back(store(r.acc, combine(r.op, load(r.acc, {r.acc_index}), load(partial, {zero})), {r.acc_index}));
  Stmt reduced = allocate(partial, seq(steps));
  return r.init.defined() ? seq({r.init, reduced}) : reduced;
}

class LaneTreeRewriter : public IRMutator {
 public:
  using IRMutator::visit;
  Stmt visit(const ForNode* op, const Stmt& self) override {
    if (std::optional<LaneReduction> r = match(op)) return tree(*r, *as_const_int(op->extent));
    return IRMutator::visit(op, self);
  }
};

}  // namespace

PrimFunc tree_reduce_lanes(const PrimFunc& f) {
  return LaneTreeRewriter().mutate(f);
}

}  // namespace temper
