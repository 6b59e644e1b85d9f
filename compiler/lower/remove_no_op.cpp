#include "compiler/lower/remove_no_op.h"

#include "compiler/ir/functor.h"
#include "compiler/lower/ir_util.h"

namespace temper {
namespace {

bool has_side_effects(const Expr& e) {
  bool found = false;
  post_order_visit(e, [&](const Node* n) {
    if (n->kind == NodeKind::Call && static_cast<const CallNode*>(n)->call_kind != CallKind::Pure) found = true;
  });
  return found;
}

bool accesses(const Stmt& s, const Buffer& b) {
  bool found = false;
  post_order_visit(s, [&](const Node* n) {
    if (n->kind == NodeKind::BufferLoad && static_cast<const BufferLoadNode*>(n)->buffer.same_as(b)) found = true;
    if (n->kind == NodeKind::BufferStore && static_cast<const BufferStoreNode*>(n)->buffer.same_as(b)) found = true;
  });
  return found;
}

class NoOpRemover : public IRMutator {
 public:
  using IRMutator::visit;

  Stmt visit(const EvaluateNode* op, const Stmt& self) override {
    return is_no_op(self) || has_side_effects(op->value) ? self : no_op();
  }

  Stmt visit(const BufferStoreNode* op, const Stmt& self) override {
    return loads_stored_element(op->value, op) ? no_op() : self;
  }

  Stmt visit(const ForNode* op, const Stmt& self) override {
    Stmt s = IRMutator::visit(op, self);
    return is_no_op(s.as<ForNode>()->body) ? no_op() : s;
  }

  Stmt visit(const LetStmtNode* op, const Stmt& self) override {
    Stmt s = IRMutator::visit(op, self);
    auto* let = s.as<LetStmtNode>();
    return is_no_op(let->body) && !has_side_effects(let->value) ? no_op() : s;
  }

  Stmt visit(const AllocateNode* op, const Stmt& self) override {
    Stmt body = mutate(op->body);
    if (is_no_op(body) || !accesses(body, op->buffer)) return body;
    return body.same_as(op->body) ? self : allocate(op->buffer, body);
  }

  Stmt visit(const IfThenElseNode* op, const Stmt& self) override {
    Stmt then_case = mutate(op->then_case);
    Stmt else_case = op->else_case.defined() ? mutate(op->else_case) : Stmt();
    if (else_case.defined() && is_no_op(else_case)) else_case = Stmt();
    if (is_no_op(then_case)) {
      if (!else_case.defined()) return has_side_effects(op->condition) ? evaluate(op->condition) : no_op();
      return if_then_else(!op->condition, else_case);
    }
    if (then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return self;
    return if_then_else(op->condition, then_case, else_case);
  }

  Stmt visit(const SeqStmtNode* op, const Stmt& self) override { return mutate_seq_without_no_ops(*this, op, self); }
};

}  // namespace

PrimFunc remove_no_op(const PrimFunc& f) {
  return NoOpRemover().mutate(f);
}

}  // namespace temper
