#include "compiler/ir/reduction_form.h"

#include "compiler/ir/structural_equal.h"

namespace temper {

std::optional<ReductionForm> match_reduction(const BlockNode* b) {
  auto* st = b->body.as<BufferStoreNode>();
  auto* init = b->init.as<BufferStoreNode>();
  if (!st || !init || !init->buffer.same_as(st->buffer) || init->indices.size() != st->indices.size()) {
    return std::nullopt;
  }
  for (size_t d = 0; d < st->indices.size(); ++d) {
    if (!structural_equal(init->indices[d], st->indices[d], /*map_vars=*/false)) return std::nullopt;
  }
  ReductionForm form{ReduceOp::Sum, st->buffer, st->indices, Expr(), init->value};
  Expr a;
  Expr b_;
  if (auto* n = st->value.as<AddNode>()) {
    form.op = ReduceOp::Sum, a = n->a, b_ = n->b;
  } else if (auto* n = st->value.as<MulNode>()) {
    form.op = ReduceOp::Prod, a = n->a, b_ = n->b;
  } else if (auto* n = st->value.as<MaxNode>()) {
    form.op = ReduceOp::Max, a = n->a, b_ = n->b;
  } else if (auto* n = st->value.as<MinNode>()) {
    form.op = ReduceOp::Min, a = n->a, b_ = n->b;
  } else {
    return std::nullopt;
  }
  auto is_acc = [&](const Expr& e) {
    auto* load = e.as<BufferLoadNode>();
    if (!load || !load->buffer.same_as(st->buffer)) return false;
    for (size_t d = 0; d < st->indices.size(); ++d) {
      if (!structural_equal(load->indices[d], st->indices[d], /*map_vars=*/false)) return false;
    }
    return true;
  };
  if (is_acc(a)) {
    form.rhs = b_;
  } else if (is_acc(b_)) {
    form.rhs = a;
  } else {
    return std::nullopt;
  }
  if (!structural_equal(form.identity, reduce_identity(form.op, st->buffer->dtype), /*map_vars=*/false)) {
    return std::nullopt;
  }
  return form;
}

}  // namespace temper
